/* Many arenas, briefly: THREADS threads run for MS milliseconds, each
 * allocating blocks of 64 B - 16 KiB into a working set of its own and
 * handing every other replaced block to the next thread to free (so glibc
 * frees it into the arena of the thread that allocated it). When time is up
 * each thread frees its working set except one block in sixteen, which stays
 * live to the end and pins pages of every arena; the program then prints
 * `allocscope:mark freed`, holds what it still has for HOLD_MS milliseconds
 * and exits. Under glibc on a 2-core machine it makes 16 arenas (8 per CPU).
 * usage: arena_handoff [THREADS=25] [MS=1500] [HOLD_MS=0] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORKING_SET 2048
#define INBOX 1024

struct inbox { pthread_mutex_t lock; void *items[INBOX]; int count; };
static struct inbox *inboxes;
static int nthreads;
static double seconds;
static pthread_barrier_t started;

static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void drain(struct inbox *box) {
    pthread_mutex_lock(&box->lock);
    for (int i = 0; i < box->count; i++) free(box->items[i]);
    box->count = 0;
    pthread_mutex_unlock(&box->lock);
}

static void *worker(void *arg) {
    long id = (long)arg;
    uint64_t rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(id + 1);
    void **live = calloc(WORKING_SET, sizeof *live);
    struct inbox *mine = &inboxes[id], *next = &inboxes[(id + 1) % nthreads];
    pthread_barrier_wait(&started);
    double end = now_s() + seconds;
    for (long op = 0;; op++) {
        if (op % 1024 == 0 && now_s() >= end) break;
        size_t size = 64u << (next_random(&rng) % 9); /* 64 B .. 16 KiB */
        char *block = malloc(size);
        memset(block, (int)op, size);
        size_t slot = next_random(&rng) % WORKING_SET;
        void *old = live[slot];
        live[slot] = block;
        if (old && op % 2 == 0) {
            pthread_mutex_lock(&next->lock);
            if (next->count < INBOX) { next->items[next->count++] = old; old = NULL; }
            pthread_mutex_unlock(&next->lock);
        }
        free(old);
        if (op % 128 == 0) drain(mine);
    }
    drain(mine);
    for (int i = 0; i < WORKING_SET; i++)
        if (i % 16) free(live[i]);
    return live; /* one block in sixteen stays live */
}

int main(int argc, char **argv) {
    nthreads = argc > 1 ? atoi(argv[1]) : 25;
    seconds = (argc > 2 ? atof(argv[2]) : 1500) / 1000.0;
    double hold_s = (argc > 3 ? atof(argv[3]) : 0) / 1000.0;
    if (nthreads < 1) nthreads = 1;
    inboxes = calloc((size_t)nthreads, sizeof *inboxes);
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    void **kept = calloc((size_t)nthreads, sizeof *kept);
    pthread_barrier_init(&started, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++) pthread_mutex_init(&inboxes[i].lock, NULL);
    for (long i = 0; i < nthreads; i++) pthread_create(&tids[i], NULL, worker, (void *)i);
    for (int i = 0; i < nthreads; i++) pthread_join(tids[i], &kept[i]);
    for (int i = 0; i < nthreads; i++) drain(&inboxes[i]);
    printf("allocscope:mark freed\n");
    fflush(stdout);
    if (hold_s > 0) {
        struct timespec ts = {(time_t)hold_s, (long)((hold_s - (double)(time_t)hold_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    printf("threads=%d ms=%.0f\n", nthreads, seconds * 1000);
    return 0;
}
