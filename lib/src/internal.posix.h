/*
 * Private declarations of the POSIX build (Linux). Nothing here is part of the public API;
 * internal non-static functions carry the pk__ prefix.
 *
 * internal.h includes them before what both platforms share.
 *
 * Module map (beside the halves both platforms share, listed in internal.h):
 *   process.posix.c  command -> child plan, pipes, containment set-up; the pidfd and descriptors
 *   spawn.linux.c    mechanism probe, clone3/clone paths      spawn.posix.c  vfork, posix_spawn
 *   child.linux.c    the child side between clone and execve  wait.linux.c   reap, signal
 *   engine.linux.c   one run's I/O and exit steps, and its ppoll driver
 *   loop.linux.c     pk_loop's epoll set      lowfd.linux.c  its children's descriptors, low
 *   group.posix.c    a group's mechanism: cgroup.linux.c (with leaf.linux.c, holder.linux.c and
 *                    guard.linux.c) or pgroup.posix.c
 *   cancel.linux.c   cancel handles' eventfd
 *   null.posix.c     /dev/null kept open for the children's streams
 *   env.posix.c, resolve.posix.c, errname.linux.c
 */
#ifndef PK_INTERNAL_POSIX_H
#define PK_INTERNAL_POSIX_H

#include "processkit.h"
#include "timelimits.h"
#include "pump.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

/* ---- the child plan ------------------------------------------------------------------------ */

/* What the child must put on one of its standard descriptors. */
enum pk__io_action {
    PK__IO_KEEP = 0, /* inherit: leave the descriptor as it is */
    PK__IO_DUP,      /* dup2(.fd, target) */
    PK__IO_OPEN,     /* open(.path, .flags) then dup2 onto target */
    PK__IO_SAME_AS_1 /* stderr only: dup2(1, 2) after stdout is in place */
};

struct pk__io_plan {
    enum pk__io_action action;
    int fd;
    const char *path;
    int flags;
};

/* Everything the child needs, prepared by the parent before the clone so that the child only
 * runs async-signal-safe system calls. The child shares the parent's memory (CLONE_VM) and writes
 * its failure into err_stage/err_errno; the parent reads them once the vfork-style suspension
 * ends. */
struct pk__child_plan {
    const char *path; /* what execve receives */
    char *const *argv;
    char *const *envp;
    const char *cwd;
    struct pk__io_plan io[3];
    sigset_t mask;           /* the parent's signal mask, restored just before execve */
    bool restore_mask;       /* the parent blocked all signals around the clone (fallback paths) */
    bool reset_handlers;     /* no CLONE_CLEAR_SIGHAND: reset the parent's handlers in the child */
    int cgroup_fd;           /* O_PATH directory for CLONE_INTO_CGROUP, -1 for none */
    int cgroup_procs_fd;     /* when the mechanism cannot clone into a cgroup: the child writes "0"
                                here to move itself (stage contain); -1 for none */
    int pgid;                /* -1: leave alone; 0: lead a new process group; >0: join it */
    int tty_fd;              /* a new group leader takes this terminal (take_terminal); -1: no */
    int pdeathsig;           /* 0: none */
    int parent_pid;          /* for the PR_SET_PDEATHSIG race check */
    bool want_pidfd;         /* the caller polls or signals the child: create a pidfd */
    bool inherit_fds;        /* skip close_range: the caller's descriptors are all O_CLOEXEC */
    bool share_files;        /* cloned with CLONE_FILES: unshare before stdio, keeping only the
                                descriptors below unshare_from (3: just 0..2) */
    unsigned unshare_from;   /* when share_files; above 3, the child closes 3.. after stdio */
    struct pk__low_fds *low; /* a pk_loop's low slots (lowfd.linux.c), or NULL */
    volatile int started;    /* the child ran (its first step): see PK__ELEAF_KILLED */
    volatile int err_stage;  /* pk_stage of the failure, 0 when none */
    volatile int err_errno;  /* positive errno of the failure */
};

/* A pk_loop's three low descriptor slots and the private pipe that marks them (lowfd.linux.c):
 * a child whose pipes are numbered at PK__LOW_TOP or above gets them through the slots, so that it
 * copies only the low part of our table. All -1 when the loop has none. */
struct pk__low_fds {
    int anchor;
    int slot[3];
    dev_t dev;
    ino_t ino;
};
/* Below this the child's descriptors are copied as they are: the kernel copies at least this many
 * entries of a table anyway (NR_OPEN_DEFAULT, one word of bits). */
