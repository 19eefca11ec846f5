/* Threads serialized on their arena: THREADS threads each do OPS rounds of
 * WORK_US microseconds of computing (no lock), then, holding the lock of
 * the malloc arena their blocks come from, allocate a 4 KiB block, wait
 * HOLD_US microseconds with it (a request's buffer held across a wait) and
 * free it. Threads that share an arena share its lock, as glibc's threads
 * share an arena's mutex: under glibc's default each thread has an arena
 * of its own and they wait side by side; under glibc.malloc.arena_max=1
 * they wait one after another. The CPU spent is the same either way; the
 * time taken is not. An arena is told by where its blocks live: glibc's
 * other arenas are heaps aligned to 64 MiB, the main arena is the brk heap.
 * usage: arena_serial [THREADS=16] [OPS=20] [WORK_US=20000] [HOLD_US=5000] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 64
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uintptr_t key; pthread_mutex_t lock; } arenas[SLOTS];
static int narenas;
static long ops, work_us, hold_us;
static uintptr_t brk_start;

static pthread_mutex_t *arena_lock(uintptr_t key) {
    pthread_mutex_lock(&table_lock);
    int i = 0;
    while (i < narenas && arenas[i].key != key) i++;
    if (i == narenas && narenas < SLOTS) {
        arenas[i].key = key;
        pthread_mutex_init(&arenas[i].lock, NULL);
        narenas++;
    }
    pthread_mutex_unlock(&table_lock);
    return &arenas[i < SLOTS ? i : SLOTS - 1].lock;
}

static uint64_t spin(long us, uint64_t s) {
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    for (;;) {
        for (int k = 0; k < 4096; k++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
        if ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 >= us) return s;
    }
}

static void *worker(void *arg) {
    uint64_t s = (uint64_t)(size_t)arg * 0x9E3779B97F4A7C15ull;
    /* The arena this thread's blocks come from. */
    void *probe = malloc(4096);
    uintptr_t at = (uintptr_t)probe;
    uintptr_t key = at >= brk_start && at < (uintptr_t)sbrk(0) ? 0 : at & ~((uintptr_t)(64 << 20) - 1);
    free(probe);
    pthread_mutex_t *lock = arena_lock(key);
    for (long i = 0; i < ops; i++) {
        s = spin(work_us, s);
        pthread_mutex_lock(lock);
        char *block = malloc(4096);
        if (block) memset(block, (int)s, 4096);
        usleep((useconds_t)hold_us);
        free(block);
        pthread_mutex_unlock(lock);
    }
    return (void *)(uintptr_t)(s & 1);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    ops = argc > 2 ? atol(argv[2]) : 20;
    work_us = argc > 3 ? atol(argv[3]) : 20000;
    hold_us = argc > 4 ? atol(argv[4]) : 5000;
    if (threads < 1 || threads > 64) return 2;
    brk_start = (uintptr_t)sbrk(0);
    free(malloc(1)); /* the main arena's heap starts here */
    pthread_t t[64];
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, (void *)(size_t)(i + 1));
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    printf("threads=%d arenas=%d\n", threads, narenas);
    return 0;
}
