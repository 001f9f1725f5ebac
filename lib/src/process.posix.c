/*
 * Starting a described command on POSIX: the pk_process handle's birth, and the accessors that
 * read what only POSIX has (a pidfd, the pipes' descriptors). The rest of the handle (pk_run,
 * pk_spawn, waiting) is shared with Windows (process.c).
 *
 * Validate, resolve the program in the parent (a bare name costs one PATH walk, a path none),
 * build the environment only when it changes, create the pipes the command asks for (O_CLOEXEC,
 * so a concurrent spawn in another thread never inherits them), set up containment (a private
 * group borrowed from the leaf pool unless the command names a group or asks for none), describe
 * the child's side as a plan, and hand the plan to the mechanism (spawn.linux.c). Files are
 * opened by the child itself, so the parent has nothing to close for them; /dev/null is a
 * descriptor kept open between runs (null.posix.c), which the child duplicates.
 *
 * What happens after the start — feeding stdin, pumping the streams, time limits, the exit and
 * the reap — is the engine's (engine.linux.c).
 */
#define _GNU_SOURCE
#include "command.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fills the child's plan for one stream; creates a pipe when the stream is captured or fed.
 * *child_end receives the descriptor the parent must close after the spawn. /dev/null comes from
 * the kept descriptors in null_fds ([0] read, [1] write). */
static int plan_stream(const pk_stdio *s,
                       int stream,
                       const int null_fds[2],
                       struct pk__io_plan *io,
                       int *parent_end,
                       int *child_end)
{
    switch (pk__stdio_kind(s, stream)) {
    case PK_STDIO_NULL:
        *io = (struct pk__io_plan){PK__IO_DUP, null_fds[stream == 0 ? 0 : 1], NULL, 0};
        return 0;
    case PK_STDIO_INHERIT:
        *io = (struct pk__io_plan){PK__IO_KEEP, -1, NULL, 0};
        return 0;
    case PK_STDIO_FILE: {
        int flags = stream == 0 ? O_RDONLY : O_WRONLY | O_CREAT | (s->append ? O_APPEND : O_TRUNC);
        *io = (struct pk__io_plan){PK__IO_OPEN, -1, s->path, flags};
        return 0;
    }
    case PK_STDIO_FD:
        *io = (struct pk__io_plan){PK__IO_DUP, s->fd, NULL, 0};
        return 0;
    case PK_STDIO_MERGE:
        *io = (struct pk__io_plan){PK__IO_SAME_AS_1, -1, NULL, 0};
        return 0;
    case PK_STDIO_CAPTURE:
    case PK_STDIO_BYTES: {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            return -errno;
        /* p[0] reads, p[1] writes: the child reads its stdin, writes its outputs. */
        *parent_end = stream == 0 ? p[1] : p[0];
        *child_end = stream == 0 ? p[0] : p[1];
        *io = (struct pk__io_plan){PK__IO_DUP, *child_end, NULL, 0};
        return 0;
    }
    case PK_STDIO_DEFAULT:
        break;
    }
    return -EINVAL;
}

/* For a pipe end this library just made: its status flags are known to be none besides the
 * access mode (which F_SETFL ignores), so one F_SETFL sets O_NONBLOCK without an F_GETFL. */
static int set_nonblock(int fd)
{
    return fcntl(fd, F_SETFL, O_NONBLOCK) < 0 ? -errno : 0;
}

/* A step from prepare_stdio on failed, or the child reported its failure: names the stage that
 * failed and undoes what start built, so the caller gets back a handle that owns nothing. */
static int fail_start(struct pk_process *proc,
                      const struct pk__child_plan *plan,
                      pk_result *failure,
                      pk_stage stage,
                      int rc)
{
    if (rc == PK__ECHILD_FAILED) {
        /* The child recorded where it failed; it is already reaped. */
        stage = (pk_stage)plan->err_stage;
        rc = -plan->err_errno;
    }
    pk__set_failure(failure, stage, rc);
    pk__close_fd(&proc->in_fd);
    for (int i = 1; i < 3; i++)
        pk__stream_release(&proc->streams[i]);
    if (proc->has_own) {
        pk__group_close(&proc->own);
        proc->has_own = false;
    }
    return rc;
}

