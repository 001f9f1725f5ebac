/*
 * Choosing and running the spawn mechanism on Linux.
 *
 * Measured on these machines (../shared/research/spawn.md): vfork-style creation costs about half
 * of fork+exec and stays flat as the parent's memory grows, glibc 2.36's posix_spawn pays a 64-
 * signal reset walk and an mmap'd stack per call, and a pidfd costs a few microseconds. So the
 * preferred path is clone3(CLONE_VM|CLONE_VFORK|CLONE_CLEAR_SIGHAND) on a stack that each thread
 * allocates once and reuses: no per-spawn mmap, no signal walk. CLONE_PIDFD is added only when the
 * caller needs the pidfd (a handle, or a run that polls for the exit next to its pipes): a run that
 * only awaits the exit reaps by pid, which saves the descriptor's creation, its wait and its close
 * (≈3 µs here). A child that needs none of our descriptors above 2 is also given CLONE_FILES: it
 * shares our table until its close_range(3, ~0, CLOSE_RANGE_UNSHARE), which copies only 0..2,
 * instead of the clone copying every descriptor of ours for the child to close one by one. A
 * pk_loop's child, which needs its pipes, shares it too and copies only the table's low part,
 * where the loop's slots put its pipes (lowfd.linux.c).
 * Fallbacks, in order: clone(CLONE_VM|CLONE_VFORK[|CLONE_PIDFD]) through glibc's
 * wrapper, vfork (plus pidfd_open), posix_spawn. fork is never used on the exec path.
 *
 * Choosing without a probe child. A modern kernel (5.7 and later) takes the preferred path, so the
 * first spawn simply tries it: when it works, that is the probe, and a one-shot process such as
 * pkrun pays for no extra child (≈25 µs). Only when it fails with an error that says the path is
 * missing (ENOSYS: no clone3 here, or no trampoline for this architecture; EPERM: a seccomp filter;
 * EINVAL: a flag this kernel does not know) does the full probe run, and the spawn is retried with
 * what it chose: nothing was created by the failed attempt. The full probe (also what
 * pk_spawn_mechanism() runs when asked before any spawn) first asks clone3 for CLONE_CLEAR_SIGHAND
 * and CLONE_INTO_CGROUP with a cgroup descriptor that cannot be open: a kernel that knows both
 * flags fails at the descriptor with EBADF before the task can run, so one failing system call
 * answers for both; only older kernels are probed by spawning a child that exits at once.
 *
 * Without CLONE_CLEAR_SIGHAND the parent blocks every signal around the clone: a handler of the
 * parent must not run in the child on the shared memory before the child has reset it, and the
 * child restores the parent's mask just before execve. With it, the kernel resets the handlers as
 * it creates the child, and the mask is left alone on both sides.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* The child's stack. It only runs the system calls of child.linux.c, so 64 KiB is generous; a
 * guard page below catches an overflow instead of corrupting the heap. */
#define PK__STACK_SIZE (64 * 1024)

int pk__spawn_vfork(struct pk__child_plan *plan);
int pk__spawn_posix_spawn(struct pk__child_plan *plan);

/* The mechanism. Its initial values are the preferred path, which the first spawn tries; the full
 * probe (probe(), at most once) overwrites them, and `decided` is set once either has settled it.
 * Nothing reads them before `decided` is seen set (acquire) or the probe has run. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static atomic_bool decided;
static pk_mechanism mechanism = PK_MECH_CLONE3;
static bool clear_sighand = true;
/* clone3 took CLONE_INTO_CGROUP (kernel >= 5.7); cleared on the first EINVAL with it. */
static volatile bool into_cgroup = true;
static bool have_pidfd_open;
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;
static size_t page_size;
static pthread_key_t stack_key;
static _Thread_local unsigned char *thread_stack;

static void free_stack(void *base)
{
    munmap(base, PK__STACK_SIZE + page_size);
}

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* close_range (5.9, with CLOSE_RANGE_UNSHARE): a range of one impossible descriptor closes
 * nothing and answers whether the call exists, without touching our table. */
static bool close_range_ok;

static void spawn_init(void)
{
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    (void)pthread_key_create(&stack_key, free_stack);
    close_range_ok = syscall(SYS_close_range, ~0U, ~0U, 0U) == 0;
}

/* Whether the child may share our descriptor table until its first step on descriptors (see
 * child.linux.c): the clone then copies no table, and the child takes a private one holding only
 * 0..2 with close_range(3, ~0, CLOSE_RANGE_UNSHARE), instead of a copy of every descriptor of ours
 * and a close of each. Only when the child needs none of ours above 2 (its streams are inherited,
 * or opened by path), when it would close them anyway (not inherit_fds), and when close_range
 * exists (a child that cannot unshare must never close descriptors one by one in our table). */