#define PK__LOW_TOP 64
/* Takes the slots (at a loop's first run); leaves them all -1 when it cannot. */
void pk__low_open(struct pk__low_fds *low);
void pk__low_close(struct pk__low_fds *low);
/* Before a clone3 of plan (clone3 only: CLONE_FILES; and close_range with CLOSE_RANGE_UNSHARE,
 * which the caller has checked): lets the child share our table and copy only its low part,
 * duplicating onto the slots the descriptors it needs at PK__LOW_TOP or above (their numbers saved
 * in moved[], -1 where none); nothing when plan->low is NULL, the child shares already, or keeps
 * our descriptors (inherit_fds). */
void pk__low_place(struct pk__child_plan *plan, int moved[3]);
/* After the clone: the slots hold the anchor again, plan's descriptors are the saved ones. */
void pk__low_unplace(struct pk__child_plan *plan, const int moved[3]);

/* pk__process_start (internal.h) for a pk_loop's run: its child's descriptors go through the
 * loop's low slots (NULL: none, as pk__process_start). */
int pk__process_start_low(const pk_command *cmd,
                          struct pk_process *proc,
                          pk_result *failure,
                          bool exit_only,
                          struct pk__low_fds *low);

/* The child side: never returns (execve, or _exit(127) after recording the failure). */
_Noreturn void pk__child_main(struct pk__child_plan *plan);

/* Starts a child for `plan` with the probed mechanism. On success returns 0 with *pid and
 * *pidfd (-1 when plan->want_pidfd is false, or when the mechanism gave none and the kernel has no
 * pidfd_open). A failure inside
 * the child is reported through plan->err_stage/err_errno with the child already reaped, and the
 * function returns PK__ECHILD_FAILED. Other failures (the clone itself) return a negative errno. */
int pk__spawn_plan(struct pk__child_plan *plan, int *pid, int *pidfd);

/* Returned by pk__spawn_plan when the child recorded a failure in the plan. Never public. */
#define PK__ECHILD_FAILED (-3999)
/* Returned by pk__spawn_plan when the child cloned into plan->cgroup_fd was killed before it ran
 * a single step: the kernel does that to every child cloned into a leaf that was ever killed
 * (cgroup.linux.c), so someone else killed ours. It is reaped; the caller may retry in a fresh
 * leaf (process.posix.c). Never public. */
#define PK__ELEAF_KILLED (-3998)

/* True when the probed mechanism honours plan->cgroup_fd (clone3 with CLONE_INTO_CGROUP). */
bool pk__spawn_into_cgroup(void);

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
#define PK__CLONE_CLEAR_SIGHAND 0x100000000ULL
#define PK__CLONE_INTO_CGROUP   0x200000000ULL

/* Raw clone3 on a fresh stack running fn(arg) in the child; returns the child's pid in the
 * parent, or -errno. The architecture file provides it (clone3.<arch>.S); elsewhere it returns
 * -ENOSYS and the probe falls back to clone(). */
long pk__clone3_raw(void *args, size_t size, int (*fn)(void *), void *arg);

/* ---- resolution, environment, waiting ------------------------------------------------------ */

/* Program resolution into a caller buffer of PATH_MAX bytes; same rules as pk_resolve_program.
 * `pathvar` is the PATH to search (NULL: the default). */
int pk__resolve(const char *program, const char *pathvar, char *buf, size_t cap);

/* The PATH a child started with `env` would see, for resolution. */
const char *pk__child_path(const pk_env *env);

/* Builds the child's environment. *envp is `environ` itself when env asks for no change (and
 * *owned is NULL); otherwise a malloc'd array in *owned, freed by the caller with free(). */
int pk__build_env(const pk_env *env, char *const **envp, char ***owned);

/* Reaps the child through its pidfd (or waitid(P_PID) when there is none), filling the outcome's
 * kind, code/signal and CPU times. Blocking. Returns 0 or -errno. */
int pk__reap(int pid, int pidfd, pk_outcome *outcome);

/* pidfd_open of our unreaped child (its pid cannot be reused before the reap): the descriptor,
 * or -errno (-ENOSYS before 5.3). */
int pk__pidfd_open(int pid);

/* True when this process ignores SIGCHLD (SIG_IGN, or SA_NOCLDWAIT): the kernel then reaps our
 * children at their exit, and only a pidfd keeps their status (see wait.linux.c). */
bool pk__sigchld_ignored(void);