/* The steps of pk__process_start, in order. Each is called once, so the compiler inlines them:
 * the spawn path stays one straight line with no extra calls, allocations or system calls. */

/* Every descriptor -1 first, so that a failure at any later step can close what exists. */
static void init_handle(struct pk_process *proc)
{
    memset(proc, 0, sizeof *proc);
    proc->pidfd = proc->epfd = -1;
    proc->in_fd = proc->in_reader = -1;
    proc->streams[1].fd = proc->streams[2].fd = -1;
    proc->start_ns = pk__now_ns();
}

/* Resolves a bare name in the parent (a path is used as is), so that a miss is reported with the
 * directories searched and spawns nothing. */
static int resolve_path(const pk_command *cmd,
                        const char *program,
                        char pathbuf[PATH_MAX],
                        struct pk__child_plan *plan,
                        pk_result *failure)
{
    plan->path = program;
    if (strchr(program, '/') != NULL)
        return 0;
    const char *pathvar = pk__child_path(&cmd->env);
    int rc = pk__resolve(program, pathvar, pathbuf, PATH_MAX);
    if (rc != 0) {
        pk__set_failure(failure, PK_STAGE_RESOLVE, rc);
        if (rc == PK_ENOTFOUND && failure != NULL)
            failure->searched = strdup(pathvar);
        return rc;
    }
    plan->path = pathbuf;
    return 0;
}

/* Plans the three streams and hands the parent its pipe ends. The streams are initialised even
 * after a failure, because fail_start releases them. The child's ends go to child_ends: the
 * caller closes them once the child has its copies. A stream on /dev/null takes a kept
 * descriptor, which stays locked (*null_locked) until the caller calls pk__null_unlock after the
 * spawn; a failure to open /dev/null is reported at stage stdio, as the child's open was.
 *
 * A handle's read ends are made non-blocking at once: its owner may read them (pk_process_fd
 * says so). pk_run's are never seen outside the engine, which reads a pipe only when ppoll says
 * it is ready (bytes, or no writer left), so a blocking read returns at once there; the one read
 * that may find an empty pipe with a writer still open, the drain after the exit, makes the
 * descriptor non-blocking first (engine.linux.c). That spares one fcntl per captured stream. */
static int prepare_stdio(const pk_command *cmd,
                         struct pk_process *proc,
                         struct pk__child_plan *plan,
                         int child_ends[3],
                         bool *null_locked,
                         bool exit_only,
                         pk_stage *stage)
{
    int rc = 0;
    int parent_ends[3] = {-1, -1, -1};
    const pk_stdio *streams[3] = {&cmd->in, &cmd->out, &cmd->err};
    bool null_in = pk__stdio_kind(&cmd->in, 0) == PK_STDIO_NULL;
    bool null_out = pk__stdio_kind(&cmd->out, 1) == PK_STDIO_NULL ||
                    pk__stdio_kind(&cmd->err, 2) == PK_STDIO_NULL;
    int null_fds[2] = {-1, -1};
    if (null_in || null_out) {
        rc = pk__null_lock(null_in, null_out, null_fds);
        *null_locked = rc == 0;
        if (rc != 0)
            *stage = PK_STAGE_STDIO;
    }
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = plan_stream(streams[i], i, null_fds, &plan->io[i], &parent_ends[i], &child_ends[i]);
    proc->in_fd = parent_ends[0];
    for (int i = 1; i < 3; i++) {
        pk__stream_init(&proc->streams[i], i, streams[i], cmd->on_line != NULL);
        proc->streams[i].fd = parent_ends[i];
        /* Non-blocking, so the drain after the child's exit stops at what is buffered. */
        if (exit_only)
            proc->streams[i].blocking = parent_ends[i] >= 0;
        else if (rc == 0 && parent_ends[i] >= 0)
            rc = set_nonblock(parent_ends[i]);
    }
    return rc;
}

/* Whether the child is given a pidfd at the spawn. A handle (pk_spawn, the loop) always gets one:
 * it may be polled or signalled. A run that only awaits the end (pk_run) needs one at once only
 * when a time limit or a cancel handle may have to act on it, or when it feeds stdin more than
 * PIPE_BUF (below); otherwise it blocks in waitid on the pid, or polls its pipes and takes a pidfd
 * later only if the child outlives PK__LAZY_PIDFD_NS (engine.linux.c): a short run never pays for
 * one. */