static bool may_share_files(const struct pk__child_plan *plan)
{
    if (plan->inherit_fds || !close_range_ok)
        return false;
    for (int t = 0; t < 3; t++)
        if (plan->io[t].action == PK__IO_DUP && plan->io[t].fd >= 3)
            return false;
    return true;
}

/* This thread's reusable child stack (lowest address of the usable area), or NULL. */
static unsigned char *stack_for_thread(void)
{
    if (thread_stack != NULL)
        return thread_stack;
    pthread_once(&stack_once, spawn_init);
    unsigned char *base = mmap(NULL, PK__STACK_SIZE + page_size, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    (void)mprotect(base, page_size, PROT_NONE);
    /* The key's destructor unmaps it when the thread exits. */
    (void)pthread_setspecific(stack_key, base);
    thread_stack = base + page_size;
    return thread_stack;
}

/* Runs on the child's own stack: no sanitizer instrumentation (ASan would warn about the foreign
 * stack on the call to a noreturn function, in the child's stderr). */
__attribute__((no_sanitize("address", "undefined"))) static int child_entry(void *arg)
{
    pk__child_main(arg);
}

static int probe_child(void *arg)
{
    (void)arg;
    return 0;
}

/* clone3 onto this thread's stack; returns the pid or -errno, with *pidfd set when pidfd is not
 * NULL (CLONE_PIDFD is asked for only then). */
static long clone3_vfork(int (*fn)(void *), void *arg, bool clear, int cgroup_fd, int *pidfd)
{
    unsigned char *stack = stack_for_thread();
    if (stack == NULL)
        return -ENOMEM;
    const struct pk__child_plan *plan = fn == child_entry ? arg : NULL;
    bool share_files = plan != NULL && plan->share_files;
    struct pk__clone_args args = {
        .flags = CLONE_VM | CLONE_VFORK | (pidfd != NULL ? CLONE_PIDFD : 0) |
                 (clear ? PK__CLONE_CLEAR_SIGHAND : 0) | (share_files ? CLONE_FILES : 0),
        .pidfd = (uint64_t)(uintptr_t)pidfd,
        /* Not 0: execve sets the exit signal back to SIGCHLD (fs/exec.c, de_thread), so a
         * quiet exit cannot be had for an exec'd child (tried: the host still got SIGCHLD). */
        .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)stack,
        .stack_size = PK__STACK_SIZE,
    };
    if (cgroup_fd >= 0) {
        args.flags |= PK__CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)cgroup_fd;
    }
    return pk__clone3_raw(&args, sizeof args, fn, arg);
}

/* glibc's clone() wrapper runs fn on the given stack top and handles the stack switch. CLONE_PIDFD
 * only when pidfd is not NULL, as for clone3. */
static long clone_vfork(int (*fn)(void *), void *arg, int *pidfd)
{
    unsigned char *stack = stack_for_thread();
    if (stack == NULL)
        return -ENOMEM;
    int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | (pidfd != NULL ? CLONE_PIDFD : 0);
    int pid = clone(fn, stack + PK__STACK_SIZE, flags, arg, pidfd);
    return pid < 0 ? -errno : pid;
}

static void reap_quietly(long pid, int pidfd)
{
    siginfo_t si;
    if (pidfd >= 0) {
        while (syscall(SYS_waitid, P_PIDFD, pidfd, &si, WEXITED, NULL) < 0 && errno == EINTR)
            ;
        close(pidfd);
    } else {
        while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
}

/* Spawns a child that exits at once through the given path; true when it worked. */
static bool probe_with(pk_mechanism m, bool clear)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    long pid = m == PK_MECH_CLONE3 ? clone3_vfork(probe_child, NULL, clear, -1, NULL)
                                   : clone_vfork(probe_child, NULL, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid <= 0)
        return false;
    reap_quietly(pid, -1);
    return true;
}

/* The probe without a child: clone3 with CLONE_CLEAR_SIGHAND and CLONE_INTO_CGROUP naming a
 * descriptor that cannot be open (nr_open stays below INT_MAX). A kernel that knows both flags
 * validates them and fails at the descriptor (EBADF) before the task can run. Should a kernel
 * built without cgroups ignore the descriptor, the child is real but harmless: it runs probe_child
 * on its own stack and exits, and is reaped here. Returns 1 when both flags work, 0 when clone3
 * works but CLONE_INTO_CGROUP is not honoured, or a negative errno (-EINVAL: a flag unknown;
 * -ENOSYS, -EPERM: no clone3 for us). */
