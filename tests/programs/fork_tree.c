/* A big forked tree, the shape of a pre-forking server: the parent fills a
 * PARENT_MIB block with malloc, then forks CHILDREN children that share it
 * copy-on-write, each first filling CHILD_MIB of its own, then sleeping.
 * Once every child is forked the parent prints "forked N", holds the tree
 * for HOLD_MS, then wakes the children (closing the pipe they wait on) and
 * reaps them: all of them live together for HOLD_MS however slowly the
 * machine forks. Halfway through the hold it reads every process's
 * smaps_rollup and prints the true sum of their Pss, "true_pss_kib K",
 * and, in a memory cgroup, the group's charge, "charge_bytes B": what a
 * sampler's figures for the tree are judged against. allocscope markers
 * bound the hold: "forked" once every child is forked, "truth" once the
 * sum is printed, "waking" half a second before the children are woken
 * to exit (the marker's time is when allocscope read the line, which a
 * loaded machine may delay). A child whose parent is gone exits at once (parent-death
 * signal), so a killed tree does not linger. With AFTER_MIB, the parent
 * then fills that much more of its own once every child is forked: memory
 * no child shares, in a parent otherwise just like its children.
 * usage: fork_tree [CHILDREN=1000] [PARENT_MIB=64] [CHILD_MIB=0] [HOLD_MS=10000]
 *        [AFTER_MIB=0] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The Pss line of /proc/PID/smaps_rollup in KiB, 0 when unreadable. */
static long pss_kib(pid_t pid) {
    char path[64], line[256];
    long kib = 0;
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Pss: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* The charge of this process's memory cgroup (v2 memory.current, v1
 * memory.usage_in_bytes), -1 outside one (in the root group). */
static long long cgroup_charge(void) {
    char line[512], path[600];
    long long bytes = -1;
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (f == NULL)
        return -1;
    while (bytes < 0 && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = 0;
        char *v2 = strncmp(line, "0::", 3) == 0 ? line + 3 : NULL;
        char *v1 = strstr(line, ":memory:");
        if (v1 != NULL)
            snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", v1 + 8);
        else if (v2 != NULL)
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", v2);
        else
            continue;
        if (strcmp(v1 != NULL ? v1 + 8 : v2, "/") == 0)
            continue;
        FILE *c = fopen(path, "r");
        if (c != NULL) {
            if (fscanf(c, "%lld", &bytes) != 1)
                bytes = -1;
            fclose(c);
        }
    }
    fclose(f);
    return bytes;
}

static void hold(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *fill(long mib, int value) {
    size_t size = (size_t)mib << 20;
    if (size == 0)
        return NULL;
    /* volatile: the compiler may not drop an allocation never read. */
    char *volatile block = malloc(size);
    if (block == NULL) {
        perror("malloc");
        exit(2);
    }
    memset(block, value, size);
    return block;
}

int main(int argc, char **argv) {
    int children = argc > 1 ? atoi(argv[1]) : 1000;
    long parent_mib = argc > 2 ? atol(argv[2]) : 64;
    long child_mib = argc > 3 ? atol(argv[3]) : 0;
    long hold_ms = argc > 4 ? atol(argv[4]) : 10000;
    long after_mib = argc > 5 ? atol(argv[5]) : 0;
    pid_t parent = getpid();
    char *volatile shared = fill(parent_mib, 1);
    pid_t *pids = calloc(children > 0 ? children : 1, sizeof *pids);
    if (pids == NULL) {
        perror("calloc");
        return 2;
    }
    int wake[2];
    if (pipe(wake) != 0) {
        perror("pipe");
        return 2;
    }
    for (int i = 0; i < children; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(1);
            close(wake[1]);
            char *volatile own = fill(child_mib, 2);
            char byte;
            while (read(wake[0], &byte, 1) < 0) {}
            int ok = (shared == NULL || shared[0] == 1) && (own == NULL || own[0] == 2);
            _exit(ok ? 0 : 1);
        }
        pids[i] = pid;
    }
    char *volatile after = fill(after_mib, 3);
    printf("forked %d\nallocscope:mark forked\n", children);
    fflush(stdout);
    hold(hold_ms / 2);
    long total_kib = pss_kib(parent);
    for (int i = 0; i < children; i++)
        total_kib += pss_kib(pids[i]);
    printf("true_pss_kib %ld\nallocscope:mark truth\n", total_kib);
    long long charge = cgroup_charge();
    if (charge >= 0)
        printf("charge_bytes %lld\n", charge);
    fflush(stdout);
    hold(hold_ms - hold_ms / 2);
    printf("allocscope:mark waking\n");
    fflush(stdout);
    hold(500);
    close(wake[1]);
    int failed = after != NULL && after[0] != 3, status;
    while (wait(&status) > 0)
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    return failed;
}
