/* Memory that no allocator touches: one anonymous mapping of MIB MiB,
 * every page written, held for HOLD_MS, then the process exits. Every
 * allocator sees the same few startup mallocs, so RSS is the same under
 * each (within the allocator's own startup footprint).
 * usage: mapped [MIB=128] [HOLD_MS=500] */
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv) {
    long mib = argc > 1 ? atol(argv[1]) : 128;
    long hold_ms = argc > 2 ? atol(argv[2]) : 500;
    size_t bytes = (size_t)mib << 20;
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    for (size_t off = 0; off < bytes; off += 4096) p[off] = 1;
    struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return 0;
}
