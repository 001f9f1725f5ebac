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
 *  - Every descriptor the library creates is O_CLOEXEC; the child closes all descriptors above 2.
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

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

/* Project error codes sit below the errno range (libuv's trick), so a negative return value is
 * either -errno or one of these. XX(name, value, message). */
#define PK_ERROR_MAP(XX)                                                                           \
    XX(ENOTFOUND, -3001, "program not found in any PATH directory")                                \
    XX(EBADENV, -3002, "environment entry is not of the form NAME=VALUE")

enum pk_error {
#define PK__ERROR_ENUM(name, value, msg) PK_##name = (value),
    PK_ERROR_MAP(PK__ERROR_ENUM)
#undef PK__ERROR_ENUM
};

/* A human-readable message for an error value (negative errno or PK_*). Never NULL; the string
 * is static. */
const char *pk_strerror(int err);

/* The symbolic name of an error value: "ENOENT", "PK_ENOTFOUND", or "E<number>" when unknown.
 * Stable across versions, meant for JSON and logs. Never NULL; the string is static or
 * thread-local. */
const char *pk_errname(int err);

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

typedef struct pk_stdio {
    pk_stdio_kind kind;
    const void *data; /* PK_STDIO_BYTES: copied into the pipe, not retained past the run */
    size_t len;
    const char *path; /* PK_STDIO_FILE */
    bool append;      /* PK_STDIO_FILE on stdout/stderr */
    int fd;           /* PK_STDIO_FD */
} pk_stdio;

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
    XX(CLONE, "clone")                                                                             \
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
const char *pk_stage_name(pk_stage stage);

typedef enum pk_outcome_kind {
    PK_OUTCOME_NONE = 0,
    PK_OUTCOME_EXITED,       /* .code */
    PK_OUTCOME_SIGNALED,     /* .signo, .core_dumped */
    PK_OUTCOME_TIMED_OUT,    /* the run's deadline passed and the library ended the child */
    PK_OUTCOME_SPAWN_FAILED, /* .stage, .error; no child is left behind */
} pk_outcome_kind;

/* "exited", "signaled", ... Never NULL. */
const char *pk_outcome_kind_name(pk_outcome_kind kind);

typedef struct pk_outcome {
    pk_outcome_kind kind;
    int code;         /* PK_OUTCOME_EXITED: the exit status, 0..255 */
    int signo;        /* PK_OUTCOME_SIGNALED: the signal that ended the child */
    bool core_dumped; /* PK_OUTCOME_SIGNALED */
    pk_stage stage;   /* PK_OUTCOME_SPAWN_FAILED: which step failed */
    int error;        /* PK_OUTCOME_SPAWN_FAILED: negative errno or PK_* */
    int pid;          /* the child's pid, 0 when none was created */
    int64_t user_us;  /* the child's user CPU (kernel rusage of the reaped child) */
    int64_t sys_us;   /* the child's system CPU */
    int64_t wall_ns;  /* from the start of the spawn to the reap */
} pk_outcome;

/* ---------------------------------------------------------------------------------------------
 * Running to completion
 * ------------------------------------------------------------------------------------------- */

typedef struct pk_output {
    char *data; /* captured bytes, NUL-terminated for convenience; NULL when nothing was captured.
                   Owned by the pk_result; freed by pk_result_release. */
    size_t len;
    uint64_t total_bytes; /* bytes the child wrote to the stream */
} pk_output;

typedef struct pk_result {
    pk_outcome outcome;
    pk_output out; /* captured stdout (and stderr with PK_STDIO_MERGE) */
    pk_output err; /* captured stderr */
    /* On PK_ENOTFOUND: the ':'-separated directories that were searched. Freed by
     * pk_result_release. */
    char *searched;
} pk_result;

/* Runs `cmd` to completion: spawns it, writes stdin bytes, drains stdout and stderr, all full
 * duplex on one poll loop (so large input and output never deadlock), and reaps the child.
 *
 * Returns 0 when a child ran, whatever its exit status (see res->outcome). When no child ran,
 * returns the error and sets res->outcome.kind = PK_OUTCOME_SPAWN_FAILED with the stage and
 * error: PK_ENOTFOUND (stage resolve, res->searched set), -EACCES / -ENOENT / -E2BIG (stage
 * exec), -ENOENT (stage chdir), -EINVAL or PK_EBADENV (stage validate), -EMFILE / -ENOMEM.
 * `res` must be released with pk_result_release on every path. Thread-safe. */
