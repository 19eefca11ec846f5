/* Prints N marker lines `allocscope:mark event-I` (I = 1..N) as fast as C
 * stdio writes them to a pipe (block-buffered, no flush), the way a job
 * that marks every event does. Used by the markers-at-scale test and bench.
 * Usage: many_marks N */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 1; i <= n; i++)
        printf("allocscope:mark event-%ld\n", i);
    return 0;
}
