/* A program that allocates through jemalloc's own API, as some servers'
 * libraries do: MIB MiB in 4 KiB blocks from mallocx, written, held for
 * HOLD_MS, then given back with sdallocx. Needs -ljemalloc. A preloaded
 * allocator replaces malloc, not mallocx: those blocks stay in jemalloc.
 * usage: own_api [MIB=48] [HOLD_MS=800] */
#include <jemalloc/jemalloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
    long mib = argc > 1 ? atol(argv[1]) : 48;
    long hold_ms = argc > 2 ? atol(argv[2]) : 800;
    size_t blocks = (size_t)mib * 256;
    char **held = malloc(blocks * sizeof *held);
    if (!held) return 1;
    for (size_t i = 0; i < blocks; i++) {
        held[i] = mallocx(4096, 0);
        if (!held[i]) return 1;
        memset(held[i], 1, 4096);
    }
    struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    for (size_t i = 0; i < blocks; i++) sdallocx(held[i], 4096, 0);
    free(held);
    return 0;
}
