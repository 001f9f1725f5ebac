/*
 * processkit — start, contain and stream child processes at the lowest cost the kernel allows.
 *
 * Conventions (see README.md):
 *  - Every fallible function returns 0 or a negative error: a negated errno value (-ENOENT) or a
 *    project code from PK_ERROR_MAP below (PK_ENOTFOUND). pk_strerror/pk_errname describe both.
 *  - Option structs are meant for designated initializers; all-zero means the default.
 *  - The library never keeps a caller's pointer past the call that received it.
 *  - Memory the library hands out (captured output, resolved paths) is owned by the caller and
 *    released with the function the field's comment names.
 *  - Outcomes are typed (exited / signaled / timed out / spawn failed with stage and errno); an
 *    exit code and a signal are never folded into one integer.
 *  - Every descriptor the library creates is O_CLOEXEC; the child closes all descriptors above 2
 *    (unless the command sets inherit_fds).
 *
 * Windows (the same header; the lib/src files named *.windows.c). What cannot exist there is
 * stated here:
 *  - Starts are CreateProcessW with only the child's three standard handles inherited
 *    (PROC_THREAD_ATTRIBUTE_HANDLE_LIST). argv is UTF-8, converted to UTF-16 and quoted so that
 *    CommandLineToArgvW gives it back exactly; argv[0] may not contain '"' (-EINVAL). Invalid
 *    UTF-8 in argv, the environment or cwd is -EILSEQ at stage validate.
 *  - Resolution is PATH x PATHEXT (see pk_resolve_program), done by the library, so the file
 *    started is the file reported. A .bat/.cmd runs through cmd.exe with every argument quoted;
 *    an argument cmd.exe would still interpret (a '%', a line break, a control character) is
 *    refused with PK_EUNSAFEARG before anything runs (the BatBadBut class, CVE-2024-24576).
 *  - Containment: AUTO and PK_CONTAIN_JOB give a Job Object with kill-on-close, the child born
 *    in it (PROC_THREAD_ATTRIBUTE_JOB_LIST) or, before Windows 10 1607, created suspended,
 *    assigned and resumed; CGROUP and PGROUP are PK_ENOCONTAIN. pdeathsig is accepted and has
 *    no further effect: a job dies with its last handle, so a contained child dies with us.
 *  - Exit codes are 32 bits (.code may be negative: exit(-1) is -1). An unhandled exception
 *    gives PK_OUTCOME_CRASHED with .ntstatus. Signals are mapped: 9 (SIGKILL) terminates the
 *    process (or the job), reported back as PK_OUTCOME_SIGNALED with signo 9; 15 (SIGTERM) and
 *    2 (SIGINT) send Ctrl+Break to the child's own process group (children are started with
 *    CREATE_NEW_PROCESS_GROUP, so the console's Ctrl+C does not reach them directly), which only
 *    arrives when the child shares our console (-ENOTSUP otherwise: a grace then runs out and
 *    the tree is terminated); 0 probes; anything else is -EINVAL.
 *  - Descriptors do not exist: pk_process_pidfd, pk_process_fd and pk_loop_fd return -1 (embed
 *    a loop by calling pk_loop_step(loop, 0)); pk_wait_any takes at most 64 processes.
 *    inherit_fds changes nothing: only the three standard handles are ever inherited.
 *  - pk_group_suspend/resume call NtSuspendProcess/NtResumeProcess on each member; stats give
 *    the job's CPU accounting and the members' working sets; members the job's process ids.
 */
#ifndef PROCESSKIT_H
#define PROCESSKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PK_VERSION_MAJOR 0
#define PK_VERSION_MINOR 1
#define PK_VERSION_PATCH 0

/* PK_API marks the functions the library exports. The shared library is compiled with PK_BUILDING
 * and -fvisibility=hidden, so nothing else leaves it: its internal pk__ functions stay private.
 * Code using the static library defines PK_STATIC (the CMake target processkit::processkit_static
 * and `pkg-config --static` add it); on ELF it changes nothing, on Windows it stops the functions
 * from being imported from a DLL. */
