/* Runs a command with LD_PRELOAD taken out of its environment, so that it
 * loads no heap probe, and waits for it: a tree whose big process publishes
 * no allocator counters while its small parent does (the shape of a shell
 * or `timeout` wrapper in front of a program the probe cannot reach).
 * posix_spawn, not fork: glibc's runs no atfork handler, so the child never
 * gets a probe file of its own.
 * usage: spawn_unprobed COMMAND [ARG...] */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 1, sizeof *env);
    if (!env) return 1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0) env[k++] = environ[i];
    pid_t pid;
    if (posix_spawn(&pid, argv[1], NULL, NULL, argv + 1, env) != 0) return 1;
    int status;
    if (waitpid(pid, &status, 0) < 0) return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
