/* allocscope's glibc shim: preloaded into a program that links another
 * allocator (Debian's redis-server links jemalloc), it sends the whole malloc
 * family to glibc's own allocator, so that a glibc configuration measures
 * glibc and not the linked allocator.
 *
 * glibc's functions are taken from libc itself (dlopen("libc.so.6",
 * RTLD_NOLOAD) and dlsym on that handle, which searches libc and nothing
 * before it), never with RTLD_NEXT, which would find the linked allocator.
 * dlopen and dlsym may allocate before the pointers are known: those calls
 * are served from a static buffer and never freed. No locks: resolving twice
 * from two threads stores the same values. Nothing to do at fork.
 *
 * jemalloc's own entry points (mallocx, rallocx, xallocx, sallocx, dallocx,
 * sdallocx, nallocx) are mapped to glibc: the alignment (MALLOCX_LG_ALIGN)
 * and MALLOCX_ZERO flags are honoured; arena and tcache flags are ignored;
 * xallocx never resizes in place (it reports the block's size, as jemalloc
 * does when it cannot). C++ new and delete go to the same functions.
 * mallctl and malloc_stats_print are left to the linked allocator (they
 * describe its heap, which the program no longer uses).
 * See docs/usage.md, "Programs that link their own allocator". */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* Tells the heap probe that malloc is glibc's behind this shim. */
EXPORT const int allocscope_glibc_shim = 1;

static void *(*g_malloc)(size_t);
static void (*g_free)(void *);
static void *(*g_calloc)(size_t, size_t);
static void *(*g_realloc)(void *, size_t);
static void *(*g_memalign)(size_t, size_t);
static int (*g_posix_memalign)(void **, size_t, size_t);
static void *(*g_aligned_alloc)(size_t, size_t);
static void *(*g_valloc)(size_t);
static void *(*g_pvalloc)(size_t);
static size_t (*g_usable)(void *);

/* Serves dlopen's and dlsym's own allocations while resolving. */
static char bootstrap[64 * 1024] __attribute__((aligned(64)));
static size_t bootstrap_used;
static __thread int resolving __attribute__((tls_model("initial-exec")));

static int from_bootstrap(const void *p) {
    return (const char *)p >= bootstrap && (const char *)p < bootstrap + sizeof bootstrap;
}

static void *bootstrap_alloc(size_t size, size_t align) {
    if (align < 16) align = 16;
    size_t start = (bootstrap_used + align - 1) & ~(align - 1);
    if (start + size > sizeof bootstrap) return NULL;
    bootstrap_used = start + size;
    return bootstrap + start;
}

static void resolve(void) {
    resolving = 1;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (!libc) abort();
    g_free = dlsym(libc, "free");
    g_calloc = dlsym(libc, "calloc");
    g_realloc = dlsym(libc, "realloc");
    g_memalign = dlsym(libc, "memalign");
    g_posix_memalign = dlsym(libc, "posix_memalign");
    g_aligned_alloc = dlsym(libc, "aligned_alloc");
    g_valloc = dlsym(libc, "valloc");
    g_pvalloc = dlsym(libc, "pvalloc");
    g_usable = dlsym(libc, "malloc_usable_size");
    /* Last: a set g_malloc means every pointer is set. */
    void *(*m)(size_t) = dlsym(libc, "malloc");
    if (!m || !g_free || !g_calloc || !g_realloc || !g_memalign || !g_usable) abort();
    __atomic_store_n(&g_malloc, m, __ATOMIC_RELEASE);
    resolving = 0;
}

static inline int ready(void) {
    if (__builtin_expect(__atomic_load_n(&g_malloc, __ATOMIC_ACQUIRE) != NULL, 1)) return 1;
    if (resolving) return 0;
    resolve();
    return 1;
}

__attribute__((constructor)) static void shim_init(void) { ready(); }

EXPORT void *malloc(size_t size) {
    if (!ready()) return bootstrap_alloc(size, 16);
    return g_malloc(size);
}

EXPORT void free(void *p) {
    if (!p || from_bootstrap(p)) return;
    if (!ready()) return;
    g_free(p);
}

EXPORT void *calloc(size_t n, size_t size) {
    if (!ready()) {
        if (size && n > SIZE_MAX / size) return NULL;
        return bootstrap_alloc(n * size, 16); /* static: already zero */
    }
    return g_calloc(n, size);
}

EXPORT void *realloc(void *p, size_t size) {
    if (!ready()) return bootstrap_alloc(size, 16);
    if (from_bootstrap(p)) {
        /* Copy out of the buffer; the old size is unknown, the buffer's end bounds it. */
        void *q = g_malloc(size);
        size_t room = (size_t)(bootstrap + sizeof bootstrap - (char *)p);
        if (q) memcpy(q, p, size < room ? size : room);
        return q;
    }
    return g_realloc(p, size);
}

EXPORT void *reallocarray(void *p, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n * size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size) {
    if (!ready()) {
        *out = bootstrap_alloc(size, align);
        return *out ? 0 : ENOMEM;
    }
    return g_posix_memalign(out, align, size);
}

EXPORT void *aligned_alloc(size_t align, size_t size) {
    if (!ready()) return bootstrap_alloc(size, align);
    return g_aligned_alloc(align, size);
}

