/*
 * Private declarations shared by processkit's modules. Nothing here is part of the public API;
 * internal non-static functions carry the pk__ prefix.
 */
#ifndef PK_INTERNAL_H
#define PK_INTERNAL_H

#include "processkit.h"

#include <limits.h>
#include <signal.h>
#include <stdint.h>

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
    sigset_t mask;          /* the parent's signal mask, restored just before execve */
    bool reset_handlers;    /* no CLONE_CLEAR_SIGHAND: reset the parent's handlers in the child */
    volatile int err_stage; /* pk_stage of the failure, 0 when none */
    volatile int err_errno; /* positive errno of the failure */
};

/* The child side: never returns (execve, or _exit(127) after recording the failure). */
_Noreturn void pk__child_main(struct pk__child_plan *plan);

/* Starts a child for `plan` with the probed mechanism. On success returns 0 with *pid and
 * *pidfd (-1 when the mechanism gave none and the kernel has no pidfd_open). A failure inside
 * the child is reported through plan->err_stage/err_errno with the child already reaped, and the
 * function returns PK_ESPAWN. Other failures (the clone itself) return a negative errno. */
int pk__spawn_plan(struct pk__child_plan *plan, int *pid, int *pidfd);

/* Raw clone3 on a fresh stack running fn(arg) in the child; returns the child's pid in the
 * parent, or -errno. The architecture file provides it (clone3.<arch>.S); elsewhere it returns
 * -ENOSYS and the probe falls back to clone(). */
long pk__clone3_raw(void *args, size_t size, int (*fn)(void *), void *arg);

/* Program resolution into a caller buffer of PATH_MAX bytes; same rules as pk_resolve_program.
 * `pathvar` is the PATH to search (NULL: the default). */
int pk__resolve(const char *program, const char *pathvar, char *buf, size_t cap);

/* The PATH a child started with `env` would see, for resolution. */
const char *pk__child_path(const pk_env *env);

/* Builds the child's environment. *envp is `environ` itself when env asks for no change (and
 * *owned is NULL); otherwise a malloc'd array in *owned, freed by the caller with free(). */
int pk__build_env(const pk_env *env, char *const **envp, char ***owned);

/* Reaps the child through its pidfd (or wait4 when there is none), filling the outcome's kind,
 * code/signal and CPU times. Blocking. Returns 0 or -errno. */
int pk__reap(int pid, int pidfd, pk_outcome *outcome);

/* Sends signo through the pidfd (kill(2) only when there is none). Returns 0 or -errno. */
int pk__signal(int pid, int pidfd, int signo);

int64_t pk__now_ns(void);

/* Returned by pk__spawn_plan when the child recorded a failure in the plan. Never public. */
#define PK__ECHILD_FAILED (-3999)

/* The pk_process handle; pk_run keeps one on its stack to avoid an allocation. */
struct pk__buffer {
    char *data;
    size_t len, cap;
    uint64_t total;
};

struct pk_process {
    int pid;
    int pidfd;
    int fds[3]; /* parent ends: stdin (write), stdout (read), stderr (read); -1 when none */
    const unsigned char *in_data;
    size_t in_len, in_off;
    int64_t start_ns;
    bool reaped;
    bool heap; /* allocated by pk_spawn (freed by pk_process_free) */
    struct pk__buffer out, err;
};

int pk__process_start(const pk_command *cmd, struct pk_process *proc, pk_result *failure);
int pk__process_finish(struct pk_process *proc, pk_result *res);
void pk__process_close(struct pk_process *proc);

#endif /* PK_INTERNAL_H */
