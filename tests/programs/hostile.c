/* Programs that are hostile to an LD_PRELOAD library with a thread of its
 * own: each mode does one thing real daemons, launchers and runtimes do,
 * prints one deterministic line and exits with a status of its own. The
 * hostile-programs suite (tests/e2e/hostile.rs) runs each mode with and
 * without the heap probe and requires the same status and output.
 *
 *   threads-setuid  4 threads allocating, then setgroups/setresgid/setresuid
 *                   to nobody (a daemon dropping privileges at run time)
 *   keepcaps        PR_SET_KEEPCAPS, setresuid, capset, setresgid: the order
 *                   setpriv and capability-keeping launchers use
 *   closefds        counts the descriptors it inherited, closes 3..1023,
 *                   and a forked child counts its own
 *   clearenv        clearenv(), then a shell child prints its LD_PRELOAD
 *   forks N         N short children exiting with i % 7; prints the sum
 *   thread-exit     a secondary thread calls exit(3) while main sleeps
 *   exit            _exit(7)
 *   abort           abort()
 *   seccomp         a filter that kills the process on any system call
 *                   but a few, then 300 ms of work and exit(0)
 *   unshare         unshare(CLONE_NEWUSER), which refuses a multithreaded
 *                   caller; prints its result
 *   fork-in-handler fork() from a SIGALRM handler; the child exits 5
 *   fork-setgid N   forks N children one after another; each calls
 *                   setgid(getgid()) (a no-op credential call, as a
 *                   pre-forking server's workers make) and idles 300 ms */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOBODY 65534

static volatile int stop;

static void *churn(void *arg) {
    (void)arg;
    while (!stop) free(malloc(64 + (size_t)(rand() % 4096)));
    return NULL;
}

static void nap_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int threads_setuid(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, churn, NULL);
    nap_ms(100);
    if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY)) {
        printf("drop failed: %s\n", strerror(errno));
        return 1;
    }
    nap_ms(100);
    stop = 1;
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    printf("uid=%d gid=%d\n", (int)getuid(), (int)getgid());
    return 0;
}

static int keepcaps(void) {
    nap_ms(60); /* let a probe thread start and poll */
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return 2;
    if (setresuid(NOBODY, NOBODY, NOBODY) != 0) return 3;
    /* The uid change cleared the effective set; raise it from the permitted
     * set, which KEEPCAPS kept, as a raw system call. */
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &header, data) != 0) return 4;
    data[0].effective = data[0].permitted;
    data[1].effective = data[1].permitted;
    if (syscall(SYS_capset, &header, data) != 0) return 5;
    nap_ms(60);
    if (setresgid(NOBODY, NOBODY, NOBODY) != 0) {
        printf("setresgid failed: %s\n", strerror(errno));
        return 6;
    }
    printf("uid=%d gid=%d\n", (int)getuid(), (int)getgid());
    return 0;
}

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0, own = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd > 2 && fd != own) n++;
    }
    closedir(d);
    return n;
}

static int closefds(void) {
    nap_ms(60);
    printf("inherited beyond stdio: %d\n", count_fds());
    for (int fd = 3; fd < 1024; fd++) close(fd);
    nap_ms(60);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        printf("child beyond stdio: %d\n", count_fds());
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

static int clear_env(void) {
    clearenv();
    fflush(stdout);
    execl("/bin/sh", "sh", "-c", "echo child preload=[$LD_PRELOAD]; exit 4", (char *)NULL);
    return 99;
}

static int forks(int n) {
    long sum = 0;
    for (int i = 0; i < n; i++) {
        pid_t child = fork();
        if (child < 0) return 98;
        if (child == 0) _exit(i % 7);
        int status = 0;
        waitpid(child, &status, 0);
        sum += WIFEXITED(status) ? WEXITSTATUS(status) : 1000;
    }
    printf("sum=%ld\n", sum);
    return 0;
}

static void *exit_soon(void *arg) {
    (void)arg;
    nap_ms(80);
    printf("exiting from a thread\n");
    exit(3);
}

static int thread_exit(void) {
    pthread_t t;
    pthread_create(&t, NULL, exit_soon, NULL);
    while (!stop) nap_ms(1000);
    return 0;
}

/* Allows what the work and exit() below need; kills on anything else
 * (nanosleep, openat, stat...). */
static int sandboxed(void) {
    nap_ms(60);
    printf("before the filter\n");
    fflush(stdout);
    static const int allowed[] = {SYS_write, SYS_exit, SYS_exit_group, SYS_rt_sigreturn,
                                  SYS_rt_sigprocmask, SYS_futex, SYS_brk, SYS_mmap,
                                  SYS_munmap, SYS_madvise, SYS_mprotect, SYS_getpid,
                                  SYS_gettid, SYS_clock_gettime, SYS_sched_yield};
    enum { N = sizeof allowed / sizeof allowed[0] };
    struct sock_filter code[3 + 2 * N];
    int k = 0;
    code[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int i = 0; i < N; i++) {
        code[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i], 0, 1);
        code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    }
    code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    struct sock_fprog prog = {(unsigned short)k, code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 2;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return 3;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile unsigned long spins = 0;
    do {
        for (int i = 0; i < 1000; i++) spins++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < 300);
    printf("survived the filter\n");
    fflush(stdout);
    exit(0);
}

static int unshare_user(void) {
    nap_ms(60);
    int r = unshare(CLONE_NEWUSER);
    printf("unshare: %s\n", r == 0 ? "ok" : strerror(errno));
    return 0;
}

static volatile pid_t handler_child;

static void on_alarm(int sig) {
    (void)sig;
    pid_t child = fork();
    if (child == 0) _exit(5);
    handler_child = child;
}

static int fork_in_handler(void) {
    signal(SIGALRM, on_alarm);
    alarm(1);
    while (!handler_child) nap_ms(10);
    int status = 0;
    waitpid(handler_child, &status, 0);
    printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

static int fork_setgid(int n) {
    for (int i = 0; i < n; i++) {
        nap_ms(30);
        pid_t child = fork();
        if (child == 0) {
            if (setgid(getgid()) != 0) _exit(2);
            nap_ms(300);
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
    }
    printf("forked %d\n", n);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "threads-setuid")) return threads_setuid();
    if (!strcmp(mode, "keepcaps")) return keepcaps();
    if (!strcmp(mode, "closefds")) return closefds();
    if (!strcmp(mode, "clearenv")) return clear_env();
    if (!strcmp(mode, "forks")) return forks(argc > 2 ? atoi(argv[2]) : 1000);
    if (!strcmp(mode, "thread-exit")) return thread_exit();
    if (!strcmp(mode, "exit")) {
        printf("bye\n");
        _exit(7);
    }
    if (!strcmp(mode, "abort")) {
        printf("aborting\n");
        abort();
    }
    if (!strcmp(mode, "seccomp")) return sandboxed();
    if (!strcmp(mode, "unshare")) return unshare_user();
    if (!strcmp(mode, "fork-in-handler")) return fork_in_handler();
    if (!strcmp(mode, "fork-setgid")) return fork_setgid(argc > 2 ? atoi(argv[2]) : 3);
    fprintf(stderr, "usage: hostile MODE\n");
    return 64;
}
