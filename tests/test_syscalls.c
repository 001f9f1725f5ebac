/*
 * The system calls of a spawn, counted: every call on the hot path must earn its place, and these
 * tests fail when one comes back. A helper (`--helper spawn-trace MODE`) runs one pk_run of
 * /bin/true between two marker calls, close(-12345) and close(-54321), after two identical untimed
 * runs that warm up whatever the first runs set up (the probe, the leaf pool and the pooled leaf's
 * holder, /dev/null); the test
 * traces it with ptrace (PTRACE_GET_SYSCALL_INFO, so no register layout is assumed) and records,
 * between the markers, the calls of the helper itself (the parent side) and of each child up to
 * its execve (the child side). Mode `first` has no warm-up and counts the processes the first run
 * of a fresh process creates: the run's child and, where leaves are made, the guardian; no probe
 * child.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Where the library has a guardian trampoline (lib/src/guard.<arch>.S). */
#if defined(__x86_64__)
#define HAVE_GUARDIAN true
#else
#define HAVE_GUARDIAN false
#endif

#define MARK_START (-12345)
#define MARK_END   (-54321)
#define MAX_CALLS  256

struct calls {
    int pid;
    int n;
    long nr[MAX_CALLS];
    unsigned long long args[MAX_CALLS][3];
};

struct trace {
    struct calls parent, child;
    /* The calls of a task not known yet: a new child can stop at its first calls before its
     * parent's clone event is seen (a slow parent: the ASan build). */
    struct calls early;
    int children; /* processes created between the markers */
    bool recording;
    bool child_execd;
    /* The helper, stopped at its end marker, is held there until the child has settled (see
     * settled()): the guardian runs on its own, and on a loaded machine the helper used to exit
     * before the guardian's first call, which then went unrecorded. */
    bool ended, held, child_gone;
};

static void record(struct calls *c, const struct __ptrace_syscall_info *info)
{
    if (c->n >= MAX_CALLS)
        return;
    c->nr[c->n] = (long)info->entry.nr;
    for (int i = 0; i < 3; i++)
        c->args[c->n][i] = info->entry.args[i];
    c->n++;
}

/* One syscall-entry stop of `pid`. */
static void on_entry(struct trace *t, int pid, const struct __ptrace_syscall_info *info)
{
    long nr = (long)info->entry.nr;
    int fd = (int)info->entry.args[0];
    if (pid == t->parent.pid) {
        if (nr == SYS_close && fd == MARK_START)
            t->recording = true;
        else if (nr == SYS_close && fd == MARK_END) {
            t->recording = false;
            t->ended = true;
        } else if (t->recording)
            record(&t->parent, info);
    } else if (t->child.pid == 0 && t->recording) {
        if (t->early.pid != pid)
            t->early = (struct calls){.pid = pid};
        record(&t->early, info);
    } else if (pid == t->child.pid && !t->child_execd) {
        record(&t->child, info);
        if (nr == SYS_execve)
            t->child_execd = true;
    }
}

/* Whether the recorded child has done all it does before the helper's exit could cut it short:
 * the run's child has exec'd; the guardian sleeps in read() (or it is gone, or there is none). */
static bool settled(const struct trace *t)
{
    if (t->child.pid == 0 || t->child_execd || t->child_gone)
        return true;
    for (int i = 0; i < t->child.n; i++)
        if (t->child.nr[i] == SYS_read)
            return true;
    return false;
}

/* Lets the helper go on from its end marker once the child has settled. */
static void release_if_settled(struct trace *t)
{
    if (t->held && settled(t)) {
        t->held = false;
        ptrace(PTRACE_SYSCALL, t->parent.pid, NULL, NULL);
    }
}

