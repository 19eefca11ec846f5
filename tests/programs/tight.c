/* A tight multithreaded malloc/free loop: THREADS threads each replace
 * blocks of 16-512 B in a ring of 64, OPS times. The worst case for an
 * interposer: nothing but allocator calls.
 * usage: tight [THREADS=2] [OPS=20000000] */
#include <pthread.h>
#include <stdlib.h>

static long ops;

static void *loop(void *arg) {
    unsigned seed = (unsigned)(size_t)arg;
    void *ring[64] = {0};
    for (long i = 0; i < ops; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned slot = (unsigned)i & 63;
        free(ring[slot]);
        ring[slot] = malloc(16 + (seed >> 16) % 497);
        if (ring[slot]) *(volatile char *)ring[slot] = 1;
    }
    for (int i = 0; i < 64; i++) free(ring[i]);
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    ops = argc > 2 ? atol(argv[2]) : 20000000L;
    pthread_t t[64];
    if (threads < 1 || threads > 64) return 2;
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, loop, (void *)(size_t)(i + 1));
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    return 0;
}