#if defined(PK_STATIC)
#define PK_API
#elif defined(_WIN32) || defined(__CYGWIN__)
#if defined(PK_BUILDING)
#define PK_API __declspec(dllexport)
#else
#define PK_API __declspec(dllimport)
#endif
#elif defined(PK_BUILDING) && (defined(__GNUC__) || defined(__clang__))
#define PK_API __attribute__((visibility("default")))
#else
#define PK_API
#endif

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

/* Project error codes sit below the errno range (libuv's trick), so a negative return value is
 * either -errno or one of these. XX(name, value, message). */
#define PK_ERROR_MAP(XX)                                                                           \
    XX(ENOTFOUND, -3001, "program not found in any PATH directory")                                \
    XX(EBADENV, -3002, "environment entry is not of the form NAME=VALUE")                          \
    XX(ETOOLARGE, -3003, "output exceeded the capture limit (fail-loud policy)")                   \
    XX(ENOCONTAIN, -3004, "the requested containment mechanism is not available on this host")     \
    XX(ECANCELLED, -3005, "cancelled before the start")                                            \
    XX(EOF, -3006, "no more lines: every captured stream reached end-of-file")                     \
    XX(EUNSAFEARG, -3007, "argument cannot be passed safely to a batch file (Windows)")

enum pk_error {
#define PK__ERROR_ENUM(name, value, msg) PK_##name = (value),
    PK_ERROR_MAP(PK__ERROR_ENUM)
#undef PK__ERROR_ENUM
};

/* A human-readable message for an error value (negative errno or PK_*). Never NULL; the string
 * is static. */
PK_API const char *pk_strerror(int err);

/* The symbolic name of an error value: "ENOENT", "PK_ENOTFOUND", or "E<number>" when unknown.
 * Stable across versions, meant for JSON and logs. Never NULL; the string is static or
 * thread-local. */
PK_API const char *pk_errname(int err);

/* ---------------------------------------------------------------------------------------------
 * Describing a command
 * ------------------------------------------------------------------------------------------- */

typedef enum pk_stdio_kind {
    /* stdin: PK_STDIO_NULL (the child sees EOF at once); stdout/stderr: PK_STDIO_CAPTURE. */
    PK_STDIO_DEFAULT = 0,
    PK_STDIO_NULL,    /* /dev/null */
    PK_STDIO_INHERIT, /* the parent's own descriptor */
    PK_STDIO_CAPTURE, /* stdout/stderr: a pipe the library drains into memory */
    PK_STDIO_BYTES,   /* stdin only: .data/.len written to the child through a pipe */
    PK_STDIO_FILE,    /* .path, opened in the child: stdin read-only; outputs created/truncated,
                         or appended with .append */
    PK_STDIO_FD,      /* .fd, a descriptor of the caller's, duplicated onto the stream */
    PK_STDIO_MERGE,   /* stderr only: the same destination as stdout (2>&1) */
} pk_stdio_kind;

/* What a captured stream keeps in memory. Whatever the policy, the pipe is always drained (the
 * child never blocks on a full pipe) and pk_output's totals count every byte and line. */
typedef enum pk_keep {
    PK_KEEP_ALL = 0, /* everything (no cap) */
    PK_KEEP_NONE,    /* nothing: count only (streamed lines are still delivered) */
    PK_KEEP_TAIL,    /* the most recent whole lines within max_bytes / max_lines (a ring) */
    PK_KEEP_HEAD,    /* an exact prefix: whole lines until the first one that does not fit, then
                        sealed (nothing after it is kept, even lines that would fit) */
    PK_KEEP_FAIL,    /* like HEAD, and the run returns PK_ETOOLARGE with the totals */
} pk_keep;

typedef struct pk_capture {
    pk_keep keep;
    size_t max_bytes; /* 0: no byte cap */
    size_t max_lines; /* 0: no line cap */
} pk_capture;

