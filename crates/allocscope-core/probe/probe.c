/* allocscope heap probe: an LD_PRELOAD library placed before the allocator
 * under test. See PROTOCOL.md for the environment variables and the
 * shared-memory layout.
 *
 * Built twice from this file: without ALLOCSCOPE_COUNT (stats mode: a probe
 * thread polls the allocator's own counters; nothing on the hot path) and
 * with it (count mode: the malloc family is interposed and counted by the
 * allocator's malloc_usable_size in per-thread counters).
 *
 * Rules (docs/ARCHITECTURE.md, "Heap probe"): hooks resolved once, a static bootstrap
 * buffer for calloc-during-dlsym, a thread-local recursion guard, relaxed
 * atomics, no locks or prints on the workload's malloc paths, fork handled. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <grp.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define IE __attribute__((tls_model("initial-exec")))

/* Shared-memory layout: 64-bit little-endian words (PROTOCOL.md). */
enum {
    W_MAGIC, W_SEQ, W_PID, W_MODE, W_SOURCE, W_LIVE, W_RESIDENT, W_RETAINED,
    W_ARENAS, W_CPU_NS, W_POLLS, W_TRIMS, W_UPDATED_NS, W_POLL_COST_NS,
    W_FREE, W_METADATA, W_THREADS, W_RECLAIMS, W_RECLAIM_RSS_BEFORE, W_RECLAIM_RSS_AFTER,
    W_RECLAIM_START_NS, W_RECLAIM_END_NS, W_RECLAIM_USER_NS, W_RECLAIM_SYS_NS,
    W_POLLED_NS, W_POLL_START_NS, W_RECLAIM_FREE_BEFORE, W_RECLAIM_LIVE_BEFORE,
    W_STATE, W_RECLAIM_KIND, W_RECLAIM_ANON_BEFORE, W_RECLAIM_ANON_AFTER, W_WORDS
};
/* Written by allocscope, outside the seqlocked words: how many reclaims it
 * asks for (PROTOCOL.md, "Reclaim requests"). */
#define W_REQUEST 64
#define SHM_MAGIC 0x315250434f4c4c41ull /* "ALLOCPR1" */
#define SHM_BYTES 4096
#define UNKNOWN UINT64_MAX
enum { MODE_NONE = 0, MODE_STATS = 1, MODE_COUNT = 2 };
enum { SRC_NONE = 0, SRC_GLIBC = 1, SRC_JEMALLOC = 2, SRC_GPERFTOOLS = 3, SRC_COUNT = 4 };
/* Word 28: why the probe stopped polling in this process (0: it polls). */
enum { STATE_ON = 0, STATE_NO_THREAD = 1, STATE_SECCOMP = 2 };
/* Word 29: what the last reclaim test could reach. */
enum { RECLAIM_NONE = 0, RECLAIM_PROCESS = 1, RECLAIM_OWN_THREAD = 2 };

static _Atomic uint64_t *shm;
static char shm_dir[512];
static long interval_ms = 50, trim_ms;
static double budget = 0.01; /* share of one core the probe thread may use */

