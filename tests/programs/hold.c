/* Holds a known number of live heap bytes for a while, then frees them.
 * usage: hold blocks|mixed|cxx MIB HOLD_MS
 *   blocks: MIB MiB in 8 KiB blocks; mixed: sizes 16 B .. 64 KiB plus a few
 *   1 MiB blocks, same total. Prints the requested total and the sum of
 *   malloc_usable_size (what the allocator counts as live) on stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h>
#include <sys/mman.h>

int main(int argc, char **argv) {
    const char *kind = argc > 1 ? argv[1] : "blocks";
    long mib = argc > 2 ? atol(argv[2]) : 100;
    long hold_ms = argc > 3 ? atol(argv[3]) : 1000;
    size_t target = (size_t)mib << 20, total = 0, n = 0, cap = 1 << 20;
    /* The pointer array lives outside the heap, so only the blocks count. */
    void **blocks = mmap(NULL, cap * sizeof *blocks, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (blocks == MAP_FAILED) return 1;
    size_t usable = 0;
    unsigned seed = 12345;
    while (total < target && n < cap) {
        size_t size = 8192;
        if (strcmp(kind, "mixed") == 0) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 8) % 100;
            size = r < 60 ? 16 + (seed >> 4) % 240 : r < 95 ? 256 + (seed >> 4) % 16128 : r < 99 ? 16384 + (seed >> 4) % 49152 : 1 << 20;
        }
        if (total + size > target) size = target - total;
        char *p = malloc(size);
        if (!p) return 1;
        memset(p, 1, size);
        blocks[n++] = p;
        total += size;
        usable += malloc_usable_size(p);
    }
    printf("allocscope:mark held\nrequested %zu usable %zu\n", total, usable);
    fflush(stdout);
    struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    for (size_t i = 0; i < n; i++) free(blocks[i]);
    munmap(blocks, cap * sizeof *blocks);
    return 0;
}