int pk_run(const pk_command *cmd, pk_result *res);

/* Frees what a pk_result owns and zeroes it. Safe on a zeroed or already released result. */
void pk_result_release(pk_result *res);

/* ---------------------------------------------------------------------------------------------
 * Spawning and waiting separately
 * ------------------------------------------------------------------------------------------- */

typedef struct pk_process pk_process;

/* Starts `cmd` and returns a handle in *proc. Errors as for pk_run; when no child ran and
 * `failure` is not NULL, failure->outcome holds the typed spawn failure and failure->searched the
 * directories searched (release it with pk_result_release). Captured streams are drained by
 * pk_process_wait, or read by the caller through pk_process_fd first. With PK_STDIO_BYTES the
 * caller's .data must stay valid until pk_process_wait returns or the handle is freed. */
int pk_spawn(const pk_command *cmd, pk_process **proc, pk_result *failure);

/* Writes pending stdin bytes, drains captured streams into res->out / res->err, and reaps the
 * child (waitid on its pidfd: never waitpid(-1), so a host's own SIGCHLD handling keeps
 * working). Fills res->outcome. Returns 0, or a negative error when waiting itself failed. */
int pk_process_wait(pk_process *proc, pk_result *res);

/* Sends `signo` to the child through its pidfd, so a recycled pid is never hit. Returns 0,
 * -ESRCH when the child has already been reaped, or another negative errno. */
int pk_process_signal(pk_process *proc, int signo);

/* The child's pid; its pidfd (-1 when the mechanism gave none); the parent's end of a piped
 * stream (0, 1, 2 for stdin/stdout/stderr), -1 when that stream is not a pipe. The descriptors
 * stay owned by the handle. */
int pk_process_pid(const pk_process *proc);
int pk_process_pidfd(const pk_process *proc);
int pk_process_fd(const pk_process *proc, int stream);

/* Releases the handle. A child that was not waited for is killed (SIGKILL) and reaped, so no
 * zombie is left. Accepts NULL. */
void pk_process_free(pk_process *proc);

/* ---------------------------------------------------------------------------------------------
 * Program resolution
 * ------------------------------------------------------------------------------------------- */

/* Returns in *path (malloc'd; free() it) exactly the path a launch of `program` would exec,
 * spawning nothing. A name containing '/' is returned unchanged. A bare name is searched in the
 * PATH the child would get (env->set's PATH if it sets one, else the parent's PATH, else the
 * default "/usr/local/bin:/usr/bin:/bin" when PATH is unset or env->clear drops it): the first
 * regular file with an execute bit for us wins; -EACCES is kept over not-found, as execvp does.
 *
 * Errors: -EINVAL (NULL or empty program), -ENAMETOOLONG, -EACCES (found but not executable),
 * PK_ENOTFOUND (then *searched, when not NULL, receives a malloc'd ':'-separated list of the
 * directories searched), -ENOMEM. `env` may be NULL. */
int pk_resolve_program(const char *program, const pk_env *env, char **path, char **searched);

/* ---------------------------------------------------------------------------------------------
 * Introspection
 * ------------------------------------------------------------------------------------------- */

typedef enum pk_mechanism {
    PK_MECH_CLONE3 = 1,  /* clone3(CLONE_VM|CLONE_VFORK|CLONE_PIDFD[|CLONE_CLEAR_SIGHAND]) */
    PK_MECH_CLONE,       /* clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD) */
    PK_MECH_VFORK,       /* vfork(), pidfd_open afterwards when the kernel has it */
    PK_MECH_POSIX_SPAWN, /* glibc posix_spawn */
} pk_mechanism;

/* The spawn mechanism in use, probed once at first use (thread-safe). The environment variable
 * PK_SPAWN_MECHANISM=clone3|clone|vfork|posix_spawn, read at the probe, forces a lower one (for
 * tests and comparisons); an unavailable choice falls further down the chain. */
pk_mechanism pk_spawn_mechanism(void);

/* "clone3", "clone", "vfork", "posix_spawn". */
const char *pk_mechanism_name(pk_mechanism mech);

/* True when the probe found CLONE_CLEAR_SIGHAND (kernel >= 5.5), so the child resets no signal
 * handler itself. */
bool pk_spawn_clears_sighand(void);

/* "0.1.0" */
const char *pk_version(void);

#ifdef __cplusplus
}
#endif

#endif /* PROCESSKIT_H */