typedef struct pk_stdio {
    pk_stdio_kind kind;
    const void *data; /* PK_STDIO_BYTES: copied into the pipe, not retained past the run (but see
                         pk_spawn) */
    size_t len;
    const char *path; /* PK_STDIO_FILE */
    bool append;      /* PK_STDIO_FILE on stdout/stderr */
    int fd;           /* PK_STDIO_FD */
    /* PK_STDIO_CAPTURE only: */
    pk_capture capture;
    bool raw;        /* lines are the child's bytes, lossless; default: UTF-8 validated, invalid
                        bytes replaced by U+FFFD, the CR of a CRLF dropped */
    size_t max_line; /* longest line assembled, in bytes; a longer line is counted in
                        pk_output.dropped_lines and discarded without being assembled, so memory
                        stays within this plus one read chunk. 0: max_bytes when a byte cap is
                        set, else 16 MiB. */
} pk_stdio;

/* How a tree of processes is contained. */
typedef enum pk_containment {
    PK_CONTAIN_AUTO = 0, /* cgroup v2 when this host delegates one to us, else a process group */
    PK_CONTAIN_CGROUP,   /* a cgroup v2 leaf: the whole tree, setsid descendants included;
                            PK_ENOCONTAIN when the host has none for us */
    PK_CONTAIN_PGROUP,   /* a POSIX process group: a descendant that calls setsid() escapes */
    PK_CONTAIN_NONE,     /* only the direct child is tracked */
    PK_CONTAIN_JOB,      /* Windows: a Job Object with kill-on-close (what AUTO picks there); the
                            whole tree, unless a descendant was allowed to break away */
} pk_containment;

typedef struct pk_group pk_group;
typedef struct pk_cancel pk_cancel;

/* One line of a captured stream. */
typedef struct pk_line {
    int stream;       /* 1 stdout, 2 stderr */
    const char *data; /* NUL-terminated, without the newline (nor the CR of a CRLF in text
                         mode); valid until the next line is taken or the run ends */
    size_t len;
    uint64_t number; /* 1-based, per stream */
    bool newline;    /* false only for a final line the child did not terminate */
} pk_line;

typedef struct pk_env {
    bool clear;               /* start from an empty environment instead of the parent's */
    const char *const *set;   /* NULL-terminated "NAME=VALUE" entries, applied after clear */
    const char *const *unset; /* NULL-terminated names removed after set */
} pk_env;

typedef struct pk_command {
    /* A bare name is searched in PATH (see pk_resolve_program); a name containing '/' is used as
     * is. NULL means argv[0]. */
    const char *program;
    /* NULL-terminated, argv[0] included. NULL means { program, NULL }. */
    const char *const *argv;
    pk_env env;
    const char *cwd; /* NULL: the parent's working directory */
    pk_stdio in, out, err;

    /* Containment. With group == NULL the run gets a private group of its own (kill-on-close,
     * torn down when the child exits or the handle is freed); `containment` picks its mechanism.
     * With a group, the child joins it and lives as long as the group allows. */
    struct pk_group *group;
    pk_containment containment;
    int pdeathsig; /* signal the direct child gets when this thread's process dies; 0: none */

    /* By default the child closes every descriptor above 2 before exec (close_range), so nothing
     * the host opened without O_CLOEXEC leaks into it. true skips that step: for a process whose
     * descriptors are all close-on-exec (every one this library makes is), it saves a system
     * call in the child, about 1-2 µs per spawn on the reference machine (pk_floor's
     * processkit_inherit_fds series). Any descriptor without O_CLOEXEC then reaches the child. */
    bool inherit_fds;

    /* POSIX: the child leads a new process group of its own whatever the containment (with a
     * cgroup, or none), as process-group containment always has it: a `kill 0` or `kill -INT 0`
     * by the command then reaches its own group, never the caller's. take_terminal applies to
     * that group. Ignored on Windows (children already get a process group of their own). */
    bool new_pgroup;

    /* When the child leads a new process group (process-group containment, or new_pgroup) and
     * this process's group is the foreground of its controlling terminal (on descriptor 0, 1 or
     * 2): the child's new process group takes the terminal (tcsetpgrp) before exec, as a shell
     * gives a job the terminal, so the command never runs while the terminal's Ctrl-C and Ctrl-Z
     * still go to the caller. The caller gives the terminal back after the run (tcsetpgrp with
     * SIGTTOU blocked). Ignored otherwise, and on Windows. */
    bool take_terminal;

    /* Time limits in milliseconds, 0 for none. When one passes, the tree gets SIGTERM (and
     * SIGCONT, so a stopped tree acts on it), then SIGKILL after grace_ms (at once when grace_ms
     * is 0); a child that exits on SIGTERM ends the grace early. The outcome says which limit
     * fired; output read so far is kept. */
    int64_t timeout_ms;      /* from the start */
    int64_t idle_timeout_ms; /* without any output on stdout or stderr */
    int64_t grace_ms;
    struct pk_cancel *cancel; /* see pk_cancel_new; also honours grace_ms */

    /* Called for every line of every captured stream as it arrives, in order within each stream,
     * on the thread that drives the run. The line is valid during the call only. */
    int (*on_line)(void *user, const struct pk_line *line);
    void *line_user;
} pk_command;

