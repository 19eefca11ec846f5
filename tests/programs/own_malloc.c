/* Brings its own malloc, as a server with a statically linked allocator
 * does: a bump allocator over one mapping, exported from the executable, so
 * the loader binds every malloc call (libc's included) to it and a preloaded
 * allocator is never used. Allocates and touches MIB MiB, then exits.
 * usage: own_malloc MIB */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static char *arena, *next, *end;

static void *bump(size_t size, size_t align) {
    if (!arena) {
        size_t cap = (size_t)1 << 30;
        arena = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (arena == MAP_FAILED) return NULL;
        next = arena;
        end = arena + cap;
    }
    uintptr_t p = ((uintptr_t)next + align - 1) & ~(uintptr_t)(align - 1);
    if (p + size + 16 > (uintptr_t)end) return NULL;
    *(size_t *)p = size;
    next = (char *)(p + 16 + size);
    return (void *)(p + 16);
}

void *malloc(size_t size) { return bump(size, 16); }
void free(void *ptr) { (void)ptr; }
void *calloc(size_t n, size_t size) { return bump(n * size, 16); } /* fresh pages are zero */
void *realloc(void *ptr, size_t size) {
    void *fresh = bump(size, 16);
    if (ptr && fresh) {
        size_t old = *(size_t *)((char *)ptr - 16);
        memcpy(fresh, ptr, old < size ? old : size);
    }
    return fresh;
}
void *memalign(size_t align, size_t size) { return bump(size, align < 16 ? 16 : align); }
void *aligned_alloc(size_t align, size_t size) { return memalign(align, size); }
int posix_memalign(void **out, size_t align, size_t size) {
    *out = memalign(align, size);
    return *out ? 0 : 12;
}
size_t malloc_usable_size(void *ptr) { return ptr ? *(size_t *)((char *)ptr - 16) : 0; }

int main(int argc, char **argv) {
    long mib = argc > 1 ? atol(argv[1]) : 64;
    for (long i = 0; i < mib * 16; i++) {
        char *block = malloc(64 << 10);
        if (!block) return 1;
        memset(block, 1, 64 << 10);
    }
    return 0;
}
