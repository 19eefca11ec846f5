/* Multithreaded: THREADS threads allocate blocks of 16 B - 64 KiB (skewed
 * small) into a working set replaced in random order; every fourth block is
 * handed to the next thread to free (cross-thread frees).
 * usage: threads [THREADS=8] [OPS=300000] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKING_SET 1000
#define INBOX 4096

struct inbox { pthread_mutex_t lock; void *items[INBOX]; int count; };
static struct inbox *inboxes;
static int nthreads;
static long ops;

static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s;
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
    void *live[WORKING_SET] = {0};
    struct inbox *mine = &inboxes[id], *next = &inboxes[(id + 1) % nthreads];
    for (long op = 0; op < ops; op++) {
        unsigned shift = 4 + next_random(&rng) % 13;
        size_t size = ((size_t)1 << shift) + next_random(&rng) % ((size_t)1 << shift);
        if (size > 65536) size = 65536;
        char *block = malloc(size);
        memset(block, (int)op, size < 256 ? size : 256);
        size_t slot = next_random(&rng) % WORKING_SET;
        void *old = live[slot];
        live[slot] = block;
        if (old && op % 4 == 0) {
            pthread_mutex_lock(&next->lock);
            if (next->count < INBOX) { next->items[next->count++] = old; old = NULL; }
            pthread_mutex_unlock(&next->lock);
        }
        free(old);
        if (op % 256 == 0) drain(mine);
    }
    drain(mine);
    for (int i = 0; i < WORKING_SET; i++) free(live[i]);
    return NULL;
}

int main(int argc, char **argv) {
    nthreads = argc > 1 ? atoi(argv[1]) : 8;
    ops = argc > 2 ? atol(argv[2]) : 300000;
    inboxes = calloc((size_t)nthreads, sizeof *inboxes);
    pthread_t *tids = calloc((size_t)nthreads, sizeof *tids);
    for (int i = 0; i < nthreads; i++) pthread_mutex_init(&inboxes[i].lock, NULL);
    for (long i = 0; i < nthreads; i++) pthread_create(&tids[i], NULL, worker, (void *)i);
    for (int i = 0; i < nthreads; i++) pthread_join(tids[i], NULL);
    for (int i = 0; i < nthreads; i++) drain(&inboxes[i]);
    printf("threads=%d ops=%ld\n", nthreads, ops);
    return 0;
}