/* ---------------------------------------------------------------------------------------------
 * Outcomes
 * ------------------------------------------------------------------------------------------- */

/* The step of a start that failed. XX(name, label). */
#define PK_STAGE_MAP(XX)                                                                           \
    XX(NONE, "none")                                                                               \
    XX(VALIDATE, "validate")                                                                       \
    XX(RESOLVE, "resolve")                                                                         \
    XX(PREPARE, "prepare")                                                                         \
    XX(CONTAIN, "contain")                                                                         \
    XX(CLONE, "clone")                                                                             \
    XX(SETPGID, "setpgid")                                                                         \
    XX(PDEATHSIG, "pdeathsig")                                                                     \
    XX(STDIO, "stdio")                                                                             \
    XX(CLOSE_FDS, "close_fds")                                                                     \
    XX(CHDIR, "chdir")                                                                             \
    XX(EXEC, "exec")

typedef enum pk_stage {
#define PK__STAGE_ENUM(name, label) PK_STAGE_##name,
    PK_STAGE_MAP(PK__STAGE_ENUM)
#undef PK__STAGE_ENUM
} pk_stage;

/* "exec", "chdir", ... Never NULL. */
PK_API const char *pk_stage_name(pk_stage stage);

typedef enum pk_outcome_kind {
    PK_OUTCOME_NONE = 0,
    PK_OUTCOME_EXITED,         /* .code */
    PK_OUTCOME_SIGNALED,       /* .signo, .core_dumped */
    PK_OUTCOME_TIMED_OUT,      /* timeout_ms passed; the library ended the tree */
    PK_OUTCOME_IDLE_TIMED_OUT, /* idle_timeout_ms passed without output; the library ended it */
    PK_OUTCOME_CANCELLED,      /* the cancel handle fired; the library ended the tree */
    PK_OUTCOME_SPAWN_FAILED,   /* .stage, .error; no child is left behind */
    PK_OUTCOME_CRASHED,        /* Windows: an unhandled exception ended it; .ntstatus */
} pk_outcome_kind;

/* "exited", "signaled", "timed_out", "idle_timed_out", "cancelled", "spawn_failed", "crashed". */
PK_API const char *pk_outcome_kind_name(pk_outcome_kind kind);