static uint64_t now_ns(clockid_t clock) {
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- count */
#ifdef ALLOCSCOPE_COUNT
#define BATCH_BYTES (64 * 1024)
static _Atomic int64_t live_bytes;         /* flushed per-thread deltas */
static __thread int64_t tl_delta IE;      /* not yet flushed */
static __thread int tl_guard IE;          /* inside one of our hooks */

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_reallocarray)(void *, size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static size_t (*real_usable)(void *);
static void resolve_cxx(void);

/* dlsym may call calloc before the hooks exist: serve it from here. */
static char boot_buf[64 * 1024] __attribute__((aligned(16)));
static _Atomic size_t boot_used;
static _Atomic int resolve_state; /* 0 not yet, 1 resolving, 2 done */

static int is_boot(const void *p) {
    return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof boot_buf;
}

static void *boot_alloc(size_t n) {
    n = (n + 15) & ~(size_t)15;
    size_t at = atomic_fetch_add_explicit(&boot_used, n, memory_order_relaxed);
    return at + n <= sizeof boot_buf ? boot_buf + at : NULL;
}

static void resolve(void) {
    int expected = 0;
    if (!atomic_compare_exchange_strong(&resolve_state, &expected, 1)) return;
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_free = dlsym(RTLD_NEXT, "free");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_reallocarray = dlsym(RTLD_NEXT, "reallocarray");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = dlsym(RTLD_NEXT, "memalign");
    real_valloc = dlsym(RTLD_NEXT, "valloc");
    real_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
    real_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
    resolve_cxx();
    atomic_store(&resolve_state, 2);
}

static inline int ready(void) {
    if (__builtin_expect(real_malloc != NULL && real_usable != NULL, 1)) return 1;
    resolve();
    return real_malloc != NULL && real_usable != NULL &&
           atomic_load_explicit(&resolve_state, memory_order_acquire) == 2;
}

static inline void account(int64_t bytes) {
    int64_t v = tl_delta + bytes;
    if (v > BATCH_BYTES || v < -BATCH_BYTES) {
        atomic_fetch_add_explicit(&live_bytes, v, memory_order_relaxed);
        v = 0;
    }
    tl_delta = v;
}

static inline void count_alloc(void *p) {
    if (p) account((int64_t)real_usable(p));
}
static inline void count_free(void *p) {
    if (p && !is_boot(p)) account(-(int64_t)real_usable(p));
}

/* Calls REAL with the guard held; counts only the outermost hook. */
#define HOOKED(type, call, after)            \
    do {                                     \
        if (tl_guard) return call;           \
        tl_guard = 1;                        \
        type r_ = call;                      \
        after;                               \
        tl_guard = 0;                        \
        return r_;                           \
    } while (0)

EXPORT void *malloc(size_t n) {
    if (!ready()) return boot_alloc(n);
    HOOKED(void *, real_malloc(n), count_alloc(r_));
}

EXPORT void *calloc(size_t n, size_t size) {
    if (!ready()) {
        if (size && n > SIZE_MAX / size) return NULL;
        return boot_alloc(n * size); /* static: already zero */
    }
    HOOKED(void *, real_calloc(n, size), count_alloc(r_));
}

EXPORT void free(void *p) {
    if (!p || is_boot(p)) return;
    if (!ready()) return; /* cannot happen for a pointer we did not hand out */
    if (tl_guard) { real_free(p); return; }
    tl_guard = 1;
    count_free(p);
    real_free(p);
    tl_guard = 0;
}

static void *from_boot(void *p, size_t n) {
    void *q = malloc(n);
    size_t room = (size_t)(boot_buf + sizeof boot_buf - (char *)p);
    if (q) memcpy(q, p, n < room ? n : room);
    return q;
}

EXPORT void *realloc(void *p, size_t n) {
    if (p && is_boot(p)) return from_boot(p, n);
    if (!ready()) return boot_alloc(n);
    if (tl_guard) return real_realloc(p, n);
    tl_guard = 1;
    int64_t before = p ? (int64_t)real_usable(p) : 0;
    void *r = real_realloc(p, n);
    if (r) account((int64_t)real_usable(r) - before);
    else if (p && n == 0) account(-before); /* realloc(p, 0) freed p */
    tl_guard = 0;
    return r;
}

EXPORT void *reallocarray(void *p, size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return real_reallocarray ? real_reallocarray(p, n, size) : NULL;
    return realloc(p, n * size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n) {
    if (!ready()) return 12; /* ENOMEM */
    HOOKED(int, real_posix_memalign(out, align, n), if (r_ == 0) count_alloc(*out));
}

EXPORT void *aligned_alloc(size_t align, size_t n) {
    if (!ready()) return NULL;
    HOOKED(void *, real_aligned_alloc(align, n), count_alloc(r_));
}

EXPORT void *memalign(size_t align, size_t n) {
    if (!ready()) return NULL;
    HOOKED(void *, real_memalign(align, n), count_alloc(r_));
}

EXPORT void *valloc(size_t n) {
    if (!ready()) return NULL;
    HOOKED(void *, real_valloc(n), count_alloc(r_));
}

EXPORT void *pvalloc(size_t n) {
    if (!ready() || !real_pvalloc) return NULL;
    HOOKED(void *, real_pvalloc(n), count_alloc(r_));
}

/* C++ operators, for allocators that replace them (jemalloc, tcmalloc,
 * mimalloc) so that they never pass through malloc. When the next one is
 * libstdc++'s, it calls malloc (or the plain operator new), which the guard
 * keeps from counting twice. Every form is listed, one line each (mimalloc's
 * alloc-override.c is the checklist): a form left out would either never
 * count an allocation or subtract a free it never counted. Where the next
 * library lacks a form, the fallback goes through our own hooks. */
typedef struct { size_t a; } nothrow_arg; /* std::nothrow_t const &, unused */
#define NT const nothrow_arg *
static void *aligned_fallback(size_t n, size_t align) {
    void *p = NULL;
    return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n) == 0 ? p : NULL;
}
#define CXX_NEW_FORMS(X)                                                                  \
    X(_Znwm, (size_t n), (n), malloc(n))                                                  \
    X(_Znam, (size_t n), (n), malloc(n))                                                  \
    X(_ZnwmRKSt9nothrow_t, (size_t n, NT t), (n, t), malloc(n))                           \
    X(_ZnamRKSt9nothrow_t, (size_t n, NT t), (n, t), malloc(n))                           \
    X(_ZnwmSt11align_val_t, (size_t n, size_t al), (n, al), aligned_fallback(n, al))      \
    X(_ZnamSt11align_val_t, (size_t n, size_t al), (n, al), aligned_fallback(n, al))      \
    X(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t al, NT t), (n, al, t),        \
      aligned_fallback(n, al))                                                            \
    X(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t al, NT t), (n, al, t),        \
      aligned_fallback(n, al))
#define CXX_DELETE_FORMS(X)                                                               \
    X(_ZdlPv, (void *p), (p))                                                             \
    X(_ZdaPv, (void *p), (p))                                                             \
    X(_ZdlPvm, (void *p, size_t n), (p, n))                                               \
    X(_ZdaPvm, (void *p, size_t n), (p, n))                                               \
    X(_ZdlPvRKSt9nothrow_t, (void *p, NT t), (p, t))                                      \
    X(_ZdaPvRKSt9nothrow_t, (void *p, NT t), (p, t))                                      \
    X(_ZdlPvSt11align_val_t, (void *p, size_t al), (p, al))                               \
    X(_ZdaPvSt11align_val_t, (void *p, size_t al), (p, al))                               \
    X(_ZdlPvmSt11align_val_t, (void *p, size_t n, size_t al), (p, n, al))                 \
    X(_ZdaPvmSt11align_val_t, (void *p, size_t n, size_t al), (p, n, al))                 \
    X(_ZdlPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t al, NT t), (p, al, t))        \
    X(_ZdaPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t al, NT t), (p, al, t))