static bool pidfd_at_spawn(const pk_command *cmd, bool exit_only)
{
    if (!exit_only || cmd->timeout_ms != 0 || cmd->idle_timeout_ms != 0 || cmd->cancel != NULL)
        return true;
    /* stdin's pipe keeps a reader of ours (engine.linux.c), so a child that exits without
     * reading all of a payload larger than PIPE_BUF leaves the pipe full, not broken, and the
     * feed still waits to write: the end of the output pipes cannot end the run then, only the
     * exit can, so the exit is watched on a pidfd from the start (without one, the lazy pidfd
     * would notice it up to 10 ms late). A few µs, on a run that moves more than 4 KiB. */
    if (pk__stdio_kind(&cmd->in, 0) == PK_STDIO_BYTES && cmd->in.len > PIPE_BUF)
        return true;
    /* A host that ignores SIGCHLD has the kernel reap the child at its exit: only a pidfd then
     * keeps its status (wait.linux.c). One rt_sigaction read tells, for a fraction of a pidfd's
     * cost; a host that starts ignoring SIGCHLD while such a run is in flight gets -ECHILD. */
    return pk__sigchld_ignored();
}

/* Whether a spawn into a cgroup leaf failed because someone else removed the leaf (the clone, or
 * the child's move through cgroup.procs, finds it gone) or killed it (the child died unborn). */
static bool leaf_taken(int rc, const struct pk__child_plan *plan, bool into_cgroup)
{
    if (rc == PK__ELEAF_KILLED)
        return true;
    if (rc == PK__ECHILD_FAILED)
        return plan->err_stage == PK_STAGE_CONTAIN &&
               (plan->err_errno == ENOENT || plan->err_errno == ENODEV);
    return into_cgroup && (rc == -ENOENT || rc == -ENODEV);
}

/* Starts the child, inside its group when there is one; *stage names the step that failed. A
 * group whose leaf was taken from outside gets a fresh one and the spawn is made again, at most
 * twice: nothing had run (leaf.linux.c). */
static int spawn_child(struct pk_process *proc, struct pk__child_plan *plan, pk_stage *stage)
{
    struct pk_group *group = proc->group;
    if (group == NULL) {
        *stage = PK_STAGE_CLONE;
        return pk__spawn_plan(plan, &proc->pid, &proc->pidfd);
    }
    for (int attempt = 0;; attempt++) {
        *stage = PK_STAGE_CONTAIN;
        plan->cgroup_fd = -1;
        int rc = pk__group_plan(group, plan);
        if (rc != 0)
            return rc;
        bool into_cgroup = plan->cgroup_fd >= 0;
        *stage = PK_STAGE_CLONE;
        rc = pk__spawn_plan(plan, &proc->pid, &proc->pidfd);
        if (rc == 0)
            pk__group_joined(group, proc->pid);
        pk__group_plan_done(group, plan);
        if (rc == 0 || attempt == 2 || !leaf_taken(rc, plan, into_cgroup))
            return rc == PK__ELEAF_KILLED ? -ENODEV : rc;
        *stage = PK_STAGE_CONTAIN;
        rc = pk__group_recover(group);
        if (rc != 0)
            return rc;
    }
}

/* The parent's side of a started run: what the engine needs to feed stdin, deliver lines and
 * enforce the limits. */
static void arm_run(const pk_command *cmd, struct pk_process *proc)
{
    pk__process_arm(cmd, proc, proc->in_fd >= 0);
    /* Up to PIPE_BUF bytes go into the fresh pipe at once in one blocking write; a larger payload
     * is fed by the poll loop, which needs a non-blocking descriptor. */
    if (proc->in_fd >= 0 && proc->in_len > PIPE_BUF)
        (void)set_nonblock(proc->in_fd);
}

/* The caller's controlling terminal among 0..2 when its process group is the foreground one
 * (tcgetpgrp fails on any other terminal); -1 when none. Asked only for take_terminal. */
static int foreground_tty(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (isatty(fd) && tcgetpgrp(fd) == getpgrp())
            return fd;
    return -1;
}

int pk__process_start(const pk_command *cmd,
                      struct pk_process *proc,
                      pk_result *failure,
                      bool exit_only)
{
    return pk__process_start_low(cmd, proc, failure, exit_only, NULL);
}