typedef struct pk_outcome {
    pk_outcome_kind kind;
    /* EXITED: the exit status, 0..255. TIMED_OUT / IDLE_TIMED_OUT / CANCELLED: how the child
     * ended after the library acted — its exit status, or signo when a signal ended it. */
    int code;
    int signo;        /* SIGNALED (and the kinds above): the signal that ended the child */
    bool core_dumped; /* PK_OUTCOME_SIGNALED */
    pk_stage stage;   /* PK_OUTCOME_SPAWN_FAILED: which step failed */
    int error;        /* PK_OUTCOME_SPAWN_FAILED: negative errno or PK_* */
    int pid;          /* the child's pid, 0 when none was created */
    int64_t user_us;  /* the child's user CPU (kernel rusage of the reaped child) */
    int64_t sys_us;   /* the child's system CPU */
    int64_t wall_ns;  /* from the start of the spawn to the reap */
    /* Windows, PK_OUTCOME_CRASHED (and the ending kinds): the NTSTATUS the process ended with,
     * e.g. 0xC0000005 (access violation); 0 elsewhere. See pk_ntstatus_name. */
    uint32_t ntstatus;
} pk_outcome;

/* The symbolic name of a Windows NTSTATUS crash code ("STATUS_ACCESS_VIOLATION" for 0xC0000005),
 * or NULL when this table does not know it. Available on every platform. */
PK_API const char *pk_ntstatus_name(uint32_t status);

/* ---------------------------------------------------------------------------------------------
 * Running to completion
 * ------------------------------------------------------------------------------------------- */

typedef struct pk_output {
    char *data; /* kept bytes (the child's raw bytes, whatever the line decoding), NUL-terminated
                   for convenience; NULL when nothing was kept. Owned by the pk_result; freed by
                   pk_result_release. */
    size_t len;
    uint64_t total_bytes;   /* bytes the child wrote to the stream */
    uint64_t total_lines;   /* lines it wrote (a final line without newline counts) */
    uint64_t dropped_lines; /* lines longer than max_line, counted and discarded */
    bool truncated;         /* the capture policy did not keep everything */
} pk_output;

typedef struct pk_result {
    pk_outcome outcome;
    pk_output out; /* captured stdout (and stderr with PK_STDIO_MERGE) */
    pk_output err; /* captured stderr */
    /* On PK_ENOTFOUND: the ':'-separated directories that were searched. Freed by
     * pk_result_release. */
    char *searched;
    /* The containment the run actually had (a downgrade from cgroup to process group is
     * reported here, never silent). */
    pk_containment containment;
} pk_result;

/* Runs `cmd` to completion: spawns it, writes stdin bytes, drains stdout and stderr, all full
 * duplex on one poll loop (so large input and output never deadlock), and reaps the child.
 *
 * Returns 0 when a child ran, whatever its exit status (see res->outcome). When no child ran,
 * returns the error and sets res->outcome.kind = PK_OUTCOME_SPAWN_FAILED with the stage and
 * error: PK_ENOTFOUND (stage resolve, res->searched set), -EACCES / -ENOENT / -E2BIG (stage
 * exec), -ENOENT (stage chdir), -EINVAL or PK_EBADENV (stage validate), -EMFILE / -ENOMEM.
 * `res` must be released with pk_result_release on every path. Thread-safe. */
PK_API int pk_run(const pk_command *cmd, pk_result *res);

/* Frees what a pk_result owns and zeroes it. Safe on a zeroed or already released result. */
PK_API void pk_result_release(pk_result *res);

/* ---------------------------------------------------------------------------------------------
 * Spawning and waiting separately
 * ------------------------------------------------------------------------------------------- */

typedef struct pk_process pk_process;

/* Starts `cmd` and returns a handle in *proc. Errors as for pk_run; when no child ran and
 * `failure` is not NULL, failure->outcome holds the typed spawn failure and failure->searched the
 * directories searched (release it with pk_result_release). Captured streams are drained by
 * pk_process_wait, or read by the caller through pk_process_fd first. With PK_STDIO_BYTES the
 * caller's .data must stay valid until pk_process_wait returns or the handle is freed. */
PK_API int pk_spawn(const pk_command *cmd, pk_process **proc, pk_result *failure);

/* Writes pending stdin bytes, drains captured streams into res->out / res->err, and reaps the
 * child (waitid on its pidfd: never waitpid(-1), so a host's own SIGCHLD handling keeps
 * working). Fills res->outcome. Returns 0, or a negative error when waiting itself failed. In a
 * host that ignores SIGCHLD (the kernel then reaps children itself) the status comes from the
 * pidfd (Linux 6.15), with user_us/sys_us 0; -ECHILD on older kernels. */