/* Sends signo through the pidfd (kill(2) only when there is none). Returns 0 or -errno. */
int pk__signal(int pid, int pidfd, int signo);

/* Closes *fd unless it is -1, and marks it closed. */
static inline void pk__close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/* The signal numbers the shared files name (internal.windows.h gives the same names). */
#define PK__SIGKILL SIGKILL
#define PK__SIGTERM SIGTERM
#define PK__SIGCONT SIGCONT

/* ---- /dev/null, kept open (null.posix.c) ---------------------------------------------------- */

/* The kept /dev/null descriptors for one spawn, opened or reopened as needed: fds[0] read-only
 * when want_read, fds[1] write-only when want_write, else -1. On 0 the caller holds them until
 * pk__null_unlock, which it calls once the child has its copies; on -errno nothing is held. */
int pk__null_lock(bool want_read, bool want_write, int fds[2]);
void pk__null_unlock(void);
/* Closes both (pk_cleanup). */
void pk__null_close(void);

/* A slowdown injected on purpose, for the drift study only (tests/drift/study.sh builds a second
 * pkbench with -DPK_INJECT_SLOWDOWN_PCT=N): after a child is reaped the parent spins N% of the
 * run's lifetime so far — a real slowdown of processkit that no control series shares. In every
 * other build it is an empty inline function and costs nothing. */
#if defined(PK_INJECT_SLOWDOWN_PCT) && PK_INJECT_SLOWDOWN_PCT > 0
void pk__inject_slowdown(int64_t start_ns);
#else
static inline void pk__inject_slowdown(int64_t start_ns)
{
    (void)start_ns;
}
#endif

/* ---- the stream pump: pump.h (shared with the Windows build) ----------------------------- */

/* ---- groups (group.posix.c, cgroup.linux.c, leaf.linux.c, pgroup.posix.c) ---------------- */

struct pk_group {
    pk_containment mech; /* PK_CONTAIN_CGROUP or PK_CONTAIN_PGROUP */
    /* cgroup */
    char name[48]; /* the leaf directory's name under pk__cgroup_parent() */
    int dirfd; /* its directory, O_RDONLY and flock'ed: it proves we own the leaf (leaf.linux.c);
                  -1 when closed */
    int events_fd; /* its cgroup.events, read with pread; -1 while a holder is in the leaf
                      (opened again to wait for a killed tree: cgroup.linux.c) */
    int procs_pin; /* its cgroup.procs, read-only: keeps the file's inode cached, and a held
                      leaf's emptiness is read from it; -1 until a pooled leaf's second lend */
    bool pooled;   /* a private leaf borrowed from the pool (returned, not removed) */
    int holder;    /* a pooled leaf's holder (holder.linux.c), 0 when it has none */
    bool killed;   /* cgroup.kill was written: see pk__group_plan */
    /* A shared group (pk_group_new) may get a fresh leaf after a kill (pk__cgroup_renew): spawns
     * and the public calls hold this as readers while they use the leaf's descriptors, the
     * renewal as the writer. Private groups never renew and never take it. */
    pthread_rwlock_t leaf_lock;
    int64_t cpu_user_base, cpu_sys_base; /* CPU of the tree in leaves replaced so far, µs */
    /* process group */
    pthread_mutex_t lock; /* guards pgid across concurrent spawns into one group */
    int pgid;             /* 0 until the first member leads it */
    bool heap;
};

/* The cgroup v2 directory this process lives in (mount + the `0::` path), into *dir. Returns 0,
 * PK_ENOCONTAIN when there is none we could use (decided once), or -EMFILE / -ENFILE / -ENOMEM
 * when the probe could not run (not remembered: the next call probes again). */
int pk__cgroup_parent(const char **dir);
/* Makes a new leaf ("pk-<pid>-<tag>-<n>", leaf.linux.c), or borrows one from the private-run
 * pool. */
int pk__cgroup_create(struct pk_group *g, bool pooled);
/* Kills what is left, waits until empty, then removes the leaf or returns it to the pool. */
void pk__cgroup_destroy(struct pk_group *g);
/* Replaces a killed, empty leaf with a fresh one, so that children are cloned into the group
 * again instead of moving themselves in through cgroup.procs; the old leaf's CPU time is carried
 * over. 0 when replaced; -EBUSY (members left) or -errno, and the leaf stays. */
