/*
 * Reaping and signalling one child through its pidfd.
 *
 * waitid(P_PIDFD) reaps exactly our child, never waitpid(-1), so a host program that reaps its
 * own children from a SIGCHLD handler keeps working, and a pid recycled after the reap is never
 * touched: signals go through pidfd_send_signal on the same descriptor. The raw waitid system
 * call also returns the child's rusage, which glibc's waitid() drops; the CPU times in an outcome
 * come from there.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
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
    if (r < 0)
        return -errno;
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

int pk__signal(int pid, int pidfd, int signo)
{
    long r = pidfd >= 0 ? syscall(SYS_pidfd_send_signal, pidfd, signo, NULL, 0) : kill(pid, signo);
    return r < 0 ? -errno : 0;
}
