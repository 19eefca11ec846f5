/* Allocates STEPS blocks of 16 MiB (touched), printing after each a marker
 * line `allocscope:mark step-N` and a progress line `MemoryCheck: event N`,
 * flushing, then pausing PAUSE_MS so the tree is measured while it holds
 * exactly N blocks. Then a forked child prints `allocscope:mark child-done`
 * after the parent has exited (stdout is inherited: the pipe stays open),
 * then a last line without a newline.
 * Usage: marks STEPS PAUSE_MS */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 4;
    int pause_ms = argc > 2 ? atoi(argv[2]) : 100;
    size_t block = (size_t)16 << 20;
    for (int i = 1; i <= steps; i++) {
        char *p = malloc(block);
        if (!p) return 1;
        memset(p, i, block);
        printf("working on step %d\n", i);
        printf("allocscope:mark step-%d\n", i);
        printf("MemoryCheck: event %d rss-follows\n", i);
        fflush(stdout);
        usleep(pause_ms * 1000);
    }
    pid_t child = fork();
    if (child == 0) {
        usleep(100 * 1000);
        printf("allocscope:mark child-done\n");
        printf("tail-without-newline");
        fflush(stdout);
        return 0;
    }
    printf("parent-exits\n");
    fflush(stdout);
    return 0;
}