int pk__cgroup_renew(struct pk_group *g);
/* Gives a private run's group a fresh leaf after its own was removed or killed by someone else
 * (found at the spawn): the old one is dropped (and the pool's others found gone with it). 0, or
 * -errno with the group left without a leaf. */
int pk__cgroup_replace(struct pk_group *g);
/* 1 when process pid is in g's leaf, 0 when not (or when it cannot be told). */
int pk__cgroup_holds(const struct pk_group *g, int pid);
/* The CPU a leaf has accounted (cpu.stat), added to *user and *sys in µs. */
void pk__cgroup_add_cpu(int dirfd, int64_t *user, int64_t *sys);
int pk__cgroup_signal(struct pk_group *g, int signo);
int pk__cgroup_kill(struct pk_group *g);
/* Waits until the leaf has no process, up to timeout_ms. 0, -ETIMEDOUT or -errno. */
int pk__cgroup_wait_empty(struct pk_group *g, int64_t timeout_ms);
/* 1 when the leaf has a process, 0 when not, or -errno. */
int pk__cgroup_populated(struct pk_group *g);
int pk__cgroup_freeze(struct pk_group *g, bool frozen);
int pk__cgroup_members(struct pk_group *g, int *pids, size_t cap, size_t *count);
int pk__cgroup_stats(struct pk_group *g, pk_group_stats *st);
bool pk__cgroup_usable(void);

int pk__pgroup_signal(struct pk_group *g, int signo);
/* 1 when some member of the process group is alive, 0 when none. */
int pk__pgroup_alive(struct pk_group *g);
int pk__pgroup_wait_empty(struct pk_group *g, int64_t timeout_ms);
int pk__pgroup_members(struct pk_group *g, int *pids, size_t cap, size_t *count);
int pk__pgroup_stats(struct pk_group *g, pk_group_stats *st);

/* pk__group_init and the rest of what both platforms' groups do: internal.h. */

/* Fills the child plan's containment fields; records a new process group's leader afterwards
 * through pk__group_joined. */
int pk__group_plan(struct pk_group *g, struct pk__child_plan *plan);
void pk__group_joined(struct pk_group *g, int pid);
void pk__group_plan_done(struct pk_group *g, struct pk__child_plan *plan);
/* Whether process pid (a child of ours, not reaped) is still in g: in its leaf, or its process
 * group. As root a command can move itself out of its leaf. */
bool pk__group_holds(struct pk_group *g, int pid);
/* After a spawn found g's leaf removed or killed by someone else: gives g a fresh leaf (a private
 * run's), or marks it for renewal at the next spawn (a shared group's). 0 or -errno. */
int pk__group_recover(struct pk_group *g);

/* ---- leaf holders (holder.linux.c) ------------------------------------------------------- */

/* Makes the pipe holders watch now, if it is not there (at a process's first leaf, while its
 * descriptor table is small: each holder copies the table up to the pipe's read end). */
void pk__holder_prepare(void);
/* Starts a holder in the cgroup leaf `dirfd`: a task that keeps the leaf populated between runs.
 * Returns its pid, or -errno (-ENOSYS where this build or kernel cannot make one). */
int pk__holder_start(int dirfd);
/* Kills and reaps the holder *pid (when > 0) and sets *pid to 0. */
void pk__holder_end(int *pid);
/* Whether a held leaf has members besides its holder, from its cgroup.procs (`procs_fd`, read with
 * pread): 1 yes, 0 no, -errno when it cannot be read. A holder found gone is reaped (*holder = 0).
 */
int pk__holder_populated(int procs_fd, int *holder);
/* Closes the pipe holders watch, so every holder left exits (pk_cleanup, process exit). */
void pk__holder_release(void);
/* In a forked child: drops the parent's pipe without touching the parent's holders. */
void pk__holder_forget(void);
/* The arch trampoline (holder.<arch>.S): clone3 with `args`, the child keeping only keep_fd and
 * sleeping until it reads end-of-file there. The pid or -errno; -ENOSYS where none exists. */
long pk__holder_clone(void *args, size_t size, int keep_fd);

/* ---- the guardian (guard.linux.c) ------------------------------------------------------- */

/* All called under the pool's lock (leaf.linux.c). */
/* Lists leaf `name` (under the directory dir_fd) as ours, starting the guardian with the first:
 * should this process die or exec before pk__guard_remove, the guardian kills the leaf's tree and
 * removes it. 0, or -errno (the leaf then goes unguarded: -ENOSYS where no guardian exists). */
