/* Prints its own THP_enabled line from /proc/self/status, then a child's
 * (forked, then exec'd as `sh`), and whether the variable that carries
 * allocscope's thp=never reached its environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void print_thp(const char *who) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    if (!f) {
        perror("/proc/self/status");
        exit(1);
    }
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "THP_enabled:", 12) == 0)
            printf("%s %s", who, line);
    fclose(f);
}

int main(void) {
    print_thp("parent");
    const char *carried = getenv("ALLOCSCOPE_THP_DISABLE");
    printf("variable %s\n", carried ? "set" : "unset");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("sh", "sh", "-c", "sed -n 's/^THP_enabled:/child THP_enabled:/p' /proc/self/status",
               (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
