/* Crashes (SIGSEGV) when LD_PRELOAD contains WORD, else exits with CODE.
 * usage: crash_under WORD [CODE=0] */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *preload = getenv("LD_PRELOAD");
    if (argc > 1 && preload && strstr(preload, argv[1])) raise(SIGSEGV);
    return argc > 2 ? atoi(argv[2]) : 0;
}
