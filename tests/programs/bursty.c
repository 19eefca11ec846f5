/* A bursty event loop: each burst, 4 threads each allocate MIB/4 MiB in
 * small blocks and free all but one block in 64, then the process idles.
 * glibc keeps the freed memory of its arenas (the survivors pin it), so RSS
 * stays high between bursts unless malloc_trim gives it back.
 * usage: bursty [BURSTS=6] [MIB=64] [IDLE_MS=400] */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long mib_per_thread;

static void *burst(void *arg) {
    (void)arg;
    size_t n = ((size_t)mib_per_thread << 20) / 512;
    void **blocks = malloc(n * sizeof *blocks);
    if (!blocks) return NULL;
    for (size_t i = 0; i < n; i++) {
        blocks[i] = malloc(512);
        if (blocks[i]) memset(blocks[i], 7, 512);
    }
    for (size_t i = 0; i < n; i++)
        if (i % 64 != 0) free(blocks[i]);
    /* The survivors leak on purpose: an event loop's long-lived objects. */
    free(blocks);
    return NULL;
}

int main(int argc, char **argv) {
    long bursts = argc > 1 ? atol(argv[1]) : 6;
    long mib = argc > 2 ? atol(argv[2]) : 64;
    long idle_ms = argc > 3 ? atol(argv[3]) : 400;
    mib_per_thread = mib / 4;
    for (long b = 0; b < bursts; b++) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, burst, NULL);
        for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
        struct timespec ts = {idle_ms / 1000, (idle_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return 0;
}