int pk__guard_add(int dir_fd, const char *name);
/* Forgets leaf `name` (removed by us, or about to be). */
void pk__guard_remove(const char *name);
/* Lets the guardian go, so it exits without killing anything: when no leaf is listed any more,
 * or in any case with `force` (process exit); `wait` reaps it. */
void pk__guard_release(bool force, bool wait);
/* In a forked child: forgets the parent's leaves and its guardian without touching either. */
void pk__guard_forget(void);
/* The arch trampoline (guard.<arch>.S): clone3 with `args`, the child keeping watch_fd and dir_fd
 * and acting on `state` once watch_fd reads end-of-file. The pid or -errno; -ENOSYS where none
 * exists. */
long pk__guard_clone(void *args, size_t size, int watch_fd, int dir_fd, void *state, unsigned gen);

/* ---- cancel handles ------------------------------------------------------------------------ */

struct pk_cancel {
    int efd;                     /* eventfd, readable once triggered (never read back) */
    volatile sig_atomic_t signo; /* the first signal to send, SIGTERM by default */
    volatile sig_atomic_t fired;
};

/* ---- pk_loop's fields on Linux (loop.linux.c; the loop itself: loop.h) ------------------- */

struct pk__loop_run;

/* One epoll registration: the run, and which of its descriptors it is (loop.linux.c's W_*). */
struct pk__loop_watch {
    struct pk__loop_run *run;
    int what;
};
#define PK__LOOP_WATCHES 6

/* A run's timer (-1 until it has a time limit), its own duplicate of the cancel handle's
 * eventfd (-1: none), the wake-up the timer is armed for, and one registration per descriptor. */
#define PK__LOOP_RUN_FIELDS                                                                        \
    int timerfd;                                                                                   \
    int cancel_fd;                                                                                 \
    int64_t armed_ns;                                                                              \
    struct pk__loop_watch w[PK__LOOP_WATCHES];
/* The loop's epoll set: its pollable descriptor; its low slots (lowfd.linux.c), taken at its
 * first run (`low_ready`). */
#define PK__LOOP_FIELDS                                                                            \
    int epfd;                                                                                      \
    bool low_ready;                                                                                \
    struct pk__low_fds low;

/* ---- one run: the pk_process handle and its engine (engine.linux.c) ------------------------ */

/* A run that only awaits its end, with pipes, takes a pidfd this long after the start if its
 * child is still running (engine.linux.c): until then the pipes' end tells the exit, and a child
 * whose pipes a grandchild keeps open is noticed at most this late. */
#define PK__LAZY_PIDFD_NS (10 * 1000000LL)

struct pk_process {
    int pid;
    int pidfd;
    int64_t pidfd_at_ns; /* when to take the lazy pidfd (pidfd_open), 0: not lazy */
    int epfd;            /* the pk_loop's epoll set watching this run's descriptors, or -1 */
    int in_fd;           /* stdin pipe (write end), -1 when none */
    int in_reader;       /* our own copy of its read end while in_fd is open (engine.linux.c) */
    const unsigned char *in_data;
    size_t in_len, in_off;
    struct pk__stream streams[3]; /* [1] stdout, [2] stderr; [0] unused */
    int64_t start_ns;

    /* run control */
    struct pk__limits lim; /* the time limits and cancel, and which one fired (timelimits.c) */
    pk_cancel *cancel;
    int (*on_line)(void *user, const pk_line *line);
    void *line_user;
    bool pulling;   /* the pull API is in use: lines wait for pk_process_read_line */
    bool pull_fast; /* pulling, and a call may take a buffered stdout line at once */

    /* containment */
    struct pk_group *group; /* the shared group, or &own */
    struct pk_group own;
    bool has_own;
    pk_containment containment;

    /* state */
    bool exited; /* the pidfd reported the exit and the outcome is known */
    bool reaped;
    bool taken; /* pk_process_wait has handed out the result */
    bool heap;
    int error; /* the first error of the run */
    pk_outcome outcome;
};

/* pk__process_start, pk__process_finish and the engine's shared steps: internal.h. */

/* Engine steps of the POSIX build, shared by the ppoll driver and the epoll loop. */
void pk__engine_stdin(struct pk_process *p);
/* Reads one chunk of stream i and delivers its lines to the callback (unless pulling). */
void pk__engine_read(struct pk_process *p, int i);
/* The pidfd is readable: reap, tear down a private group, drain what is buffered. */
void pk__engine_exited(struct pk_process *p);

#endif /* PK_INTERNAL_POSIX_H */