/* Runs the helper in `mode` under ptrace until it exits; fills *t. */
static void trace_helper(const char *mode, struct trace *t)
{
    memset(t, 0, sizeof *t);
    /* The tracer, the helper and its child at the highest priority: a traced run stops at every
     * call and waits for this process to be scheduled, and a CPU hog beside the suite must not
     * stretch it past the library's lazy-pidfd window (a process of its own: nothing else runs
     * at this priority). Without the privilege the run keeps its priority, and says so. */
    static bool reniced;
    if (!reniced && setpriority(PRIO_PROCESS, 0, -20) != 0)
        printf("# priority not raised (%s): a loaded machine may stretch the traced run\n",
               strerror(errno));
    reniced = true;
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        /* LeakSanitizer cannot run under ptrace (ASan builds); nothing else changes. */
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        raise(SIGSTOP);
        execl(pk_test_self(), pk_test_self(), "--helper", "spawn-trace", mode, (char *)NULL);
        _exit(127);
    }
    int st;
    ASSERT_EQ(waitpid(pid, &st, __WALL), pid);
    ASSERT(WIFSTOPPED(st));
    long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
                PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
    ASSERT_EQ(ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)opts), 0);
    ASSERT_EQ(ptrace(PTRACE_SYSCALL, pid, NULL, NULL), 0);
    t->parent.pid = pid;
    int status = -1;
    for (;;) {
        int w = waitpid(-1, &st, __WALL);
        if (w < 0 && errno == EINTR)
            continue;
        ASSERT_GT(w, 0);
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            if (w == pid) {
                status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                break;
            }
            t->child_gone = t->child_gone || w == t->child.pid;
            release_if_settled(t);
            continue;
        }
        int sig = WSTOPSIG(st), event = st >> 16, inject = 0;
        if (sig == (SIGTRAP | 0x80)) {
            struct __ptrace_syscall_info info;
            long len = ptrace(PTRACE_GET_SYSCALL_INFO, w, (void *)sizeof info, &info);
            if (len > 0 && info.op == PTRACE_SYSCALL_INFO_ENTRY)
                on_entry(t, w, &info);
            if (w == pid && t->ended && !t->held && !settled(t)) {
                t->held = true; /* resumed by release_if_settled */
                t->ended = false;
                continue;
            }
        } else if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
                   event == PTRACE_EVENT_VFORK) {
            unsigned long child = 0;
            ptrace(PTRACE_GETEVENTMSG, w, NULL, &child);
            if (w == pid && t->recording) {
                t->children++;
                if (t->child.pid == 0 && t->early.pid == (int)child) {
                    t->child = t->early;
                    for (int i = 0; i < t->child.n; i++)
                        t->child_execd = t->child_execd || t->child.nr[i] == SYS_execve;
                }
                if (t->child.pid == 0)
                    t->child.pid = (int)child;
            }
        } else if (event == PTRACE_EVENT_EXEC && w != pid) {
            /* A child past its execve: nothing it does now is counted, so it runs untraced. A
             * traced /bin/true stops at every call of its own loading, which on a loaded machine
             * stretched the run past the library's lazy-pidfd window in every try. */
            ptrace(PTRACE_DETACH, w, NULL, NULL);
            continue;
        } else if (event == 0 && sig != SIGSTOP && sig != SIGTRAP) {
            inject = sig; /* a real signal (SIGCHLD): deliver it */
        }
        ptrace(PTRACE_SYSCALL, w, NULL, (void *)(long)inject);
        release_if_settled(t);
    }
    /* Tasks of the helper still traced by us once it is gone (its guardian, killed at its exit,
     * may die after it): each is let go or reaped, never left a zombie of ours. */
    for (;;) {
        int w = waitpid(-1, &st, __WALL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            break;
        if (WIFSTOPPED(st))
            ptrace(PTRACE_DETACH, w, NULL, NULL);
    }
    ASSERT_EQ(status, 0);
}

static int count(const struct calls *c, long nr)
{
    int k = 0;
    for (int i = 0; i < c->n; i++)
        k += c->nr[i] == nr;
    return k;
}

static int index_of(const struct calls *c, long nr)
{
    for (int i = 0; i < c->n; i++)
        if (c->nr[i] == nr)
            return i;
    return -1;
}

/* Prints a side's calls by number, for the log of a failing test. */
static void show(const char *side, const struct calls *c)
{
    printf("# %s:", side);
    for (int i = 0; i < c->n; i++)
        printf(" %ld", c->nr[i]);
    printf("\n");
}

/* Call i reads SIGCHLD's disposition without changing it: whether a run without a pidfd is safe
 * (a host ignoring SIGCHLD would have the kernel reap the child and lose its status). */
static void assert_sigchld_read(const struct calls *c, int i)
{
    ASSERT_EQ(c->nr[i], SYS_rt_sigaction);
    ASSERT_EQ(c->args[i][0], SIGCHLD);
    ASSERT_EQ(c->args[i][1], 0); /* no new action */
}

/* The tracer sees the helper's children even on the cgroup or process-group fallback, but the
 * counts below are the cgroup path's. */
