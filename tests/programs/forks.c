/* Multi-process: forks CHILDREN children that each allocate and touch MIB MiB
 * of private memory, hold it for HOLD_MS, and exit; the parent waits for
 * them, or with WAIT=0 exits at once and leaves them running.
 * usage: forks [CHILDREN=4] [MIB=64] [HOLD_MS=1500] [WAIT=1] */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int children = argc > 1 ? atoi(argv[1]) : 4;
    long mib = argc > 2 ? atol(argv[2]) : 64;
    long hold_ms = argc > 3 ? atol(argv[3]) : 1500;
    int wait_for_children = argc > 4 ? atoi(argv[4]) : 1;
    for (int i = 0; i < children; i++) {
        if (fork() == 0) {
            size_t size = (size_t)mib << 20;
            /* volatile: the compiler may not drop an allocation never read. */
            char *volatile block = malloc(size);
            memset(block, i + 1, size);
            struct timespec ts = {hold_ms / 1000, (hold_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
            int last = block[size - 1];
            free(block);
            _exit(last == i + 1 ? 0 : 1);
        }
    }
    while (wait_for_children && wait(NULL) > 0) {}
    return 0;
}