PK_API int pk_process_wait(pk_process *proc, pk_result *res);

/* Sends `signo` to the child through its pidfd, so a recycled pid is never hit. Returns 0,
 * -ESRCH when the child has already been reaped, or another negative errno. */
PK_API int pk_process_signal(pk_process *proc, int signo);

/* The child's pid; its pidfd (-1 when the mechanism gave none); the parent's end of a piped
 * stream (0, 1, 2 for stdin/stdout/stderr), -1 when that stream is not a pipe. The descriptors
 * stay owned by the handle. Captured streams' descriptors are non-blocking: poll before reading.
 */
PK_API int pk_process_pid(const pk_process *proc);
PK_API int pk_process_pidfd(const pk_process *proc);
PK_API int pk_process_fd(const pk_process *proc, int stream);

/* Releases the handle. A child that was not waited for is killed (SIGKILL) and reaped, so no
 * zombie is left; a private group is torn down with its whole tree. Accepts NULL. */
PK_API void pk_process_free(pk_process *proc);

/* The pull API: the next line of any captured stream (line->stream says which), in order within
 * each stream, reading the pipes as needed; timeouts and cancellation apply while it blocks.
 * Lines taken here are also kept by the capture policy. Returns 0 with a line, PK_EOF when every
 * captured stream has ended (call pk_process_wait next), or a negative error. When a time limit
 * or the cancel handle ends the run, the remaining lines are still returned, then PK_EOF, and
 * pk_process_wait reports the outcome. */
PK_API int pk_process_read_line(pk_process *proc, pk_line *line);

/* Sends `signo` to the whole tree: every member of the process's group (cgroup or process
 * group), and the direct child itself should it have left the group (as root a command can move
 * itself out of its cgroup leaf); the direct child alone under PK_CONTAIN_NONE. Returns 0 or a
 * negative errno. */
PK_API int pk_process_signal_tree(pk_process *proc, int signo);

/* The containment this process got (after any fallback). */
PK_API pk_containment pk_process_containment(const pk_process *proc);

/* Waits until one of `n` processes has exited (without reaping it; call pk_process_wait next),
 * up to timeout_ms (-1: forever). Returns 0 with *index set, -ETIMEDOUT, or a negative errno.
 * Processes already waited for are skipped; -ECHILD when none is left. */
PK_API int pk_wait_any(pk_process *const *procs, size_t n, int timeout_ms, size_t *index);

/* ---------------------------------------------------------------------------------------------
 * Groups: kill-on-close containers for process trees
 * ------------------------------------------------------------------------------------------- */

typedef struct pk_group_options {
    pk_containment containment; /* AUTO, CGROUP (or PK_ENOCONTAIN) or PGROUP; NONE is invalid */
} pk_group_options;

/* Creates a group. On Linux with cgroup v2 delegated to us it is a leaf cgroup under this
 * process's own cgroup (found from the `0::` line of /proc/self/cgroup, on /sys/fs/cgroup or the
 * hybrid layout's /sys/fs/cgroup/unified); children are born inside it (CLONE_INTO_CGROUP), so
 * setsid and double-fork descendants stay contained. Otherwise (AUTO) a process group. `opts` may
 * be NULL. Errors: PK_ENOCONTAIN, -EINVAL, -ENOMEM, -EMFILE. */
PK_API int pk_group_new(const pk_group_options *opts, pk_group **group);

/* Kills the whole tree, waits until it is gone, removes the cgroup directory and frees the
 * handle. Accepts NULL. */
PK_API void pk_group_free(pk_group *group);

PK_API pk_containment pk_group_mechanism(const pk_group *group);

/* Sends a signal to every member. SIGKILL in cgroup mode is cgroup.kill (atomic for the tree).
 * Returns 0 (also when the group is empty) or a negative errno. */
