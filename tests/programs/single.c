/* Single-threaded: allocates MIB MiB in 64 KiB and 200 B blocks, touches
 * them, frees every other block, holds for HOLD_MS, then frees the rest.
 * usage: single [MIB=64] [HOLD_MS=300] */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void hold(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    long mib = argc > 1 ? atol(argv[1]) : 64;
    long hold_ms = argc > 2 ? atol(argv[2]) : 300;
    size_t total = (size_t)mib << 20, used = 0, n = 0, cap = 1 << 20;
    void **blocks = malloc(cap * sizeof *blocks);
    while (used < total && n < cap) {
        size_t size = (n % 4 == 0) ? 65536 : 200;
        blocks[n] = malloc(size);
        memset(blocks[n], (int)n, size);
        used += size;
        n++;
    }
    for (size_t i = 0; i < n; i += 2) { free(blocks[i]); blocks[i] = NULL; }
    hold(hold_ms);
    for (size_t i = 0; i < n; i++) free(blocks[i]);
    free(blocks);
    return 0;
}
