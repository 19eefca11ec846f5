/* THREADS threads each allocate, then all wait together (no thread exits
 * and hands its arena back before the others have taken one), hold for
 * HOLD_MS so a sampler can see them, and free. The main thread then prints
 * what the allocator made of the CPU count and what the C library sees:
 *   cpus online=2 nprocs=2 affinity=1
 *   glibc arenas=16            (malloc_info: one <heap nr= per arena)
 *   jemalloc opt.narenas=8 arenas.narenas=9   (mallctl)
 *   tcmalloc max_total_thread_cache_bytes=33554432
 *   mimalloc (no CPU-derived figure to read)
 * usage: arena_threads [THREADS=25] [HOLD_MS=1500] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t all_allocated, report_done;
static long hold_ms;

static void *worker(void *arg) {
    (void)arg;
    void *blocks[64];
    for (int i = 0; i < 64; i++) {
        blocks[i] = malloc(1024);
        memset(blocks[i], i, 1024);
    }
    pthread_barrier_wait(&all_allocated);
    pthread_barrier_wait(&report_done);
    for (int i = 0; i < 64; i++) free(blocks[i]);
    return NULL;
}

static long glibc_arenas(void) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return -1;
    malloc_info(0, f);
    fclose(f);
    long n = 0;
    for (const char *s = text; s && (s = strstr(s, "<heap nr=")); s++) n++;
    free(text);
    return n;
}

/* Which allocator serves malloc: the preloaded one exports its own API. */
static void report_allocator(void) {
    int (*mallctl)(const char *, void *, size_t *, void *, size_t) = dlsym(RTLD_DEFAULT, "mallctl");
    int (*property)(const char *, size_t *) = dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
    if (mallctl) {
        /* arenas.narenas counts the arena for huge requests too: one more
         * than the option. */
        unsigned option = 0, total = 0;
        size_t sz = sizeof option;
        mallctl("opt.narenas", &option, &sz, NULL, 0);
        sz = sizeof total;
        mallctl("arenas.narenas", &total, &sz, NULL, 0);
        printf("jemalloc opt.narenas=%u arenas.narenas=%u\n", option, total);
    } else if (property) {
        size_t bytes = 0;
        if (property("tcmalloc.max_total_thread_cache_bytes", &bytes))
            printf("tcmalloc max_total_thread_cache_bytes=%zu\n", bytes);
    } else if (dlsym(RTLD_DEFAULT, "mi_version")) {
        printf("mimalloc (no CPU-derived figure to read)\n");
    } else {
        printf("glibc arenas=%ld\n", glibc_arenas());
    }
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 25;
    hold_ms = argc > 2 ? atol(argv[2]) : 1500;
    if (threads < 1) threads = 1;
    free(malloc(1)); /* the main thread takes the main arena first */
    pthread_barrier_init(&all_allocated, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&report_done, NULL, (unsigned)threads + 1);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    for (int i = 0; i < threads; i++) pthread_create(&tids[i], NULL, worker, NULL);
    pthread_barrier_wait(&all_allocated);
    cpu_set_t set;
    int affinity = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    printf("cpus online=%ld nprocs=%d affinity=%d\n", sysconf(_SC_NPROCESSORS_ONLN), get_nprocs(), affinity);
    report_allocator();
    fflush(stdout);
    struct timespec hold = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    nanosleep(&hold, NULL);
    pthread_barrier_wait(&report_done);
    for (int i = 0; i < threads; i++) pthread_join(tids[i], NULL);
    free(tids);
    return 0;
}
