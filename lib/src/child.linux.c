/*
 * The child side of a spawn: what runs between clone and execve.
 *
 * The child shares the parent's memory (CLONE_VM) while the parent is suspended (CLONE_VFORK),
 * so it may only make system calls: no malloc, no stdio, no locks, nothing an interposed or
 * instrumented libc function could do behind our back. Every step therefore goes through
 * syscall(2) directly, and the function is excluded from sanitizer instrumentation because it
 * runs on a stack the sanitizer runtime does not know about.
 *
 * Order of steps, each one a stage reported to the parent on failure:
 *   1. signal handlers: reset the parent's installed handlers to SIG_DFL, but only when the
 *      kernel lacks CLONE_CLEAR_SIGHAND (then we read each disposition and write only the
 *      handled ones, never a blind reset of all 64);
 *   2. setpgid: lead or join the group's process group (process-group containment); a new
 *      leader then takes the terminal when asked (take_terminal), with SIGTTOU blocked for the
 *      call, as a shell's child does — best effort: a failure leaves the caller's own hand-off;
 *   3. contain: write "0" to the leaf's cgroup.procs — only when the mechanism could not clone
 *      straight into the cgroup (CLONE_INTO_CGROUP needs clone3);
 *   4. pdeathsig: PR_SET_PDEATHSIG, then getppid() against the spawner's pid, because the parent
 *      may have died before the call (then the child exits at once);
 *   5. close_fds, when the child was cloned sharing our descriptor table (CLONE_FILES, see
 *      may_share_files in spawn.linux.c): close_range(3, ~0, CLOSE_RANGE_UNSHARE) gives it a
 *      private table with only 0..2 copied — no copy of the others at the clone, and none to
 *      close — and comes before any step that changes descriptors, so our table is never touched;
 *      a pk_loop's child needs its pipes too, which are then below unshare_from
 *      (lowfd.linux.c): close_range(unshare_from, ~0, CLOSE_RANGE_UNSHARE) copies only those;
 *   6. stdio: move low-numbered sources out of the way, then open/dup2 onto 0, 1, 2;
 *   7. close_fds otherwise, or when the private table holds copies above 2: close_range(3, ~0) —
 *      every descriptor the host leaked without O_CLOEXEC (skipped when the command sets
 *      inherit_fds);
 *   8. chdir;
 *   9. restore the parent's signal mask, when the parent blocked everything around the clone
 *      (only without CLONE_CLEAR_SIGHAND);
 *  10. execve.
 * A failure stores {stage, errno} in the shared plan and exits 127; the parent turns that into a
 * typed spawn failure, never a bare exit code.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#define PK__CLOSE_RANGE_UNSHARE (1U << 1)

/* The kernel's sigaction layout for rt_sigaction on x86_64 and the generic ABI. */
struct pk__ksigaction {
    uintptr_t handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
};

#define PK__NO_SANITIZE __attribute__((no_sanitize("address", "undefined"), noinline))

PK__NO_SANITIZE static _Noreturn void fail(struct pk__child_plan *plan, pk_stage stage, int err)
{
    plan->err_errno = err;
    plan->err_stage = (int)stage;
    for (;;)
        syscall(SYS_exit, 127);
}

PK__NO_SANITIZE static void reset_handlers(void)
{
    /* One read per signal; a write only where the parent installed a handler. SIG_IGN stays
     * ignored across exec, as POSIX requires. SIGKILL and SIGSTOP cannot have handlers. */
    for (int sig = 1; sig < 65; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        struct pk__ksigaction old;
        if (syscall(SYS_rt_sigaction, sig, NULL, &old, 8) != 0)
            continue;
        if (old.handler == (uintptr_t)SIG_DFL || old.handler == (uintptr_t)SIG_IGN)
            continue;
        struct pk__ksigaction dfl = {.handler = (uintptr_t)SIG_DFL};
        syscall(SYS_rt_sigaction, sig, &dfl, NULL, 8);
    }
}