static int probe_clone3_flags(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    long pid = clone3_vfork(probe_child, NULL, true, INT_MAX, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid == -EBADF)
        return 1;
    if (pid > 0) {
        reap_quietly(pid, -1);
        return 0;
    }
    return (int)pid;
}

static pk_mechanism forced_ceiling(void)
{
    const char *want = getenv("PK_SPAWN_MECHANISM");
    if (want == NULL || want[0] == '\0')
        return PK_MECH_CLONE3;
    for (pk_mechanism m = PK_MECH_CLONE3; m <= PK_MECH_POSIX_SPAWN; m++)
        if (strcmp(want, pk_mechanism_name(m)) == 0)
            return m;
    return PK_MECH_CLONE3;
}

static void probe_chain(void)
{
    pk_mechanism ceiling = forced_ceiling();
    if (ceiling <= PK_MECH_CLONE3) {
        int flags = probe_clone3_flags();
        if (flags >= 0) {
            mechanism = PK_MECH_CLONE3;
            clear_sighand = true;
            into_cgroup = flags == 1;
            return;
        }
        /* No CLONE_INTO_CGROUP (EINVAL on 5.3-5.6), or no clone3 at all. */
        into_cgroup = false;
        if (flags == -EINVAL && probe_with(PK_MECH_CLONE3, true)) {
            mechanism = PK_MECH_CLONE3;
            clear_sighand = true;
            return;
        }
        clear_sighand = false;
        if (flags == -EINVAL && probe_with(PK_MECH_CLONE3, false)) {
            mechanism = PK_MECH_CLONE3;
            return;
        }
    }
    clear_sighand = false;
    into_cgroup = false;
    if (ceiling <= PK_MECH_CLONE && probe_with(PK_MECH_CLONE, false)) {
        mechanism = PK_MECH_CLONE;
        return;
    }
    /* vfork exists on every Linux; posix_spawn only when asked for. Neither gives a pidfd: it
     * comes from pidfd_open afterwards, when the kernel has it (5.3). */
    mechanism = ceiling <= PK_MECH_VFORK ? PK_MECH_VFORK : PK_MECH_POSIX_SPAWN;
    long fd = syscall(SYS_pidfd_open, getpid(), 0);
    have_pidfd_open = fd >= 0;
    if (fd >= 0)
        close((int)fd);
}

static void probe(void)
{
    probe_chain();
    atomic_store_explicit(&decided, true, memory_order_release);
}

/* The once-routine a first spawn runs when the preferred path worked: the initial values are
 * right, and the full probe must not run after it. Only one of the two routines ever runs, so
 * the mechanism's values are written by one thread, before `decided` is published. */
static void preferred_worked(void)
{
    atomic_store_explicit(&decided, true, memory_order_release);
}

/* The mechanism, settled: by a first spawn that worked, or by the full probe (run now if needed).
 */
static void settle(void)
{
    if (!atomic_load_explicit(&decided, memory_order_acquire))
        pthread_once(&probe_once, probe);
}

pk_mechanism pk_spawn_mechanism(void)
{
    settle();
    return mechanism;
}

bool pk__spawn_into_cgroup(void)
{
    /* Before anything is settled the preferred path is assumed: the first spawn tries it, and a
     * kernel that refuses CLONE_INTO_CGROUP sends that spawn through the probe. */
    if (!atomic_load_explicit(&decided, memory_order_acquire))
        return true;
    return mechanism == PK_MECH_CLONE3 && into_cgroup;
}

bool pk_spawn_clears_sighand(void)
{
    settle();
    return clear_sighand;
}

/* After the clone: a failure the child recorded is reaped here and reported as such, and so is a
 * child cloned into a leaf that never ran (the vfork-style clone returned on its death, not its
 * exec): the leaf was killed by someone else (PK__ELEAF_KILLED). One load of a flag the child
 * set, no system call. */
static int
after_clone(struct pk__child_plan *plan, long pid, int pidfd, int *pid_out, int *pidfd_out)
{
    if (plan->err_stage != 0 || (plan->cgroup_fd >= 0 && !plan->started)) {
        /* The child recorded its failure and exited 127 (or died unborn); reap it so nothing is
         * left. */
        reap_quietly(pid, pidfd);
        return plan->err_stage != 0 ? PK__ECHILD_FAILED : PK__ELEAF_KILLED;
    }
    *pid_out = (int)pid;
    *pidfd_out = pidfd;
    return 0;
}

/* The first spawns, while nothing is settled: the preferred path, tried as the probe. Returns 1
 * when the path is missing here (nothing was created: settle and take the probed path), else
 * what pk__spawn_plan returns. */