static void need_cgroup_here(void)
{
    pk_test_need_cgroup();
    if (pk_host_containment() != PK_CONTAIN_CGROUP)
        pk_test_skip("no delegated cgroup v2 here: the contained path is the process group's");
}

static int access_count(const struct calls *c)
{
#ifdef SYS_access
    return count(c, SYS_access) + count(c, SYS_faccessat) + count(c, SYS_faccessat2);
#else
    return count(c, SYS_faccessat) + count(c, SYS_faccessat2);
#endif
}

static int dup2_count(const struct calls *c)
{
#ifdef SYS_dup2
    return count(c, SYS_dup2) + count(c, SYS_dup3);
#else
    return count(c, SYS_dup3);
#endif
}

static int fstat_count(const struct calls *c)
{
#ifdef SYS_fstat
    return count(c, SYS_newfstatat) + count(c, SYS_fstat);
#else
    return count(c, SYS_newfstatat);
#endif
}

TEST_IMPL(spawn_syscalls_first_run_makes_one_child)
{
    /* A fresh process's first run: the spawn itself is the mechanism's probe. Besides the run's
     * child, the first leaf starts this process's guardian (lib/src/guard.linux.c), which is
     * cloned first and whose first calls close every descriptor but two; there is no probe
     * child. */
    struct trace t;
    trace_helper("first", &t);
    show("parent", &t.parent);
    show("guardian", &t.child);
    bool guarded = HAVE_GUARDIAN && pk_host_containment() == PK_CONTAIN_CGROUP;
    ASSERT_EQ(t.children, guarded ? 2 : 1);
    if (guarded) {
        ASSERT_EQ(t.child.nr[0], SYS_close_range);
        ASSERT_EQ(count(&t.child, SYS_execve), 0);
    }
    /* Asked before any spawn, the mechanism is probed without a child on kernels from 5.7 on
     * (one clone3 that fails at a bad cgroup descriptor). */
    trace_helper("query", &t);
    show("query", &t.parent);
    ASSERT_EQ(t.children, 0);
    ASSERT_EQ(count(&t.parent, SYS_clone3), 1);
}

TEST_IMPL(spawn_syscalls_contained)
{
    /* pk_run, streams inherited, the default private group: SIGCHLD's disposition read, a pooled
     * leaf the child is born in (CLONE_INTO_CGROUP), no pidfd (only the exit is awaited), the
     * reap, then one read of the held leaf's cgroup.procs. The child closes what leaked and
     * execs. */
    need_cgroup_here();
    struct trace t;
    trace_helper("contained", &t);
    show("parent", &t.parent);
    show("child", &t.child);
    ASSERT_EQ(t.children, 1);
    ASSERT_EQ(t.parent.n, 4);
    assert_sigchld_read(&t.parent, 0);
    ASSERT_EQ(t.parent.nr[1], SYS_clone3);
    ASSERT_EQ(t.parent.nr[2], SYS_waitid);
    ASSERT_EQ(t.parent.args[2][0], P_PID); /* by pid: no pidfd was made */
    ASSERT_EQ(t.parent.nr[3], SYS_pread64);
    ASSERT_EQ(t.child.n, 2);
    ASSERT_EQ(t.child.nr[0], SYS_close_range);
    ASSERT_EQ(t.child.args[0][2], 2u); /* CLOSE_RANGE_UNSHARE: cloned with CLONE_FILES */
    ASSERT_EQ(t.child.nr[1], SYS_execve);
}

TEST_IMPL(spawn_syscalls_path_entry_named_twice)
{
    /* A bare name is looked up once per PATH entry: one stat of the missing directory's
     * candidate (not two, though PATH names it twice), one of /usr/bin/true, then its access
     * check; the run itself is the contained one above. */
    need_cgroup_here();
    struct trace t;
    trace_helper("path_twice", &t);
    show("parent", &t.parent);
    ASSERT_EQ(fstat_count(&t.parent), 2);
    ASSERT_EQ(access_count(&t.parent), 1);
    ASSERT_EQ(t.children, 1);
    ASSERT_EQ(t.child.nr[t.child.n - 1], SYS_execve);
}

TEST_IMPL(spawn_syscalls_uncontained_and_inherit_fds)
{
    struct trace t;
    trace_helper("uncontained", &t);
    show("parent", &t.parent);
    show("child", &t.child);
    ASSERT_EQ(t.parent.n, 3);
    assert_sigchld_read(&t.parent, 0);
    ASSERT_EQ(t.parent.nr[1], SYS_clone3);
    ASSERT_EQ(t.parent.nr[2], SYS_waitid);
    ASSERT_EQ(t.child.n, 2);
    ASSERT_EQ(t.child.nr[0], SYS_close_range);

    /* The opt-out: the child execs at once. */
    trace_helper("inherit_fds", &t);
    show("child", &t.child);
    ASSERT_EQ(t.child.n, 1);
    ASSERT_EQ(t.child.nr[0], SYS_execve);
}

