/* A benchmark that reports its own figure: THREADS threads each replace
 * blocks of 16-4096 B in a ring of 256, OPS times, and the program prints
 * its throughput over the loop as `throughput: N ops/sec` (the line a
 * `--metric 'ops=([0-9.]+) ops/sec'` reads), after a warm-up line that the
 * last match must win over.
 * usage: throughput [THREADS=2] [OPS=1000000] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long ops;

static void *loop(void *arg) {
    unsigned seed = (unsigned)(size_t)arg;
    void *ring[256] = {0};
    for (long i = 0; i < ops; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned slot = (unsigned)i & 255;
        free(ring[slot]);
        ring[slot] = malloc(16 + (seed >> 16) % 4081);
        if (ring[slot]) *(volatile char *)ring[slot] = 1;
    }
    for (int i = 0; i < 256; i++) free(ring[i]);
    return NULL;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    ops = argc > 2 ? atol(argv[2]) : 1000000L;
    pthread_t t[64];
    if (threads < 1 || threads > 64 || ops < 1) return 2;
    printf("warm-up: 1 ops/sec\n");
    double start = now_s();
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, loop, (void *)(size_t)(i + 1));
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double elapsed = now_s() - start;
    printf("throughput: %.0f ops/sec\n", (double)threads * (double)ops / elapsed);
    return 0;
}
