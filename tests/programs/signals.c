/* Signal-heavy: two threads malloc/free in a loop while a 200 µs interval
 * timer (SIGALRM) and a third thread's kill(SIGUSR1) storm interrupt them;
 * the handlers only count. Exits 0 when both kinds of signal arrived.
 * usage: signals [MS=1500] */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static atomic_long alarms, usr1s;
static atomic_int stop;

static void on_alarm(int sig) { (void)sig; atomic_fetch_add(&alarms, 1); }
static void on_usr1(int sig) { (void)sig; atomic_fetch_add(&usr1s, 1); }

static void *churn(void *arg) {
    unsigned seed = (unsigned)(size_t)arg;
    void *keep[256] = {0};
    while (!atomic_load(&stop)) {
        seed = seed * 1103515245u + 12345u;
        unsigned i = (seed >> 8) % 256;
        free(keep[i]);
        keep[i] = malloc(16 + (seed >> 4) % 4096);
        if (keep[i]) memset(keep[i], 1, 16);
        if (i == 0) usleep(20); /* busy, but leave the machine some air */
    }
    for (int i = 0; i < 256; i++) free(keep[i]);
    return NULL;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000L;
}

static void *storm(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        kill(getpid(), SIGUSR1);
        usleep(100);
    }
    return NULL;
}

int main(int argc, char **argv) {
    long ms = argc > 1 ? atol(argv[1]) : 1500;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    struct itimerval every = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &every, NULL);
    pthread_t t[3];
    pthread_create(&t[0], NULL, churn, (void *)1);
    pthread_create(&t[1], NULL, churn, (void *)2);
    pthread_create(&t[2], NULL, storm, NULL);
    long long deadline = now_ms() + ms;
    while (now_ms() < deadline) { /* each signal cuts nanosleep short */
        struct timespec nap = {0, 1000000L};
        nanosleep(&nap, NULL);
    }
    atomic_store(&stop, 1);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    return atomic_load(&alarms) > 0 && atomic_load(&usr1s) > 0 ? 0 : 1;
}