TEST_IMPL(spawn_syscalls_all_defaults)
{
    /* pk_run with every default: stdin /dev/null, stdout and stderr captured, contained. The run
     * polls the pipes; the end of both and a waitid on the pid tell the exit, so a run shorter
     * than the 10 ms window takes no pidfd. Under ptrace on a loaded machine a run can outlast
     * the window: then it must have taken exactly one pidfd (pidfd_open) and reaped through it,
     * and the test tries again; one short run in five is required. */
    need_cgroup_here();
    struct trace t;
    const struct calls *p = &t.parent, *c = &t.child;
    bool short_run = false;
    for (int attempt = 0; attempt < 5 && !short_run; attempt++) {
        trace_helper("defaults", &t);
        show("parent", p);
        show("child", c);
        int lazy = count(p, SYS_pidfd_open);
        ASSERT_LE(lazy, 1);
        ASSERT_EQ(count(p, SYS_waitid), 1);
        ASSERT_EQ(p->args[index_of(p, SYS_waitid)][0], lazy ? P_PIDFD : P_PID);
        ASSERT_EQ(count(p, SYS_close), 4 + lazy); /* two child ends, two read ends, [the pidfd] */
        short_run = lazy == 0;
    }
    if (!short_run)
        pk_test_fail(__FILE__, __LINE__, "no run finished inside the 10 ms window in 5 tries");
    ASSERT_EQ(t.children, 1);
    ASSERT_EQ(count(p, SYS_pipe2), 2);
    /* No fcntl: pk_run reads its pipes only where ppoll says they are ready, so they stay
     * blocking unless the drain after the exit finds one still open. */
    ASSERT_EQ(count(p, SYS_fcntl), 0);
    ASSERT_EQ(fstat_count(p), 1); /* the kept /dev/null, checked */
    ASSERT_EQ(count(p, SYS_openat), 0);
    ASSERT_EQ(count(p, SYS_read), 2); /* one read returning 0 per pipe: POLLHUP alone is no EOF */
    ASSERT_EQ(count(p, SYS_pread64), 1);
    ASSERT_EQ(count(p, SYS_rt_sigaction), 1);                     /* SIGCHLD's disposition, read */
    ASSERT_LT(index_of(p, SYS_waitid), index_of(p, SYS_pread64)); /* reap, then the leaf read */
    ASSERT_GE(count(p, SYS_ppoll), 1);
    ASSERT_LE(p->n, 18);
    /* The child: three dup2s, close_range, execve; no open of /dev/null. */
    ASSERT_EQ(dup2_count(c), 3);
    ASSERT_EQ(count(c, SYS_openat), 0);
    ASSERT_EQ(count(c, SYS_close), 0);
    ASSERT_EQ(count(c, SYS_close_range), 1);
    ASSERT_EQ(c->n, 5);
}

/* The allocations 20 warm runs of `mode` make in a helper run with the counter preloaded. */
static unsigned long allocations(const char *mode)
{
    char preload[1024];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", PK_MALLOC_COUNT_PATH);
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("alloc-count", mode),
                                   .env.set = (const char *const[]){preload, NULL}},
                     &r));
    ASSERT_EXITED(r, 0);
    if (r.out.data == NULL || strcmp(r.out.data, "no counter\n") == 0)
        pk_test_fail(__FILE__, __LINE__, "the counter was not preloaded: %s", preload);
    unsigned long n = strtoul(r.out.data, NULL, 10);
    printf("# %s: %lu allocations in 20 runs\n", mode, n);
    pk_result_release(&r);
    return n;
}

TEST_IMPL(spawn_hot_path_allocates_nothing)
{
    /* A warm run allocates nothing: not for the spawn, the containment, the pipes or the reap
     * (a child that writes nothing leaves no capture buffer either). */
    if (PK_TEST_UNDER_ASAN)
        pk_test_skip_gate("build", "AddressSanitizer owns malloc: the counter cannot be preloaded");
    ASSERT_EQ(allocations("contained"), 0);
    ASSERT_EQ(allocations("defaults"), 0);
}
