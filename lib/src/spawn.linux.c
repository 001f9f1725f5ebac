/*
 * Choosing and running the spawn mechanism on Linux.
 *
 * Measured on these machines (../shared/research/spawn.md): vfork-style creation costs about half
 * of fork+exec and stays flat as the parent's memory grows, glibc 2.36's posix_spawn pays a 64-
 * signal reset walk and an mmap'd stack per call, and a pidfd costs a few microseconds. So the
 * preferred path is clone3(CLONE_VM|CLONE_VFORK|CLONE_PIDFD|CLONE_CLEAR_SIGHAND) on a stack that
 * each thread allocates once and reuses: no per-spawn mmap, no signal walk, a pidfd for free.
 * Fallbacks, in order: clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD) through glibc's wrapper, vfork
 * (plus pidfd_open), posix_spawn. The choice is made once, at first use, by actually spawning a
 * child that exits at once (no exec), so the chosen path is known to work here, including the
 * assembly trampoline. fork is never used on the exec path.
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
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#define PK__CLONE_CLEAR_SIGHAND 0x100000000ULL
#define PK__CLONE_INTO_CGROUP   0x200000000ULL

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* The kernel's struct clone_args up to version 2 (88 bytes, with .cgroup). A kernel that knows
 * only version 0 accepts the larger size as long as the extra fields are zero. */
struct pk__clone_args {
    uint64_t flags;
    uint64_t pidfd;
    uint64_t child_tid;
    uint64_t parent_tid;
    uint64_t exit_signal;
    uint64_t stack;
    uint64_t stack_size;
    uint64_t tls;
    uint64_t set_tid;
    uint64_t set_tid_size;
    uint64_t cgroup;
};

/* The child's stack. It only runs the system calls of child.linux.c, so 64 KiB is generous; a
 * guard page below catches an overflow instead of corrupting the heap. */
#define PK__STACK_SIZE (64 * 1024)

int pk__spawn_vfork(struct pk__child_plan *plan);
int pk__spawn_posix_spawn(struct pk__child_plan *plan);

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static pk_mechanism mechanism = PK_MECH_POSIX_SPAWN;
static bool clear_sighand;
/* clone3 took CLONE_INTO_CGROUP (kernel >= 5.7); cleared on the first EINVAL with it. */
static volatile bool into_cgroup = true;
static bool have_pidfd_open;
static size_t page_size;
static pthread_key_t stack_key;
static _Thread_local unsigned char *thread_stack;

static void free_stack(void *base)
{
    munmap(base, PK__STACK_SIZE + page_size);
}

/* This thread's reusable child stack (lowest address of the usable area), or NULL. */
static unsigned char *stack_for_thread(void)
{
    if (thread_stack != NULL)
        return thread_stack;
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

/* clone3 onto this thread's stack; returns the pid or -errno, with *pidfd set. */
static long clone3_vfork(int (*fn)(void *), void *arg, bool clear, int cgroup_fd, int *pidfd)
{
    unsigned char *stack = stack_for_thread();
    if (stack == NULL)
        return -ENOMEM;
    struct pk__clone_args args = {
        .flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | (clear ? PK__CLONE_CLEAR_SIGHAND : 0),
        .pidfd = (uint64_t)(uintptr_t)pidfd,
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

/* glibc's clone() wrapper runs fn on the given stack top and handles the stack switch. */
static long clone_vfork(int (*fn)(void *), void *arg, int *pidfd)
{
    unsigned char *stack = stack_for_thread();
    if (stack == NULL)
        return -ENOMEM;
    int pid = clone(fn, stack + PK__STACK_SIZE, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, arg,
                    pidfd);
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
    int pidfd = -1;
    long pid = m == PK_MECH_CLONE3 ? clone3_vfork(probe_child, NULL, clear, -1, &pidfd)
                                   : clone_vfork(probe_child, NULL, &pidfd);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid <= 0)
        return false;
    reap_quietly(pid, pidfd);
    return true;
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

static void probe(void)
{
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    (void)pthread_key_create(&stack_key, free_stack);

    long fd = syscall(SYS_pidfd_open, getpid(), 0);
    have_pidfd_open = fd >= 0;
    if (fd >= 0)
        close((int)fd);

    pk_mechanism ceiling = forced_ceiling();
    if (ceiling <= PK_MECH_CLONE3) {
        if (probe_with(PK_MECH_CLONE3, true)) {
            mechanism = PK_MECH_CLONE3;
            clear_sighand = true;
            return;
        }
        if (probe_with(PK_MECH_CLONE3, false)) {
            mechanism = PK_MECH_CLONE3;
            return;
        }
    }
    if (ceiling <= PK_MECH_CLONE && probe_with(PK_MECH_CLONE, false)) {
        mechanism = PK_MECH_CLONE;
        return;
    }
    /* vfork exists on every Linux; posix_spawn only when asked for. */
    mechanism = ceiling <= PK_MECH_VFORK ? PK_MECH_VFORK : PK_MECH_POSIX_SPAWN;
}

pk_mechanism pk_spawn_mechanism(void)
{
    pthread_once(&probe_once, probe);
    return mechanism;
}

bool pk__spawn_into_cgroup(void)
{
    pthread_once(&probe_once, probe);
    return mechanism == PK_MECH_CLONE3 && into_cgroup;
}

bool pk_spawn_clears_sighand(void)
{
    pthread_once(&probe_once, probe);
    return clear_sighand;
}

int pk__spawn_plan(struct pk__child_plan *plan, int *pid_out, int *pidfd_out)
{
    pthread_once(&probe_once, probe);
    *pid_out = 0;
    *pidfd_out = -1;
    plan->err_stage = 0;
    plan->err_errno = 0;
    plan->reset_handlers = !clear_sighand;

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
        long pid;
        int pidfd = -1;
        switch (mechanism) {
        case PK_MECH_CLONE3:
            pid = clone3_vfork(child_entry, plan, clear_sighand, plan->cgroup_fd, &pidfd);
            if (pid == -EINVAL && plan->cgroup_fd >= 0 && plan->cgroup_procs_fd < 0) {
                /* A kernel without CLONE_INTO_CGROUP (< 5.7): remember it, and retry with the
                 * child moving itself through cgroup.procs (the caller closes that fd). */
                into_cgroup = false;
                plan->cgroup_procs_fd =
                    openat(plan->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                plan->cgroup_fd = -1;
                if (plan->cgroup_procs_fd >= 0)
                    pid = clone3_vfork(child_entry, plan, clear_sighand, -1, &pidfd);
            }
            break;
        case PK_MECH_CLONE:
            pid = clone_vfork(child_entry, plan, &pidfd);
            break;
        default:
            pid = pk__spawn_vfork(plan);
            break;
        }
        if (plan->restore_mask)
            pthread_sigmask(SIG_SETMASK, &plan->mask, NULL);
        if (pid < 0)
            return (int)pid;
        *pid_out = (int)pid;
        *pidfd_out = pidfd;
        if (plan->err_stage != 0) {
            /* The child recorded its failure and exited 127; reap it so nothing is left. */
            reap_quietly(pid, pidfd);
            *pid_out = 0;
            *pidfd_out = -1;
            return PK__ECHILD_FAILED;
        }
    }
    if (*pidfd_out < 0 && have_pidfd_open) {
        long fd = syscall(SYS_pidfd_open, *pid_out, 0);
        *pidfd_out = fd >= 0 ? (int)fd : -1;
    }
    return 0;
}
