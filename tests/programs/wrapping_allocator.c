/* An allocator whose counters are impossible, as gperftools' are when read
 * mid-update: malloc and the rest go to glibc (`__libc_malloc`, ...), and
 * it exports MallocExtension_GetNumericProperty, so the heap probe's stats
 * build reads it as the counters of the allocator serving malloc. Its live
 * heap ("generic.current_allocated_bytes") cycles through three readings:
 * honest (the bytes its blocks hold, counted by malloc_usable_size),
 * below zero (-1200, wrapped to 2^64 - 1200, as mimalloc-bench's mstress
 * read under tcmalloc) and far beyond any RSS (2^62). At exit it prints how
 * many of each it gave to stderr: "readings honest N wrapped N huge N".
 * build: cc -O2 -shared -fPIC -o libwrapping.so wrapping_allocator.c */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern size_t malloc_usable_size(void *);

static _Atomic int64_t live;
static _Atomic unsigned long polls, kinds[3];

static void *counted(void *p) {
    if (p) atomic_fetch_add(&live, (int64_t)malloc_usable_size(p));
    return p;
}

static void uncount(void *p) {
    if (p) atomic_fetch_sub(&live, (int64_t)malloc_usable_size(p));
}

void *malloc(size_t n) { return counted(__libc_malloc(n)); }
void free(void *p) { uncount(p); __libc_free(p); }
void *calloc(size_t n, size_t s) { return counted(__libc_calloc(n, s)); }
void *realloc(void *p, size_t n) {
    uncount(p);
    void *r = __libc_realloc(p, n);
    if (!r && n) counted(p); /* the old block stays */
    return counted(r);
}
void *memalign(size_t a, size_t n) { return counted(__libc_memalign(a, n)); }
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    void *p = memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void *valloc(size_t n) { return memalign((size_t)sysconf(_SC_PAGESIZE), n); }

int MallocExtension_GetNumericProperty(const char *name, size_t *value) {
    if (strcmp(name, "generic.current_allocated_bytes") == 0) {
        unsigned long k = atomic_fetch_add(&polls, 1) % 3;
        atomic_fetch_add(&kinds[k], 1);
        int64_t honest = atomic_load(&live);
        *value = k == 0 ? (size_t)(honest > 0 ? honest : 0) : k == 1 ? (size_t)0 - 1200 : (size_t)1 << 62;
        return 1;
    }
    /* Heap size, free lists, unmapped and physical bytes: none. */
    *value = 0;
    return 1;
}

__attribute__((destructor)) static void report(void) {
    char line[128];
    int n = snprintf(line, sizeof line, "readings honest %lu wrapped %lu huge %lu\n",
                     atomic_load(&kinds[0]), atomic_load(&kinds[1]), atomic_load(&kinds[2]));
    if (n > 0) (void)!write(2, line, (size_t)n);
}
