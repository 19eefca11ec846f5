/* A fixed-duration benchmark, as RocksDB's db_bench or pgbench run: it
 * allocates and frees small blocks for MS milliseconds whatever the
 * allocator, then prints how many operations it managed, so its wall time
 * is the same under every configuration and only its throughput moves.
 * usage: fixed_ops [MS=1500]   prints `churn : N ops/sec` */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double seconds = (argc > 1 ? atol(argv[1]) : 1500) / 1000.0;
    enum { SLOTS = 4096 };
    static void *slot[SLOTS];
    unsigned seed = 7;
    unsigned long ops = 0;
    double start = now_s(), end = start + seconds;
    while (now_s() < end) {
        for (int i = 0; i < 4096; i++, ops++) {
            seed = seed * 1103515245u + 12345u;
            unsigned k = (seed >> 8) % SLOTS;
            free(slot[k]);
            size_t size = 16 + (seed >> 4) % 240;
            slot[k] = malloc(size);
            if (!slot[k]) return 1;
            memset(slot[k], 1, 16);
        }
    }
    printf("churn : %.0f ops/sec\n", ops / (now_s() - start));
    return 0;
}
