/* A daemon's shape: the process forks one worker and waits for it; the
 * worker allocates MIB MiB in 4 KiB blocks with malloc, writes them,
 * holds them for HOLD_MS and exits. Built with -ljemalloc it is served by
 * jemalloc unless something preloaded replaces its malloc.
 * usage: forked_worker [MIB=48] [HOLD_MS=800] */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long mib = argc > 1 ? atol(argv[1]) : 48;
    long hold_ms = argc > 2 ? atol(argv[2]) : 800;
    pid_t worker = fork();
    if (worker < 0) return 1;
    if (worker > 0) {
        int status = 0;
        if (waitpid(worker, &status, 0) < 0) return 1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    size_t blocks = (size_t)mib * 256;
    char **held = malloc(blocks * sizeof *held);
    if (!held) return 1;
    for (size_t i = 0; i < blocks; i++) {
        held[i] = malloc(4096);
        if (!held[i]) return 1;
        memset(held[i], 1, 4096);
    }
    struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    for (size_t i = 0; i < blocks; i++) free(held[i]);
    free(held);
    return 0;
}
