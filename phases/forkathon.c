/*
 * pk_forkathon — Peter Wemm's forkathon.c and vforkathon.c (freebsd-current, "fork speed vs
 * /bin/sh", 27 Nov 2003) in one source, built twice by CMake: pk_forkathon_static (-static) and
 * pk_forkathon_dynamic. The loop is his, unchanged in substance: N times, fork (or vfork); the
 * child calls _exit(0) at once; the parent waits for exactly that pid with waitpid. No exec, no
 * pipes, nothing else: what a shell pays per fork, for a small static or dynamic parent.
 *
 *     pk_forkathon fork|vfork N
 *
 * The only additions to Wemm's loop are what a test needs to trust it: the parent counts the
 * children it started and the ones waitpid returned with exit status 0, stops at the first
 * failed fork (Wemm's loop would then wait for pid -1, any child), and after the loop asks the
 * kernel whether any child is left (waitid P_ALL, WNOHANG|WNOWAIT: ECHILD means none). One line
 * on stdout says what it did, for pkbench's forkathon suite and the tests:
 *
 *     forkathon mechanism=fork linkage=static iterations=N started=N reaped=N left=0 loop_ns=T
 *
 * loop_ns is the loop's own CLOCK_MONOTONIC time (without exec and process start-up, which
 * time(1) and pkbench's wall time include). Exit status: 0 when every child started was reaped
 * with status 0 and none is left; 1 otherwise (a fork failed, a child was lost); 2 bad usage.
 * See METHODOLOGY.md, "fork vs vfork".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PK_FORKATHON_LINKAGE
#define PK_FORKATHON_LINKAGE "unknown"
#endif

struct tally {
    long started, reaped;
    int error; /* errno of a failed fork, 0 when none failed */
};

static void reap(pid_t pid, struct tally *t)
{
    int status;
    t->started++;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        t->reaped++;
}

/* Wemm's `switch (pid = fork()) { case 0: _exit(0); }`, each in a function of its own: vfork
 * returns twice, and in its own frame no variable of the loop lives across it (the child never
 * returns from here, it calls _exit), so nothing can be clobbered. fork gets the same shape so
 * the two loops differ in the one call. */
__attribute__((noinline)) static pid_t fork_exit(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    return pid;
}

__attribute__((noinline)) static pid_t vfork_exit(void)
{
    pid_t pid = vfork();
    if (pid == 0)
        _exit(0);
    return pid;
}

static void loop(pid_t (*start)(void), long n, struct tally *t)
{
    for (long i = 0; i < n; i++) {
        pid_t pid = start();
        if (pid < 0) {
            t->error = errno;
            return;
        }
        reap(pid, t);
    }
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int usage(FILE *f, int status)
{
    fputs("usage: pk_forkathon fork|vfork N\n"
          "Peter Wemm's 2003 loop: N times fork (or vfork), the child _exit(0)s, the parent\n"
          "waitpid()s for it. Prints one line: mechanism, linkage, started, reaped, left.\n"
          "Exit: 0 every child reaped and none left; 1 otherwise; 2 bad usage.\n",
          f);
    return status;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return usage(stdout, 0);
    if (argc != 3 || (strcmp(argv[1], "fork") != 0 && strcmp(argv[1], "vfork") != 0))
        return usage(stderr, 2);
    char *end;
    errno = 0;
    long n = strtol(argv[2], &end, 10);
    if (errno != 0 || *end != '\0' || end == argv[2] || n < 0) {
        fprintf(stderr, "pk_forkathon: N must be a count >= 0, got '%s'\n", argv[2]);
        return usage(stderr, 2);
    }
    struct tally t = {0};
    long long t0 = now_ns();
    loop(strcmp(argv[1], "fork") == 0 ? fork_exit : vfork_exit, n, &t);
    long long loop_ns = now_ns() - t0;

    siginfo_t si;
    memset(&si, 0, sizeof si);
    int left = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0 || errno != ECHILD;
    printf("forkathon mechanism=%s linkage=%s iterations=%ld started=%ld reaped=%ld left=%d "
           "loop_ns=%lld\n",
           argv[1], PK_FORKATHON_LINKAGE, n, t.started, t.reaped, left, loop_ns);
    if (t.error != 0)
        fprintf(stderr, "pk_forkathon: %s failed after %ld children: %s\n", argv[1], t.started,
                strerror(t.error));
    return t.error == 0 && t.started == n && t.reaped == n && !left ? 0 : 1;
}