static int spawn_first(struct pk__child_plan *plan, int *pid_out, int *pidfd_out)
{
    const char *forced = getenv("PK_SPAWN_MECHANISM");
    if (forced != NULL && forced[0] != '\0' && strcmp(forced, "clone3") != 0)
        return 1;
    plan->reset_handlers = false;
    plan->restore_mask = false;
    int pidfd = -1;
    long pid =
        clone3_vfork(child_entry, plan, true, plan->cgroup_fd, plan->want_pidfd ? &pidfd : NULL);
    if (pid == -ENOSYS || pid == -EPERM || pid == -EINVAL)
        return 1;
    if (pid < 0)
        return (int)pid;
    pthread_once(&probe_once, preferred_worked);
    return after_clone(plan, pid, pidfd, pid_out, pidfd_out);
}

/* clone3, clone or vfork, as probed; returns the pid or -errno, with *pidfd set when wanted and
 * the mechanism gives one. */
static long spawn_vfork_family(struct pk__child_plan *plan, int *pidfd)
{
    int *want = plan->want_pidfd ? pidfd : NULL;
    switch (mechanism) {
    case PK_MECH_CLONE3: {
        int moved[3] = {-1, -1, -1};
        if (close_range_ok) /* a pk_loop's child copies only the low part of our table */
            pk__low_place(plan, moved);
        long pid = clone3_vfork(child_entry, plan, clear_sighand, plan->cgroup_fd, want);
        if (pid == -EINVAL && plan->cgroup_fd >= 0 && plan->cgroup_procs_fd < 0) {
            /* A kernel without CLONE_INTO_CGROUP (< 5.7): remember it, and retry with the
             * child moving itself through cgroup.procs (the caller closes that fd). */
            into_cgroup = false;
            plan->cgroup_procs_fd = openat(plan->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
            plan->cgroup_fd = -1;
            if (plan->cgroup_procs_fd >= 0)
                pid = clone3_vfork(child_entry, plan, clear_sighand, -1, want);
        }
        pk__low_unplace(plan, moved);
        return pid;
    }
    case PK_MECH_CLONE:
        return clone_vfork(child_entry, plan, want);
    default:
        plan->share_files = false; /* vfork copies our table */
        return pk__spawn_vfork(plan);
    }
}

int pk__spawn_plan(struct pk__child_plan *plan, int *pid_out, int *pidfd_out)
{
    *pid_out = 0;
    *pidfd_out = -1;
    plan->err_stage = 0;
    plan->err_errno = 0;
    plan->started = 0;
    pthread_once(&stack_once, spawn_init);
    plan->share_files = may_share_files(plan);
    plan->unshare_from = 3;
    if (!atomic_load_explicit(&decided, memory_order_acquire)) {
        int rc = spawn_first(plan, pid_out, pidfd_out);
        if (rc != 1)
            return rc;
        settle();
    }
    plan->reset_handlers = !clear_sighand;

    if (mechanism != PK_MECH_CLONE3)
        plan->share_files = false; /* only clone3 is given CLONE_FILES */
    if (mechanism == PK_MECH_POSIX_SPAWN) {
        /* glibc blocks signals and resets handlers itself. */
        if (pthread_sigmask(SIG_SETMASK, NULL, &plan->mask) != 0)
            sigemptyset(&plan->mask);
        int pid = pk__spawn_posix_spawn(plan);
        if (pid < 0)
            return pid;
        *pid_out = pid;
    } else {
        /* Without CLONE_CLEAR_SIGHAND a handler of ours could run in the child, on our memory,
         * before the child resets it: block everything around the clone and let the child
         * restore the mask. With it the kernel resets the handlers at the clone, so the child
         * simply inherits the mask and neither side spends a system call on it. */
        plan->restore_mask = !(mechanism == PK_MECH_CLONE3 && clear_sighand);
        if (plan->restore_mask) {
            sigset_t all;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &plan->mask);
        }
        int pidfd = -1;
        long pid = spawn_vfork_family(plan, &pidfd);
        if (plan->restore_mask)
            pthread_sigmask(SIG_SETMASK, &plan->mask, NULL);
        if (pid < 0)
            return (int)pid;
        int rc = after_clone(plan, pid, pidfd, pid_out, pidfd_out);
        if (rc != 0)
            return rc;
    }
    if (*pidfd_out < 0 && plan->want_pidfd && have_pidfd_open) {
        long fd = syscall(SYS_pidfd_open, *pid_out, 0);
        *pidfd_out = fd >= 0 ? (int)fd : -1;
    }
    return 0;
}
