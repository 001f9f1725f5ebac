/*
 * Reaping and signalling one child through its pidfd.
 *
 * waitid(P_PIDFD) reaps exactly our child, never waitpid(-1), so a host program that reaps its
 * own children from a SIGCHLD handler keeps working, and a pid recycled after the reap is never
 * touched: signals go through pidfd_send_signal on the same descriptor. The raw waitid system
 * call also returns the child's rusage, which glibc's waitid() drops; the CPU times in an outcome
 * come from there.
 *
 * A host that ignores SIGCHLD (SIG_IGN, or SA_NOCLDWAIT) makes the kernel reap its children as
 * they exit, before any wait: waitid then fails with ECHILD and the status is gone from wait's
 * view. The case is handled where it shows, at the reap: on ECHILD the status is read from the
 * pidfd with PIDFD_GET_INFO and PIDFD_INFO_EXIT (Linux 6.15), which the kernel records when it
 * releases the task, reaped by us or not. The CPU times are lost with the rusage (the outcome
 * says 0). Older kernels still report -ECHILD. A run that would reap by pid, without a pidfd,
 * first reads the disposition (pk__sigchld_ignored, one rt_sigaction) and takes a pidfd when
 * SIGCHLD is ignored; a host that starts ignoring it while such a run is in flight gets -ECHILD.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int64_t pk__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The first 64 bytes of the kernel's struct pidfd_info (linux/pidfd.h, 6.15): Debian 12's headers
 * predate it. */
struct pk__pidfd_info {
    uint64_t mask;
    uint64_t cgroupid;
    uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
    int32_t exit_code; /* a wait status, as waitpid reports it */
};
#define PK__PIDFD_GET_INFO  _IOWR(0xFF, 11, struct pk__pidfd_info)
#define PK__PIDFD_INFO_EXIT (1ULL << 3)

/* The wait status of a child the kernel reaped for us (see the top of this file), or -ECHILD. */
static int exit_status_of_reaped(int pidfd, int *status)
{
    if (pidfd < 0)
        return -ECHILD;
    /* The pidfd becomes readable, and waitid fails, a moment before the kernel records the exit
     * (at the task's release): while the task is still there, the answer lacks PIDFD_INFO_EXIT;
     * once it is gone, a kernel without the feature fails with ESRCH. */
    for (int tries = 0; tries < 1000; tries++) {
        struct pk__pidfd_info info = {.mask = PK__PIDFD_INFO_EXIT};
        if (ioctl(pidfd, PK__PIDFD_GET_INFO, &info) != 0)
            return -ECHILD;
        if (info.mask & PK__PIDFD_INFO_EXIT) {
            *status = info.exit_code;
            return 0;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return -ECHILD;
}

static int64_t tv_us(struct timeval tv)
{
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

int pk__reap(int pid, int pidfd, pk_outcome *outcome)
{
    siginfo_t si = {0};
    struct rusage ru = {0};
    long r;
    do {
        if (pidfd >= 0)
            r = syscall(SYS_waitid, P_PIDFD, pidfd, &si, WEXITED, &ru);
        else
            r = syscall(SYS_waitid, P_PID, pid, &si, WEXITED, &ru);
    } while (r < 0 && errno == EINTR);
    if (r < 0 && errno == ECHILD) {
        int status;
        if (exit_status_of_reaped(pidfd, &status) != 0)
            return -ECHILD;
        si.si_code = WIFEXITED(status)        ? CLD_EXITED
                     : WCOREDUMP(status) != 0 ? CLD_DUMPED
                                              : CLD_KILLED;
        si.si_status = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
    } else if (r < 0) {
        return -errno;
    }
    outcome->user_us = tv_us(ru.ru_utime);
    outcome->sys_us = tv_us(ru.ru_stime);
    switch (si.si_code) {
    case CLD_EXITED:
        outcome->kind = PK_OUTCOME_EXITED;
        outcome->code = si.si_status;
        break;
    case CLD_DUMPED:
        outcome->core_dumped = true;
        /* fall through */
    default:
        outcome->kind = PK_OUTCOME_SIGNALED;
        outcome->signo = si.si_status;
        break;
    }
    return 0;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int pk__pidfd_open(int pid)
{
    long fd = syscall(SYS_pidfd_open, pid, 0);
    return fd >= 0 ? (int)fd : -errno;
}

bool pk__sigchld_ignored(void)
{
    struct sigaction sa;
    if (sigaction(SIGCHLD, NULL, &sa) != 0)
        return true; /* cannot tell: take the pidfd */
    return sa.sa_handler == SIG_IGN || (sa.sa_flags & SA_NOCLDWAIT) != 0;
}

int pk__signal(int pid, int pidfd, int signo)
{
    long r = pidfd >= 0 ? syscall(SYS_pidfd_send_signal, pidfd, signo, NULL, 0) : kill(pid, signo);
    return r < 0 ? -errno : 0;
}