PK__NO_SANITIZE static int setup_stdio(struct pk__child_plan *plan)
{
    /* A source descriptor numbered 0..2 (possible when the host closed its standard streams)
     * could be overwritten by an earlier dup2; move such sources above 2 first. */
    for (int t = 0; t < 3; t++) {
        struct pk__io_plan *io = &plan->io[t];
        if (io->action == PK__IO_DUP && io->fd < 3 && io->fd != t) {
            long nfd = syscall(SYS_fcntl, io->fd, F_DUPFD_CLOEXEC, 3);
            if (nfd < 0)
                return errno;
            io->fd = (int)nfd;
        }
    }
    for (int t = 0; t < 3; t++) {
        struct pk__io_plan *io = &plan->io[t];
        switch (io->action) {
        case PK__IO_KEEP:
            break;
        case PK__IO_DUP:
            if (io->fd == t) {
                /* Our descriptors are O_CLOEXEC; keep this one across exec. */
                if (syscall(SYS_fcntl, t, F_SETFD, 0) != 0)
                    return errno;
            } else if (syscall(SYS_dup2, io->fd, t) < 0) {
                return errno;
            }
            break;
        case PK__IO_OPEN: {
            long fd = syscall(SYS_openat, AT_FDCWD, io->path, io->flags, 0666);
            if (fd < 0)
                return errno;
            if (fd != t) {
                if (syscall(SYS_dup2, fd, t) < 0)
                    return errno;
                syscall(SYS_close, fd);
            }
            break;
        }
        case PK__IO_SAME_AS_1:
            if (syscall(SYS_dup2, 1, 2) < 0)
                return errno;
            break;
        }
    }
    return 0;
}

/* Makes this child's new process group the terminal's foreground one. A background group's
 * tcsetpgrp raises SIGTTOU, whose default stops the process: it is blocked for the call (the
 * kernel then allows it) and the mask restored. The kernel's sigset is one word here. */
PK__NO_SANITIZE static void take_terminal(int fd)
{
    unsigned long block = 1UL << (SIGTTOU - 1), old = 0;
    if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, &old, sizeof block) != 0)
        return;
    pid_t self = (pid_t)syscall(SYS_getpid);
    (void)syscall(SYS_ioctl, fd, TIOCSPGRP, &self);
    (void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
}

PK__NO_SANITIZE _Noreturn void pk__child_main(struct pk__child_plan *plan)
{
    /* Tells the parent we ran at all: a child cloned into a leaf someone killed never does
     * (spawn.linux.c). */
    plan->started = 1;
    if (plan->reset_handlers)
        reset_handlers();

    if (plan->pgid >= 0 && syscall(SYS_setpgid, 0, plan->pgid) != 0)
        fail(plan, PK_STAGE_SETPGID, errno);
    if (plan->pgid == 0 && plan->tty_fd >= 0)
        take_terminal(plan->tty_fd);

    if (plan->cgroup_procs_fd >= 0 && syscall(SYS_write, plan->cgroup_procs_fd, "0", 1) != 1)
        fail(plan, PK_STAGE_CONTAIN, errno);

    if (plan->pdeathsig > 0) {
        if (syscall(SYS_prctl, PR_SET_PDEATHSIG, plan->pdeathsig, 0, 0, 0) != 0)
            fail(plan, PK_STAGE_PDEATHSIG, errno);
        if (syscall(SYS_getppid) != plan->parent_pid)
            for (;;) /* the spawner is already gone: nobody is left to want this child */
                syscall(SYS_exit, 0);
    }

    if (plan->share_files &&
        syscall(SYS_close_range, plan->unshare_from, ~0U, (unsigned)PK__CLOSE_RANGE_UNSHARE) != 0)
        fail(plan, PK_STAGE_CLOSE_FDS, errno);

    int err = setup_stdio(plan);
    if (err != 0)
        fail(plan, PK_STAGE_STDIO, err);

    bool copied_above_2 = !plan->share_files || plan->unshare_from > 3;
    if (copied_above_2 && !plan->inherit_fds && syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
        /* Kernels before 5.9: close descriptor by descriptor up to the limit. */
        if (errno != ENOSYS)
            fail(plan, PK_STAGE_CLOSE_FDS, errno);
        struct rlimit rl;
        if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) != 0)
            rl.rlim_cur = 1024;
        for (rlim_t fd = 3; fd < rl.rlim_cur; fd++)
            syscall(SYS_close, (long)fd);
    }

    if (plan->cwd != NULL && syscall(SYS_chdir, plan->cwd) != 0)
        fail(plan, PK_STAGE_CHDIR, errno);

    if (plan->restore_mask)
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &plan->mask, NULL, 8);
    syscall(SYS_execve, plan->path, plan->argv, plan->envp);
    fail(plan, PK_STAGE_EXEC, errno);
}