#define DEFINE_NEW(sym, params, args, fallback)                \
    static void *(*real_##sym) params;                         \
    EXPORT void *sym params {                                  \
        if (!ready() || !real_##sym) return fallback;          \
        HOOKED(void *, real_##sym args, count_alloc(r_));      \
    }
#define DEFINE_DELETE(sym, params, args)                       \
    static void (*real_##sym) params;                          \
    EXPORT void sym params {                                   \
        if (!p || is_boot(p)) return;                          \
        if (!ready() || !real_##sym) { free(p); return; }      \
        if (tl_guard) { real_##sym args; return; }             \
        tl_guard = 1;                                          \
        count_free(p);                                         \
        real_##sym args;                                       \
        tl_guard = 0;                                          \
    }
CXX_NEW_FORMS(DEFINE_NEW)
CXX_DELETE_FORMS(DEFINE_DELETE)

static void resolve_cxx(void) {
#define RESOLVE_NEW(sym, params, args, fallback) real_##sym = dlsym(RTLD_NEXT, #sym);
#define RESOLVE_DELETE(sym, params, args) real_##sym = dlsym(RTLD_NEXT, #sym);
    CXX_NEW_FORMS(RESOLVE_NEW)
    CXX_DELETE_FORMS(RESOLVE_DELETE)
}

static uint64_t counted_live(void) {
    int64_t live = atomic_load_explicit(&live_bytes, memory_order_relaxed);
    return live > 0 ? (uint64_t)live : 0;
}
#endif

/* ---------------------------------------------------------------- counters */
/* The allocator's own accounting, read in both builds: in the count build
 * the live heap comes from the count and the rest (free, metadata, arenas)
 * from here. Nothing here runs on the workload's malloc paths, and the probe
 * thread never calls malloc itself: glibc would give it an arena of its own
 * and the arena count would be one too many. */
typedef void (*mi_info_fn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
                           size_t *, size_t *);
static int (*je_mallctl)(const char *, void *, size_t *, void *, size_t);
static int (*gp_property)(const char *, size_t *);
static struct mallinfo2 (*gl_mallinfo2)(void);
static int (*gl_malloc_info)(int, FILE *);
static mi_info_fn mi_info;
static unsigned polls_since_arenas;
static uint64_t glibc_arenas;
static int arenas_due;        /* polls that must read the arena count */
static uint64_t most_threads; /* the most threads seen so far */
/* Threads the program created (the probe's own excluded): while none, a
 * glibc heap has one arena, the main one. */
static _Atomic uint64_t threads_created;
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static void resolve_pthread_create(void) {
    if (!real_pthread_create)
        real_pthread_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
    resolve_pthread_create();
    if (!real_pthread_create) return ENOSYS;
    atomic_fetch_add_explicit(&threads_created, 1, memory_order_relaxed);
    return real_pthread_create(thread, attr, start, arg);
}

/* The loaded object (its base address) a function lives in, or NULL. */
static void *object_of(void *fn) {
    Dl_info info;
    return fn && dladdr(fn, &info) ? info.dli_fbase : NULL;
}

/* The object whose malloc serves the program: counters and reclaim calls
 * are taken from it only. A program that links one allocator (Debian's
 * redis-server links jemalloc) run with another preloaded (tcmalloc) maps
 * both: the linked one's mallctl would describe an idle heap. */
static void *served_by;

static void *from_server(void *fn) {
    return fn && object_of(fn) == served_by ? fn : NULL;
}

/* Where the program's calls to malloc go. In a non-PIE executable that
 * takes malloc's address (Debian's python3), dlsym finds the executable's
 * canonical PLT entry, an undefined symbol with an address, and dladdr
 * names the executable: the calls themselves go to the next definition. */
static void *serving_malloc(void) {
#ifdef ALLOCSCOPE_COUNT
    return (void *)real_malloc;
#else
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (m && dladdr1(m, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_shndx == SHN_UNDEF)
        m = dlsym(RTLD_NEXT, "malloc");
    return m;
#endif
}

static void find_counters(void) {
    void *m = serving_malloc();
    served_by = object_of(m);
    je_mallctl = from_server(dlsym(RTLD_DEFAULT, "mallctl"));
    gp_property = from_server(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
    mi_info = (mi_info_fn)from_server((void *)dlsym(RTLD_DEFAULT, "mi_process_info"));
    /* glibc's counters only mean something when malloc is glibc's own. */
    Dl_info info;
    /* allocscope's glibc shim sends malloc to glibc in a program that links
     * another allocator: glibc's counters then, not the linked one's. */
    int shim = dlsym(RTLD_DEFAULT, "allocscope_glibc_shim") != NULL;
    if (shim) je_mallctl = NULL, gp_property = NULL, mi_info = NULL;
    if (m && (shim || (dladdr(m, &info) && info.dli_fname && strstr(info.dli_fname, "libc.so")))) {
        gl_mallinfo2 = dlsym(RTLD_DEFAULT, "mallinfo2");
        gl_malloc_info = dlsym(RTLD_DEFAULT, "malloc_info");
    }
}

/* malloc_info's XML goes through a cookie stream that only counts
 * `<heap nr=` (one per arena) as it passes: created once from the
 * constructor, with a static buffer, so that reading it allocates nothing. */
static const char HEAP_TAG[] = "<heap nr=";
static unsigned heap_tag_matched;
static uint64_t heap_tags;
/* Small, so that the probe's static data fits in its data page. */
static char arena_buf[512];
static FILE *arena_stream;

static ssize_t count_heap_tags(void *cookie, const char *buf, size_t size) {
    (void)cookie;
    for (size_t i = 0; i < size; i++) {
        if (buf[i] == HEAP_TAG[heap_tag_matched]) heap_tag_matched++;
        else heap_tag_matched = buf[i] == HEAP_TAG[0];
        if (heap_tag_matched == sizeof HEAP_TAG - 1) {
            heap_tags++;
            heap_tag_matched = 0;
        }
    }
    return (ssize_t)size;
}

static void open_arena_stream(void) {
    if (!gl_malloc_info || arena_stream) return;
    cookie_io_functions_t io = {NULL, count_heap_tags, NULL, NULL};
    arena_stream = fopencookie(NULL, "w", io);
    if (arena_stream) setvbuf(arena_stream, arena_buf, _IOFBF, sizeof arena_buf);
}

static uint64_t count_glibc_arenas(void) {
    if (!arena_stream) return 0;
    heap_tags = 0;
    heap_tag_matched = 0;
    gl_malloc_info(0, arena_stream);
    fflush(arena_stream);
    return heap_tags;
}

/* The process's thread count from the link count of /proc/self/task, for
 * a few µs: a new thread may bring a new arena. By path, never through a
 * descriptor kept open: a daemon that closes every descriptor at start, or
 * reuses the number, must find nothing of ours. */
static uint64_t thread_count(void) {
    struct stat st;
    if (stat("/proc/self/task", &st) != 0 || st.st_nlink < 2) return 0;
    return (uint64_t)st.st_nlink - 2;
}

static uint64_t je_size(const char *name) {
    size_t v = 0, sz = sizeof v;
    return je_mallctl(name, &v, &sz, NULL, 0) == 0 ? (uint64_t)v : UNKNOWN;
}

static uint64_t gp_size(const char *name) {
    size_t v = 0;
    return gp_property(name, &v) ? (uint64_t)v : UNKNOWN;
}

static uint64_t minus(uint64_t a, uint64_t b) {
    if (a == UNKNOWN || b == UNKNOWN) return UNKNOWN;
    return a > b ? a - b : 0;
}

static uint64_t plus(uint64_t a, uint64_t b) {
    return a == UNKNOWN || b == UNKNOWN ? UNKNOWN : a + b;
}

/* jemalloc: free = resident - allocated - metadata (dirty pages and the
 * slack of active pages). */
static void poll_jemalloc(uint64_t *w) {
    uint64_t epoch = 1;
    size_t sz = sizeof epoch;
    je_mallctl("epoch", &epoch, &sz, &epoch, sz);
    w[W_LIVE] = je_size("stats.allocated");
    w[W_RESIDENT] = je_size("stats.resident");
    w[W_RETAINED] = je_size("stats.retained");
    w[W_METADATA] = je_size("stats.metadata");
    w[W_FREE] = minus(w[W_RESIDENT], plus(w[W_LIVE], w[W_METADATA]));
    unsigned narenas = 0;
    sz = sizeof narenas;
    if (je_mallctl("arenas.narenas", &narenas, &sz, NULL, 0) == 0) w[W_ARENAS] = narenas;
    w[W_SOURCE] = SRC_JEMALLOC;
}

/* gperftools 2.10: free = page heap + central, transfer and thread caches;
 * metadata = total_physical_bytes - (heap_size - unmapped), as its
 * MallocExtension::GetStats text computes "Bytes in malloc metadata". */
static void poll_gperftools(uint64_t *w) {
    uint64_t heap = gp_size("generic.heap_size");
    uint64_t unmapped = gp_size("tcmalloc.pageheap_unmapped_bytes");
    w[W_LIVE] = gp_size("generic.current_allocated_bytes");
    w[W_RESIDENT] = minus(heap, unmapped);
    w[W_RETAINED] = unmapped;
    w[W_FREE] = plus(plus(gp_size("tcmalloc.pageheap_free_bytes"),
                          gp_size("tcmalloc.central_cache_free_bytes")),
                     plus(gp_size("tcmalloc.transfer_cache_free_bytes"),
                          gp_size("tcmalloc.thread_cache_free_bytes")));
    w[W_METADATA] = minus(gp_size("generic.total_physical_bytes"), w[W_RESIDENT]);
    w[W_SOURCE] = SRC_GPERFTOOLS;
}

/* glibc: live = uordblks + hblkhd, free = fordblks (free chunks in every
 * arena, top chunks included, even where malloc_trim has madvised their
 * pages away); the arena count from malloc_info, which walks every arena
 * too: on the first poll, every 8th, while the thread count has just grown,
 * and at exit. */
static void poll_glibc(uint64_t *w, int final) {
    struct mallinfo2 mi = gl_mallinfo2();
    w[W_LIVE] = (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
    w[W_FREE] = (uint64_t)mi.fordblks;
    /* A program that never created a thread has the main arena alone (the
     * probe thread never mallocs): no malloc_info then, whose XML printer
     * touches some 390 KiB of libc's text, resident from then on in a
     * process of 2 MiB (PROTOCOL.md, "The probe's own footprint"). */
    if (!atomic_load_explicit(&threads_created, memory_order_relaxed)) glibc_arenas = 1;
    else if (gl_malloc_info && (final || arenas_due || glibc_arenas == 0 || ++polls_since_arenas >= 8)) {
        uint64_t n = count_glibc_arenas();
        if (n) glibc_arenas = n;
        polls_since_arenas = 0;
        if (arenas_due) arenas_due--;
    }
    if (glibc_arenas) w[W_ARENAS] = glibc_arenas;
    w[W_SOURCE] = SRC_GLIBC;
}

/* Fills the allocator's words; returns 0 when it has no counters we know. */
static int poll_allocator(uint64_t *w, int final) {
    uint64_t threads = thread_count();
    w[W_THREADS] = threads;
    if (threads > most_threads) {
        /* Read the arenas now and at the next poll: a new thread makes its
         * arena at its first malloc, which may come a little later. */
        if (most_threads) arenas_due = 2;
        most_threads = threads;
    }
    if (je_mallctl) poll_jemalloc(w);
    else if (gp_property) poll_gperftools(w);
    else if (gl_mallinfo2) poll_glibc(w, final);
    else return 0;
    return 1;
}

static int poll_counters(uint64_t *w, int final) {
#ifdef ALLOCSCOPE_COUNT
    poll_allocator(w, final);
    w[W_LIVE] = counted_live();
    if (mi_info && !je_mallctl && !gp_property && !gl_mallinfo2) {
        /* mimalloc 2.0 (no counters of its own in Debian's build):
         * current_commit is what its segments committed, whole segments
         * at a time, so free = commit - live is an upper bound. */
        size_t elapsed, user, sys, rss, peak_rss, commit, peak_commit, faults;
        mi_info(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
        w[W_RESIDENT] = commit;
        w[W_FREE] = minus(commit, w[W_LIVE]);
    }
    w[W_SOURCE] = SRC_COUNT;
    return MODE_COUNT;
#else
    if (!poll_allocator(w, final)) return MODE_NONE;
    return w[W_LIVE] == UNKNOWN ? MODE_NONE : MODE_STATS;
#endif
}

/* ---------------------------------------------------------------- common */
static void publish(const uint64_t *w) {
    if (!shm) return;
    uint64_t seq = atomic_load_explicit(&shm[W_SEQ], memory_order_relaxed);
    atomic_store_explicit(&shm[W_SEQ], seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (int i = W_PID; i < W_WORDS; i++) atomic_store_explicit(&shm[i], w[i], memory_order_relaxed);
    atomic_store_explicit(&shm[W_SEQ], seq + 2, memory_order_release);
}

/* Maps <dir>/<pid>, reusing the file after an exec (same pid). No malloc.
 * The directory belongs to the user allocscope runs as: a process that
 * dropped its privileges (setuid, then exec or fork) cannot create its file
 * there, nor open one an earlier root image made. allocscope then makes the
 * file for it, owned by its new uid, on its next tick; until then this
 * fails, and the probe thread tries again on each wake (`probe_main`). */
static void open_shm(void) {
    if (!shm_dir[0]) return;
    char path[600];
    size_t len = strlen(shm_dir);
    memcpy(path, shm_dir, len);
    path[len++] = '/';
    char digits[16];
    int n = 0;
    for (unsigned long pid = (unsigned long)getpid(); pid || n == 0; pid /= 10) digits[n++] = (char)('0' + pid % 10);
    while (n) path[len++] = digits[--n];
    path[len] = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    void *m = MAP_FAILED;
    if (ftruncate(fd, SHM_BYTES) == 0) m = mmap(NULL, SHM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    shm = m;
    atomic_store_explicit(&shm[W_MAGIC], SHM_MAGIC, memory_order_relaxed);
}

/* ---------------------------------------------------------------- reclaim */
/* Asks the allocator to return what it holds, once per request: glibc
 * malloc_trim(0), jemalloc's purge of every arena, gperftools
 * ReleaseFreeMemory, mimalloc mi_collect(true). Resolved from the
 * constructor, so the probe thread never calls dlsym (which may malloc). */
static int (*gl_trim)(size_t);
static void (*gp_release)(void);
static void (*mi_collect_fn)(int);
static int (*periodic_trim)(size_t); /* glibc:trim=DUR */
static int reclaim_at_exit;
static uint64_t reclaim_cpu_ns; /* the probe thread's CPU spent reclaiming */

static void find_reclaim(void) {
    gp_release = from_server(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
    mi_collect_fn = (void (*)(int))from_server((void *)dlsym(RTLD_DEFAULT, "mi_collect"));
    if (gl_mallinfo2) gl_trim = dlsym(RTLD_DEFAULT, "malloc_trim");
}

/* The process's RSS from /proc/self/statm, without malloc, and its
 * anonymous part (`resident - shared`: statm's shared is RssFile +
 * RssShmem, so the rest is RssAnon); UNKNOWN if unread. */
static uint64_t own_rss_bytes(uint64_t *anon) {
    *anon = UNKNOWN;
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return UNKNOWN;
    char text[128];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return UNKNOWN;
    text[n] = 0;
    const char *p = strchr(text, ' ');
    if (!p) return UNKNOWN;
    char *end;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t pages = strtoull(p + 1, &end, 10);
    if (*end == ' ') {
        uint64_t shared = strtoull(end + 1, NULL, 10);
        if (shared <= pages) *anon = (pages - shared) * page;
    }
    return pages * page;
}

/* Returns what the call could reach (word 29): mimalloc's mi_collect
 * collects the calling thread's heap and the shared caches, never the
 * heaps of the program's other threads. */
static int release_memory(void) {
    if (je_mallctl) /* MALLCTL_ARENAS_ALL */
        return je_mallctl("arena.4096.purge", NULL, NULL, NULL, 0) == 0 ? RECLAIM_PROCESS : RECLAIM_NONE;
    if (gp_release) { gp_release(); return RECLAIM_PROCESS; }
    if (mi_collect_fn) { mi_collect_fn(1); return RECLAIM_OWN_THREAD; }
    if (gl_trim) { gl_trim(0); return RECLAIM_PROCESS; }
    return RECLAIM_NONE;
}

/* One reclaim: RSS just before and after, and when, in the words. An
 * allocator without a release call answers with unknown sizes. */
static uint64_t timeval_ns(struct timeval tv) {
    return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

static void reclaim(uint64_t *w) {
    uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    struct rusage ru0, ru1;
    int timed = getrusage(RUSAGE_THREAD, &ru0) == 0;
    w[W_RECLAIM_START_NS] = now_ns(CLOCK_MONOTONIC);
    /* What the allocator held just before, from the poll the caller made
     * right before this call: what the test could return. */
    uint64_t free_before = w[W_FREE], live_before = w[W_LIVE];
    uint64_t anon_before, anon_after;
    uint64_t before = own_rss_bytes(&anon_before);
    int kind = release_memory(), done = kind != RECLAIM_NONE;
    uint64_t after = own_rss_bytes(&anon_after);
    w[W_RECLAIM_END_NS] = now_ns(CLOCK_MONOTONIC);
    /* Its CPU time, user and system apart, so that the run's own can leave it out. */
    if (timed && getrusage(RUSAGE_THREAD, &ru1) == 0) {
        w[W_RECLAIM_USER_NS] = timeval_ns(ru1.ru_utime) - timeval_ns(ru0.ru_utime);
        w[W_RECLAIM_SYS_NS] = timeval_ns(ru1.ru_stime) - timeval_ns(ru0.ru_stime);
    }
    w[W_RECLAIM_RSS_BEFORE] = done ? before : UNKNOWN;
    w[W_RECLAIM_RSS_AFTER] = done ? after : UNKNOWN;
    w[W_RECLAIM_FREE_BEFORE] = done ? free_before : UNKNOWN;
    w[W_RECLAIM_LIVE_BEFORE] = done ? live_before : UNKNOWN;
    w[W_RECLAIM_ANON_BEFORE] = done ? anon_before : UNKNOWN;
    w[W_RECLAIM_ANON_AFTER] = done ? anon_after : UNKNOWN;
    w[W_RECLAIM_KIND] = (uint64_t)kind;
    w[W_RECLAIMS]++;
    reclaim_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
}

/* ---------------------------------------------------------------- probe thread */
/* The words and the right to publish them belong to whoever holds the lock:
 * the probe thread, or the exit handler for the last poll. */
static pthread_mutex_t poll_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t words[W_WORDS];
static int exiting;

static void reset_words(void) {
    for (int i = 0; i < W_WORDS; i++) words[i] = 0;
    words[W_RESIDENT] = words[W_RETAINED] = words[W_FREE] = words[W_METADATA] = UNKNOWN;
    words[W_RECLAIM_RSS_BEFORE] = words[W_RECLAIM_RSS_AFTER] = UNKNOWN;
    words[W_RECLAIM_FREE_BEFORE] = words[W_RECLAIM_LIVE_BEFORE] = UNKNOWN;
    words[W_RECLAIM_ANON_BEFORE] = words[W_RECLAIM_ANON_AFTER] = UNKNOWN;
    words[W_PID] = (uint64_t)getpid();
}

/* One poll of the counters; returns its CPU cost. Called with the lock held. */
static uint64_t poll_once(int final) {
    uint64_t start = now_ns(CLOCK_MONOTONIC);
    uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    words[W_MODE] = (uint64_t)poll_counters(words, final);
    uint64_t cost = now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    words[W_POLLS]++;
    words[W_POLL_COST_NS] = cost;
    /* When this reading began and was complete: under contention a poll
     * can wait seconds for the allocator's locks (glibc's mallinfo2 takes
     * every arena's mutex in turn, and busy threads re-take them first),
     * so its figures describe that whole span; the sampler judges the age. */
    words[W_POLL_START_NS] = start;
    words[W_POLLED_NS] = now_ns(CLOCK_MONOTONIC);
    return cost;
}

static void publish_now(void) {
    uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
    words[W_CPU_NS] = cpu > reclaim_cpu_ns ? cpu - reclaim_cpu_ns : 0;
    words[W_UPDATED_NS] = now_ns(CLOCK_MONOTONIC);
    publish(words);
}

static uint64_t requested_reclaims(void) {
    return shm ? atomic_load_explicit(&shm[W_REQUEST], memory_order_acquire) : 0;
}

/* The thread sleeps on `wake` (CLOCK_MONOTONIC) under the poll lock, so
 * that it can be stopped at once: before a call whose effect depends on
 * the process having one thread or threads of equal credentials
 * (`pause_probe`). */
static pthread_cond_t wake;
static pthread_t probe_thread;
static int thread_running, stopping;
static pid_t thread_pid;          /* the process the running thread belongs to */
static int probe_state;           /* STATE_*: once off, the thread never starts again */
static pthread_mutex_t cred_lock = PTHREAD_MUTEX_INITIALIZER; /* `pause_probe` */

static void *probe_main(void *arg) {
    (void)arg;
    uint64_t interval_ns = (uint64_t)interval_ms * 1000000ull;
    uint64_t trim_ns = (uint64_t)trim_ms * 1000000ull;
    uint64_t now = now_ns(CLOCK_MONOTONIC), next_poll = now, next_trim = now + trim_ns;
    pthread_mutex_lock(&poll_lock);
    while (!exiting && !stopping) {
        now = now_ns(CLOCK_MONOTONIC);
        if (!shm && shm_dir[0]) {
            open_shm(); /* a failed open costs a few microseconds */
            if (shm) next_poll = now;
        }
        if (periodic_trim && now >= next_trim) {
            periodic_trim(0);
            words[W_TRIMS]++;
            next_trim = now + trim_ns;
        }
        if (shm && words[W_RECLAIMS] < requested_reclaims()) {
            poll_once(0); /* the free memory the test could return, now */
            reclaim(words);
        }
        if (shm && now >= next_poll) {
            uint64_t cost = poll_once(0);
            /* Stay within the budget: a poll costing c waits at least c / budget. */
            uint64_t wait = (uint64_t)((double)cost / budget);
            next_poll = now + (wait > interval_ns ? wait : interval_ns);
        }
        publish_now();
        /* Wake at least every interval: a reclaim request is answered
         * within one, whatever the budget does to the polls. */
        uint64_t until = shm ? next_poll : next_trim;
        /* Without its file yet, the next try is an interval away. */
        if (!shm && shm_dir[0] && (!trim_ns || until > now + interval_ns)) until = now + interval_ns;
        if (shm && until > now + interval_ns) until = now + interval_ns;
        if (trim_ns && next_trim < until) until = next_trim;
        if (until <= now_ns(CLOCK_MONOTONIC)) until = now_ns(CLOCK_MONOTONIC) + 1000000ull;
        struct timespec ts = {(time_t)(until / 1000000000ull), (long)(until % 1000000000ull)};
        while (!exiting && !stopping && pthread_cond_timedwait(&wake, &poll_lock, &ts) == 0) {
        }
    }
    pthread_mutex_unlock(&poll_lock);
    return NULL;
}

/* At exit (main returned or exit() was called): one last poll, so that a
 * short run's arenas are counted as they ended, then the reclaim test when
 * the run asked for it at exit. The probe thread stops polling: the
 * allocator may be torn down after us. Nothing at all once a seccomp
 * filter is in place: the poll's own system calls might be refused and
 * kill the process. */
__attribute__((destructor)) static void probe_exit(void) {
    if (!shm || probe_state == STATE_SECCOMP) return;
    pthread_mutex_lock(&poll_lock);
    exiting = 1;
    pthread_cond_signal(&wake);
    uint64_t cost = poll_once(1);
    if (reclaim_at_exit && words[W_RECLAIMS] == 0) reclaim(words);
    /* Not publish_now: this is the exiting thread, whose CPU clock is the
     * program's own, not the probe's. The probe's CPU is what its thread
     * last published plus this last poll. */
    words[W_CPU_NS] += cost;
    words[W_UPDATED_NS] = now_ns(CLOCK_MONOTONIC);
    publish(words);
    pthread_mutex_unlock(&poll_lock);
}

/* The condition variable the probe thread sleeps on, made anew in a forked
 * child: the parent's copy records the parent's waiting thread, which does
 * not exist in the child, and glibc's condition variables wait for their
 * waiters to leave, so a signal or a timed wait on it could block. */
static void init_wake(void) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &attr);
    pthread_condattr_destroy(&attr);
}

/* Publishes why the probe stopped for good in this process (word 28);
 * called with no probe thread running, so this is the only writer. */
static void turn_off(int why) {
    probe_state = why;
    words[W_STATE] = (uint64_t)why;
    words[W_UPDATED_NS] = now_ns(CLOCK_MONOTONIC);
    publish(words);
}

/* The thread is joinable, so that `stop_thread` can wait for its end; it
 * blocks every signal, so the workload's signals go to its own threads.
 * A refused thread (RLIMIT_NPROC, a thread limit) turns the probe off:
 * the program runs as it would without it. */
static void start_thread(void) {
    if ((!shm_dir[0] && trim_ms <= 0) || probe_state != STATE_ON) return;
    if (!shm) open_shm();
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return;
    pthread_attr_setstacksize(&attr, 256 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    resolve_pthread_create();
    int err = real_pthread_create ? real_pthread_create(&probe_thread, &attr, probe_main, NULL) : ENOSYS;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (err == 0) {
        thread_running = 1;
        thread_pid = getpid();
    } else {
        turn_off(STATE_NO_THREAD);
    }
}

/* Stops this process's probe thread and waits for its end; returns 1 if
 * one ran. A vfork child (same memory, another pid) leaves its parent's
 * thread alone. */
static int stop_thread(void) {
    if (!thread_running || thread_pid != getpid()) return 0;
    uint64_t alive = thread_count();
    pthread_mutex_lock(&poll_lock);
    stopping = 1;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&poll_lock);
    pthread_join(probe_thread, NULL);
    /* The join returns once the thread cleared its tid, which is before
     * the kernel takes it out of the thread group: until then a call that
     * needs a single thread (unshare(CLONE_NEWUSER)) fails with EINVAL, as
     * a loaded machine showed. Wait for the group to shrink, 1 s at most. */
    for (int i = 0; i < 10000 && alive && thread_count() >= alive; i++) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    stopping = 0;
    thread_running = 0;
    return 1;
}

/* In a forked child only the forking thread exists: drop the parent's
 * mapping, open this pid's own file and start a new probe thread. */
static void after_fork_child(void) {
    if (shm) munmap((void *)shm, SHM_BYTES);
    shm = NULL;
    thread_running = 0;
    stopping = 0;
    pthread_mutex_init(&poll_lock, NULL);
    pthread_mutex_init(&cred_lock, NULL); /* a call another thread was inside */
    init_wake();
    reset_words();
    words[W_STATE] = (uint64_t)probe_state;
    most_threads = 0;
    reclaim_cpu_ns = 0;
    if (probe_state == STATE_NO_THREAD) probe_state = STATE_ON; /* a new process may have room */
    start_thread();
}

/* ---------------------------------------------------------------- credentials */
/* glibc's setuid family changes every thread's credentials by signalling
 * each thread, and aborts the process if one thread's change fails where
 * another's succeeded. A probe thread started before a per-thread change
 * (capset, PR_SET_KEEPCAPS: what setpriv, su-like launchers and daemons
 * dropping privileges do) would fail the next setresgid where the caller
 * succeeds: the program dies of SIGABRT. unshare(CLONE_NEWUSER) and setns
 * into a user namespace refuse a multithreaded caller. So each of these
 * calls runs with the probe thread stopped; a new one starts after it,
 * created by the calling thread, so with its credentials and namespaces.
 * A seccomp filter stops the probe for good: its polls' system calls might
 * be refused. The shared-memory file stays mapped: a file mapped before a
 * uid change remains writable after it. */
/* 0: not held (another thread is inside such a call: the probe is already
 * stopped); 1: held, no thread was running; 2: held, the thread stopped. */
static int pause_probe(void) {
    if (pthread_mutex_trylock(&cred_lock) != 0) return 0;
    return 1 + stop_thread();
}

static void resume_probe(int paused, int off) {
    if (!paused) return;
    if (off) turn_off(off);
    else if (paused == 2) start_thread();
    pthread_mutex_unlock(&cred_lock);
}

#define AROUND_CALL(ret, name, params, args, off)                        \
    EXPORT ret name params {                                             \
        static ret(*real) params;                                        \
        if (!real) real = (ret(*) params)dlsym(RTLD_NEXT, #name);        \
        if (!real) { errno = ENOSYS; return -1; }                        \
        int paused = pause_probe();                                      \
        ret result_ = real args;                                               \
        int saved = errno;                                               \
        resume_probe(paused, off);                                       \
        errno = saved;                                                   \
        return result_;                                                  \
    }
AROUND_CALL(int, setuid, (uid_t u), (u), 0)
AROUND_CALL(int, setgid, (gid_t g), (g), 0)
AROUND_CALL(int, seteuid, (uid_t u), (u), 0)
AROUND_CALL(int, setegid, (gid_t g), (g), 0)
AROUND_CALL(int, setreuid, (uid_t r, uid_t e), (r, e), 0)
AROUND_CALL(int, setregid, (gid_t r, gid_t e), (r, e), 0)
AROUND_CALL(int, setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s), 0)
AROUND_CALL(int, setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s), 0)
AROUND_CALL(int, setgroups, (size_t n, const gid_t *list), (n, list), 0)
AROUND_CALL(int, initgroups, (const char *user, gid_t g), (user, g), 0)
AROUND_CALL(int, capset, (void *header, const void *data), (header, data), 0)
AROUND_CALL(int, unshare, (int flags), (flags), 0)
AROUND_CALL(int, setns, (int fd, int type), (fd, type), 0)

/* What a prctl or a raw system call means for the probe thread: 0 nothing,
 * 1 run it with the thread stopped, 2 stop the probe for good. */
static int prctl_class(long option) {
    switch (option) {
    case PR_SET_KEEPCAPS: case PR_SET_SECUREBITS: case PR_CAPBSET_DROP: case PR_CAP_AMBIENT:
        return 1;
    case PR_SET_SECCOMP:
        return 2;
    default:
        return 0;
    }
}

static int syscall_class(long nr, long first) {
    switch (nr) {
    case SYS_setuid: case SYS_setgid: case SYS_setreuid: case SYS_setregid:
    case SYS_setresuid: case SYS_setresgid: case SYS_setgroups: case SYS_capset:
    case SYS_unshare: case SYS_setns:
        return 1;
    case SYS_seccomp:
        return 2;
    case SYS_prctl:
        return prctl_class(first);
    default:
        return 0;
    }
}

static int (*real_prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
static long (*real_syscall)(long, long, long, long, long, long, long);

/* prctl and syscall are variadic; the kernel takes at most 4 and 6 more
 * words, which are passed on as they came (glibc's own wrappers do the
 * same). */
EXPORT int prctl(int option, ...) {
    va_list ap;
    va_start(ap, option);
    unsigned long a[4];
    for (int i = 0; i < 4; i++) a[i] = va_arg(ap, unsigned long);
    va_end(ap);
    if (!real_prctl) real_prctl = (int (*)(int, unsigned long, unsigned long, unsigned long, unsigned long))dlsym(RTLD_NEXT, "prctl");
    if (!real_prctl) { errno = ENOSYS; return -1; }
    int cls = prctl_class(option);
    if (!cls) return real_prctl(option, a[0], a[1], a[2], a[3]);
    int paused = pause_probe();
    int r = real_prctl(option, a[0], a[1], a[2], a[3]);
    int saved = errno;
    resume_probe(paused, cls == 2 && r == 0 ? STATE_SECCOMP : 0);
    errno = saved;
    return r;
}

static int real_prctl_get_seccomp(void) {
    if (!real_prctl) real_prctl = (int (*)(int, unsigned long, unsigned long, unsigned long, unsigned long))dlsym(RTLD_NEXT, "prctl");
    return real_prctl ? real_prctl(PR_GET_SECCOMP, 0, 0, 0, 0) : 0;
}

EXPORT long syscall(long nr, ...) {
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    if (!real_syscall) real_syscall = (long (*)(long, long, long, long, long, long, long))dlsym(RTLD_NEXT, "syscall");
    if (!real_syscall) { errno = ENOSYS; return -1; }
    int cls = syscall_class(nr, a[0]);
    if (!cls) return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    int paused = pause_probe();
    long r = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
    int saved = errno;
    resume_probe(paused, cls == 2 && r == 0 ? STATE_SECCOMP : 0);
    errno = saved;
    return r;
}

static long env_long(const char *name, long fallback) {
    const char *text = getenv(name);
    if (!text || !*text) return fallback;
    char *end;
    long v = strtol(text, &end, 10);
    return *end == 0 && v >= 0 ? v : fallback;
}

__attribute__((constructor)) static void probe_init(void) {
#ifdef ALLOCSCOPE_COUNT
    resolve();
#endif
    find_counters();
    find_reclaim();
    /* Initialise the allocator first, so that its own fork handlers are
     * registered before ours and run before ours in the child. */
    free(malloc(1));
    const char *dir = getenv("ALLOCSCOPE_PROBE_SHM");
    if (dir && strlen(dir) < sizeof shm_dir) strcpy(shm_dir, dir);
    interval_ms = env_long("ALLOCSCOPE_PROBE_INTERVAL_MS", 50);
    if (interval_ms < 1) interval_ms = 1;
    trim_ms = env_long("ALLOCSCOPE_PROBE_TRIM_MS", 0);
    long permille = env_long("ALLOCSCOPE_PROBE_BUDGET_PERMILLE", 10);
    budget = permille > 0 ? (double)permille / 1000.0 : 0.01;
    if (trim_ms > 0) periodic_trim = dlsym(RTLD_DEFAULT, "malloc_trim");
    reclaim_at_exit = env_long("ALLOCSCOPE_PROBE_RECLAIM_AT_EXIT", 0) > 0;
    if (!shm_dir[0] && trim_ms <= 0) return;
    init_wake();
    open_arena_stream();
    reset_words();
    pthread_atfork(NULL, NULL, after_fork_child);
    /* An image exec'd under a seccomp filter (it outlives exec) gets no
     * probe thread and opens no file: what the filter allows is unknown. */
    if (real_prctl_get_seccomp() == 2) {
        probe_state = STATE_SECCOMP;
        return;
    }
    start_thread();
}