EXPORT void *memalign(size_t align, size_t size) {
    if (!ready()) return bootstrap_alloc(size, align);
    return g_memalign(align, size);
}

EXPORT void *valloc(size_t size) {
    if (!ready()) return bootstrap_alloc(size, 4096);
    return g_valloc(size);
}

EXPORT void *pvalloc(size_t size) {
    if (!ready()) return bootstrap_alloc((size + 4095) & ~(size_t)4095, 4096);
    return g_pvalloc(size);
}

EXPORT size_t malloc_usable_size(void *p) {
    if (!p || from_bootstrap(p) || !ready()) return 0;
    return g_usable(p);
}

/* jemalloc's non-standard API: flags' low 6 bits are lg(alignment), 0x40 zeroes. */
#define LG_ALIGN(flags) ((flags) & 0x3f)
#define ZERO(flags) ((flags) & 0x40)

static void *alloc_flags(size_t size, int flags) {
    size_t align = LG_ALIGN(flags) ? (size_t)1 << LG_ALIGN(flags) : 0;
    void *p = align > 16 ? memalign(align, size) : malloc(size);
    if (p && ZERO(flags)) memset(p, 0, size);
    return p;
}

EXPORT void *mallocx(size_t size, int flags) { return alloc_flags(size, flags); }

EXPORT void *rallocx(void *p, size_t size, int flags) {
    size_t align = LG_ALIGN(flags) ? (size_t)1 << LG_ALIGN(flags) : 0;
    size_t old = malloc_usable_size(p);
    void *q;
    if (align > 16 && ((uintptr_t)p & (align - 1))) {
        q = memalign(align, size);
        if (!q) return NULL;
        memcpy(q, p, old < size ? old : size);
        free(p);
    } else {
        q = realloc(p, size);
        if (!q) return NULL;
    }
    if (ZERO(flags) && size > old) memset((char *)q + old, 0, size - old);
    return q;
}

EXPORT size_t xallocx(void *p, size_t size, size_t extra, int flags) {
    (void)size, (void)extra, (void)flags;
    return malloc_usable_size(p);
}

EXPORT size_t sallocx(const void *p, int flags) {
    (void)flags;
    return malloc_usable_size((void *)p);
}

EXPORT void dallocx(void *p, int flags) {
    (void)flags;
    free(p);
}

EXPORT void sdallocx(void *p, size_t size, int flags) {
    (void)size, (void)flags;
    free(p);
}

/* What glibc would make usable for the request: its chunk (size plus one
 * 8-byte header, rounded to 16, at least 32) less the header. */
EXPORT size_t nallocx(size_t size, int flags) {
    size_t chunk = (size + sizeof(size_t) + 15) & ~(size_t)15;
    if (chunk < 32) chunk = 32;
    size_t usable = chunk - sizeof(size_t);
    size_t align = LG_ALIGN(flags) ? (size_t)1 << LG_ALIGN(flags) : 0;
    if (align > 16) usable = (usable + align - 1) & ~(align - 1);
    return usable;
}

/* C++ operators, for a C++ program whose linked allocator defines its own. A
 * failed throwing new calls libstdc++'s std::__throw_bad_alloc when it is
 * loaded, else aborts. */
static void *new_or_throw(size_t size, size_t align) {
    void *p = align > 16 ? memalign(align, size ? size : 1) : malloc(size ? size : 1);
    if (!p) {
        void (*thrower)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv");
        if (thrower) thrower();
        abort();
    }
    return p;
}

#define NEW(sym, params, expr) \
    EXPORT void *sym params { return expr; }
#define DELETE(sym, params) \
    EXPORT void sym params { free(p); }

NEW(_Znwm, (size_t n), new_or_throw(n, 0))
NEW(_Znam, (size_t n), new_or_throw(n, 0))
NEW(_ZnwmRKSt9nothrow_t, (size_t n, const void *t), ((void)t, malloc(n ? n : 1)))
NEW(_ZnamRKSt9nothrow_t, (size_t n, const void *t), ((void)t, malloc(n ? n : 1)))
NEW(_ZnwmSt11align_val_t, (size_t n, size_t a), new_or_throw(n, a))
NEW(_ZnamSt11align_val_t, (size_t n, size_t a), new_or_throw(n, a))
NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const void *t), ((void)t, memalign(a, n ? n : 1)))
NEW(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const void *t), ((void)t, memalign(a, n ? n : 1)))
DELETE(_ZdlPv, (void *p))
DELETE(_ZdaPv, (void *p))
DELETE(_ZdlPvm, (void *p, size_t n))
DELETE(_ZdaPvm, (void *p, size_t n))
DELETE(_ZdlPvRKSt9nothrow_t, (void *p, const void *t))
DELETE(_ZdaPvRKSt9nothrow_t, (void *p, const void *t))
DELETE(_ZdlPvSt11align_val_t, (void *p, size_t a))
DELETE(_ZdaPvSt11align_val_t, (void *p, size_t a))
DELETE(_ZdlPvmSt11align_val_t, (void *p, size_t n, size_t a))
DELETE(_ZdaPvmSt11align_val_t, (void *p, size_t n, size_t a))
DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t a, const void *t))
DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t a, const void *t))