PK_API int pk_group_signal(pk_group *group, int signo);

/* SIGKILL to the tree, then waits until no member is left. Repeatable; the group stays usable.
 * Returns 0, -ETIMEDOUT when members remain after 5 s, or a negative errno. */
PK_API int pk_group_kill(pk_group *group);

/* SIGTERM (then SIGCONT) to the tree, waits up to grace_ms for it to empty; then SIGKILL when
 * `escalate`.
 * Returns 0 when the group is empty afterwards, -ETIMEDOUT when members remain (escalate off).
 * The group stays kill-on-close either way. */
PK_API int pk_group_shutdown(pk_group *group, int64_t grace_ms, bool escalate);

/* Freezes / thaws the whole tree (cgroup.freeze; SIGSTOP / SIGCONT to a process group). Suspend
 * returns once the kernel reports the tree frozen. */
PK_API int pk_group_suspend(pk_group *group);
PK_API int pk_group_resume(pk_group *group);

/* The pids in the group, up to `cap` of them, into `pids`; *count receives how many there are
 * (possibly more than cap). */
PK_API int pk_group_members(pk_group *group, int *pids, size_t cap, size_t *count);

typedef struct pk_group_stats {
    size_t processes;
    int64_t cpu_user_us; /* CPU of the tree, including exited members (cgroup cpu.stat); in
                            process-group mode only of the members alive now */
    int64_t cpu_sys_us;
    int64_t memory_bytes; /* memory.current when the memory controller is on, else the sum of the
                             members' resident sets */
} pk_group_stats;

PK_API int pk_group_stats_get(pk_group *group, pk_group_stats *stats);

/* The mechanism a group would get here, predicted without creating anything or spawning. */
PK_API pk_containment pk_host_containment(void);

/* "auto", "cgroup", "pgroup", "none". */
PK_API const char *pk_containment_name(pk_containment c);

/* ---------------------------------------------------------------------------------------------
 * Cancellation
 * ------------------------------------------------------------------------------------------- */

/* A cancel handle: trigger it from any thread (or a signal handler: pk_cancel_trigger is
 * async-signal-safe) and every run using it ends its tree (SIGTERM, grace, SIGKILL) with outcome
 * CANCELLED. A run started with an already triggered handle spawns nothing and returns
 * PK_ECANCELLED. One handle may serve many runs. */
PK_API int pk_cancel_new(pk_cancel **cancel);
PK_API void pk_cancel_trigger(pk_cancel *cancel);
/* Like pk_cancel_trigger, but the first signal sent to the tree is `signo` instead of SIGTERM
 * (pkrun forwards the SIGINT it received this way). */
PK_API void pk_cancel_trigger_signal(pk_cancel *cancel, int signo);
PK_API bool pk_cancel_triggered(const pk_cancel *cancel);
PK_API void pk_cancel_free(pk_cancel *cancel);

/* ---------------------------------------------------------------------------------------------
 * The event loop: one thread driving many runs
 * ------------------------------------------------------------------------------------------- */

typedef struct pk_loop pk_loop;

/* Called once per run when it is over. The callback owns *res and must pk_result_release it.
 * `rc` is what pk_run would have returned. */
typedef void (*pk_done_fn)(void *user, int rc, pk_result *res);

PK_API int pk_loop_new(pk_loop **loop);

/* Kills and reaps every run still in the loop (their callbacks are not called) and frees it. */
PK_API void pk_loop_free(pk_loop *loop);

/* Starts `cmd` in the loop. A start that fails calls nothing and returns the error, with
 * *failure (when not NULL) describing it as pk_run would. */
PK_API int pk_loop_start(
    pk_loop *loop, const pk_command *cmd, pk_done_fn done, void *user, pk_result *failure);

/* A descriptor that becomes readable when pk_loop_step has work: embed it in a host loop. */
PK_API int pk_loop_fd(const pk_loop *loop);

/* Handles what is ready, waiting up to timeout_ms (-1 forever, 0 not at all). Returns the number
 * of runs that finished, or a negative errno. */
