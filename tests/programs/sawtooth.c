/* A collector's sawtooth, until killed: every STEP_MS it mallocs and
 * touches MIB MiB more, in 64 KiB blocks, and after STEPS steps frees them
 * all, so the live heap climbs from nothing to STEPS x MIB MiB and drops
 * back, period STEPS x STEP_MS.
 * usage: sawtooth STEP_MS MIB STEPS */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK (64 << 10)

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    long step_ms = atol(argv[1]);
    size_t per_step = ((size_t)atol(argv[2]) << 20) / BLOCK;
    long steps = atol(argv[3]);
    size_t n = per_step * (size_t)steps;
    void **blocks = calloc(n, sizeof *blocks);
    if (!blocks) return 1;
    for (;;) {
        for (long k = 0; k < steps; k++) {
            usleep(step_ms * 1000);
            for (size_t i = k * per_step; i < (k + 1) * per_step; i++) {
                blocks[i] = malloc(BLOCK);
                memset(blocks[i], 7, BLOCK);
            }
        }
        for (size_t i = 0; i < n; i++) free(blocks[i]);
    }
}