int pk__process_start_low(const pk_command *cmd,
                          struct pk_process *proc,
                          pk_result *failure,
                          bool exit_only,
                          struct pk__low_fds *low)
{
    init_handle(proc);
    const char *program;
    int rc = pk__process_check(cmd, failure, &program);
    if (rc != 0)
        return rc;

    struct pk__child_plan plan = {
        .cwd = cmd->cwd,
        .cgroup_fd = -1,
        .cgroup_procs_fd = -1,
        .pgid = cmd->new_pgroup ? 0 : -1, /* a process group's containment decides its own */
        .tty_fd = cmd->take_terminal ? foreground_tty() : -1,
        .pdeathsig = cmd->pdeathsig,
        .inherit_fds = cmd->inherit_fds,
        .parent_pid = cmd->pdeathsig > 0 ? (int)getpid() : 0,
        .low = low,
    };
    char pathbuf[PATH_MAX];
    rc = resolve_path(cmd, program, pathbuf, &plan, failure);
    if (rc != 0)
        return rc;
    char **owned_env = NULL;
    char *const *envp;
    rc = pk__build_env(&cmd->env, &envp, &owned_env);
    if (rc != 0) {
        pk__set_failure(failure, PK_STAGE_VALIDATE, rc);
        return rc;
    }
    plan.envp = envp;
    const char *default_argv[2] = {program, NULL};
    plan.argv = (char *const *)(cmd->argv != NULL ? cmd->argv : default_argv);

    int child_ends[3] = {-1, -1, -1};
    pk_stage stage = PK_STAGE_PREPARE;
    bool null_locked = false;
    rc = prepare_stdio(cmd, proc, &plan, child_ends, &null_locked, exit_only, &stage);
    plan.want_pidfd = pidfd_at_spawn(cmd, exit_only);
    if (rc == 0) {
        stage = PK_STAGE_CONTAIN;
        rc = pk__process_contain(cmd, proc);
    }
    if (rc == 0)
        rc = spawn_child(proc, &plan, &stage);
    /* The child has its copies (or never will): the parent keeps only its own ends, and stdin's
     * read end while it feeds the payload (engine.linux.c). */
    if (rc == 0 && proc->in_fd >= 0) {
        proc->in_reader = child_ends[0];
        child_ends[0] = -1;
    }
    if (null_locked)
        pk__null_unlock();
    for (int i = 0; i < 3; i++)
        pk__close_fd(&child_ends[i]);
    free(owned_env);

    if (rc != 0)
        return fail_start(proc, &plan, failure, stage, rc);
    arm_run(cmd, proc);
    /* Pipes but no pidfd: the engine takes one if the child is still running by then. */
    bool pipes = proc->in_fd >= 0 || proc->streams[1].fd >= 0 || proc->streams[2].fd >= 0;
    if (proc->pidfd < 0 && pipes && !plan.want_pidfd)
        proc->pidfd_at_ns = proc->start_ns + PK__LAZY_PIDFD_NS;
    return 0;
}

/* ---- public API: what only POSIX has ------------------------------------------------------ */

int pk__process_signal(struct pk_process *proc, int signo)
{
    return pk__signal(proc->pid, proc->pidfd, signo);
}

int pk_process_signal_tree(pk_process *proc, int signo)
{
    if (proc == NULL)
        return -EINVAL;
    struct pk_group *g = proc->group;
    if (g == NULL)
        return pk_process_signal(proc, signo);
    pk__group_lock(g); /* a shared group's leaf cannot be replaced meanwhile */
    int rc = pk__group_signal(g, signo);
    /* The direct child too, when it left the group (as root a command can move itself out of its
     * leaf): SIGKILL without asking, another signal only then, or it would get it twice. */
    bool left = !proc->reaped && (signo == SIGKILL || !pk__group_holds(g, proc->pid));
    pk__group_unlock(g);
    if (left)
        (void)pk__process_signal(proc, signo);
    return rc;
}

int pk_process_pidfd(const pk_process *proc)
{
    return proc != NULL ? proc->pidfd : -1;
}

int pk_process_fd(const pk_process *proc, int stream)
{
    if (proc == NULL || stream < 0 || stream > 2)
        return -1;
    return stream == 0 ? proc->in_fd : proc->streams[stream].fd;
}