PK_API int pk_loop_step(pk_loop *loop, int timeout_ms);

/* Steps until no run is left. Returns 0 or a negative errno. */
PK_API int pk_loop_run(pk_loop *loop);

/* Runs in the loop now. */
PK_API size_t pk_loop_active(const pk_loop *loop);

/* ---------------------------------------------------------------------------------------------
 * Program resolution
 * ------------------------------------------------------------------------------------------- */

/* Windows: a name holding '\\', '/' or ':' is a path (used as is when it exists; without an
 * extension each PATHEXT extension is tried); a bare name is looked for in each PATH entry in
 * order — as is when its extension is in PATHEXT, else with each PATHEXT extension (default
 * ".COM;.EXE;.BAT;.CMD") — never in the current directory; names of variables compare
 * case-insensitively; *searched is ';'-separated. The rest of this comment is POSIX's.
 *
 * Returns in *path (malloc'd; free() it) exactly the path a launch of `program` would exec,
 * spawning nothing. A name containing '/' is returned unchanged. A bare name is searched in the
 * PATH the child would get (env->set's PATH if it sets one, else the parent's PATH, else the
 * default "/usr/local/bin:/usr/bin:/bin" when PATH is unset or env->clear drops it): the first
 * regular file with an execute bit for us wins; -EACCES is kept over not-found, as execvp does.
 *
 * Errors: -EINVAL (NULL or empty program), -ENAMETOOLONG, -EACCES (found but not executable),
 * PK_ENOTFOUND (then *searched, when not NULL, receives a malloc'd ':'-separated list of the
 * directories searched), -ENOMEM. `env` may be NULL. */
PK_API int pk_resolve_program(const char *program, const pk_env *env, char **path, char **searched);

/* ---------------------------------------------------------------------------------------------
 * Introspection
 * ------------------------------------------------------------------------------------------- */

typedef enum pk_mechanism {
    PK_MECH_CLONE3 = 1,  /* clone3(CLONE_VM|CLONE_VFORK|CLONE_PIDFD[|CLONE_CLEAR_SIGHAND]) */
    PK_MECH_CLONE,       /* clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD) */
    PK_MECH_VFORK,       /* vfork(), pidfd_open afterwards when the kernel has it */
    PK_MECH_POSIX_SPAWN, /* glibc posix_spawn */
    PK_MECH_JOB_LIST,    /* Windows: CreateProcessW, the child born in its job
                            (PROC_THREAD_ATTRIBUTE_JOB_LIST, Windows 10 1607 and later) */
    PK_MECH_SUSPENDED,   /* Windows: CreateProcessW suspended, assigned to its job, resumed */
} pk_mechanism;

/* The spawn mechanism in use, probed once at first use (thread-safe). The environment variable
 * PK_SPAWN_MECHANISM=clone3|clone|vfork|posix_spawn, read at the probe, forces a lower one (for
 * tests and comparisons); an unavailable choice falls further down the chain. */
PK_API pk_mechanism pk_spawn_mechanism(void);

/* "clone3", "clone", "vfork", "posix_spawn", "createprocess_job_list", "createprocess_suspended".
 */
PK_API const char *pk_mechanism_name(pk_mechanism mech);

/* True when the probe found CLONE_CLEAR_SIGHAND (kernel >= 5.5), so the child resets no signal
 * handler itself. */
PK_API bool pk_spawn_clears_sighand(void);

/* "0.1.0" */
PK_API const char *pk_version(void);

/* Releases what the library keeps between calls: the pool of empty cgroup leaves that one-shot
 * runs borrow, with their open descriptors and their holder tasks (README, "Containment"), and the
 * calling thread's cached line buffer. Safe at
 * any time and from any thread; the pool is rebuilt on demand. Process exit removes the leaves
 * anyway; call this before checking for leaked descriptors, or to remove the leaves early. */
PK_API void pk_cleanup(void);

#ifdef __cplusplus
}
#endif

#endif /* PROCESSKIT_H */
