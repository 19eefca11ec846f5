/* Memory that grows for a while, then holds, until killed.
 * Blocks are 2 KiB, beyond glibc's tcache (whose cached blocks its counters
 * count as in use).
 * usage: grow leak|arenas STEP_MS MIB [STEPS=15]
 * leak: each step mallocs and touches MIB MiB more, never freed: the live
 *   heap grows with the memory.
 * arenas: each step wakes a thread of its own (15 threads waiting from the
 *   start), whose first malloc makes glibc give it a new arena; it
 *   allocates MIB MiB in 2 KiB blocks and frees all but the last, which
 *   pins the arena's heap, and frees a block of the main thread's reserve
 *   as big as what the step adds to glibc's in-use count: the live heap
 *   stays flat while glibc keeps each arena's freed
 *   memory (fragmentation), one arena more each step. */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_STEPS 64
#define BLOCK 2048
/* One chunk of 4976 B: what glibc's counters add to the in-use total for
 * each new arena: a 2048 B block's chunk (2064), the thread's tcache
 * (656), and the arena's own header (2256). */
#define RESERVE 4960
static long mib;
static sem_t go[MAX_STEPS];
static void *reserve[MAX_STEPS];

static void *arena_step(void *arg) {
    long k = (long)arg;
    sem_wait(&go[k]);
    size_t n = ((size_t)mib << 20) / BLOCK;
    void **blocks = malloc(n * sizeof *blocks);
    for (size_t i = 0; i < n; i++) {
        blocks[i] = malloc(BLOCK);
        memset(blocks[i], 7, BLOCK);
    }
    for (size_t i = 0; i + 1 < n; i++) free(blocks[i]);
    free(blocks);
    free(reserve[k]);
    for (;;) pause();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int leak = strcmp(argv[1], "leak") == 0;
    long step_ms = atol(argv[2]);
    mib = atol(argv[3]);
    long steps = argc > 4 ? atol(argv[4]) : 15;
    if (steps > MAX_STEPS) steps = MAX_STEPS;
    pthread_t threads[MAX_STEPS];
    for (long k = 0; !leak && k < steps; k++) {
        reserve[k] = malloc(RESERVE);
        memset(reserve[k], 1, RESERVE);
        sem_init(&go[k], 0, 0);
        pthread_create(&threads[k], NULL, arena_step, (void *)k);
    }
    for (long k = 0; k < steps; k++) {
        usleep(step_ms * 1000);
        if (leak) {
            char *p = malloc((size_t)mib << 20);
            memset(p, 7, (size_t)mib << 20);
        } else {
            sem_post(&go[k]);
        }
    }
    for (;;) pause();
}
