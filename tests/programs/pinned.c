/* Fills MIB MiB with 4 KiB blocks, each followed by a 64-byte block that
 * stays, frees the 4 KiB blocks and holds for HOLD_MS. glibc keeps the
 * freed holes (each one pinned by the small block after it, so nothing can
 * be trimmed); jemalloc, told by the `malloc_conf` symbol below to purge at
 * once, returns the emptied pages. Built twice, plain and with -ljemalloc,
 * it is the same program under two allocators chosen at build time; the
 * symbol is an unused global in the plain build.
 * usage: pinned [MIB=64] [HOLD_MS=1500] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *malloc_conf = "dirty_decay_ms:0,muzzy_decay_ms:0";

int main(int argc, char **argv) {
    long mib = argc > 1 ? atol(argv[1]) : 64;
    long hold_ms = argc > 2 ? atol(argv[2]) : 1500;
    size_t n = ((size_t)mib << 20) / 4096;
    void **big = malloc(n * sizeof *big), **pins = malloc(n * sizeof *pins);
    if (!big || !pins) return 1;
    for (size_t i = 0; i < n; i++) {
        big[i] = malloc(4096);
        pins[i] = malloc(64);
        if (!big[i] || !pins[i]) return 1;
        memset(big[i], 1, 4096);
        memset(pins[i], 2, 64);
    }
    for (size_t i = 0; i < n; i++) free(big[i]);
    printf("allocscope:mark freed\n");
    fflush(stdout);
    struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    for (size_t i = 0; i < n; i++) free(pins[i]);
    free(big);
    free(pins);
    return 0;
}
