/*
 * Private declarations of the Windows build. The POSIX build's internal.posix.h describes a child
 * plan for clone3 and a cgroup; here a start is a CreateProcessW call, a group is a Job Object, and
 * every run's pipes complete on an I/O completion port. Only pump.h (the stream pump),
 * command.h (validating a command) and timelimits.h (the time-limit policy) are shared.
 *
 * Module map:
 *   text.windows.c     UTF-8 <-> UTF-16, Win32 errors -> errno, the clock
 *   cmdline.windows.c  argv -> a command line CommandLineToArgvW reads back; batch files
 *   resolve.windows.c  PATH x PATHEXT, the child's environment block
 *   spawn.windows.c    pipes, standard handles, CreateProcessW, the job; pk_spawn and friends
 *   engine.windows.c   one run's steps over the completion port and the single-run driver
 *   loop.windows.c     pk_loop: many runs on one completion port
 *   group.windows.c    pk_group on a Job Object;  cancel.windows.c  cancel handles (events)
 *   errname.windows.c, error.c, pump.c, command.c, timelimits.c
 */
#ifndef PK_INTERNAL_WINDOWS_H
#define PK_INTERNAL_WINDOWS_H

#include "processkit.h"
#include "timelimits.h"
#include "pump.h"

#include <stdbool.h>
#include <stdint.h>
#include <windows.h>

/* The POSIX signal numbers the public API takes; the Windows C runtime defines only some. */
#define PK__SIGINT  2
#define PK__SIGKILL 9
#define PK__SIGTERM 15

/* The exit code TerminateProcess/TerminateJobObject give a process the library ends ("pk" and
 * 9, with NTSTATUS's customer bit set so that no system status has it). A process that ends with
 * it is reported as signaled with SIGKILL, as on POSIX. */
#define PK__KILL_CODE 0xE0706B09u

/* ---- text.windows.c ------------------------------------------------------------------------ */

/* UTF-8 -> UTF-16, malloc'd. -EILSEQ for invalid UTF-8, -ENOMEM. */
int pk__utf16(const char *s, wchar_t **out);
/* UTF-16 -> UTF-8, malloc'd; unpaired surrogates become U+FFFD. */
int pk__utf8(const wchar_t *s, char **out);
/* A Win32 error code as a negative errno (-EIO when there is no better one). */
int pk__win_error(DWORD err);
int64_t pk__now_ns(void);

/* ---- cmdline.windows.c --------------------------------------------------------------------- */

/* The command line for argv, quoted so that CommandLineToArgvW (and the C runtime) give back
 * exactly argv. -EINVAL when argv[0] contains a double quote (argv[0] has no escapes). */
int pk__cmdline(const char *const *argv, wchar_t **out);
/* cmd.exe's command line for running the batch file `path` with argv[1..]: refuses (PK_EUNSAFEARG)
 * any argument cmd.exe would expand or split. *app receives cmd.exe's absolute path. */
int pk__cmdline_batch(const wchar_t *path, const char *const *argv, wchar_t **app, wchar_t **out);
/* True when path ends in .bat or .cmd (case-insensitive). */
bool pk__is_batch(const wchar_t *path);

/* ---- resolve.windows.c --------------------------------------------------------------------- */

/* Resolves program to an absolute UTF-16 path (malloc'd). Same errors as pk_resolve_program. */
int pk__resolve_w(const char *program, const pk_env *env, wchar_t **path);
/* The child's environment block (malloc'd, double-NUL-terminated UTF-16), or NULL in *block
 * when env changes nothing (the child inherits ours). PK_EBADENV, -EILSEQ, -ENOMEM. */
int pk__env_block(const pk_env *env, wchar_t **block);

/* ---- groups and cancel handles ------------------------------------------------------------- */

struct pk_group {
    pk_containment mech; /* PK_CONTAIN_JOB */
    HANDLE job;
    bool heap;
};

/* A job with kill-on-close. 0, PK_ENOCONTAIN for a mechanism Windows does not have, -errno. */
int pk__group_init(struct pk_group *g, pk_containment want);
/* Kill-on-close: terminates the tree and closes the job. */
void pk__group_teardown(struct pk_group *g);
/* Terminates every member with PK__KILL_CODE. */
int pk__group_terminate(struct pk_group *g);
/* SIGKILL terminates; SIGTERM/SIGINT send Ctrl+Break to each member's process group. */
int pk__group_signal(struct pk_group *g, int signo);

struct pk_cancel {
    HANDLE event;        /* manual-reset, signalled once triggered */
    volatile LONG signo; /* the first signal for the tree, SIGTERM by default */
    volatile LONG fired;
};

/* ---- one run ------------------------------------------------------------------------------- */

enum pk__op_kind { PK__OP_STDIN, PK__OP_OUT, PK__OP_ERR, PK__OP_EXIT, PK__OP_CANCEL, PK__OP_COUNT };

/* An operation whose completion arrives as a packet on the run's completion port: an overlapped
 * read or write on a pipe, or the exit or cancel notification a thread-pool wait posts. */
struct pk__op {
    OVERLAPPED ov;
    struct pk_process *proc;
    enum pk__op_kind kind;
    bool pending;         /* a packet is still to come */
    volatile LONG posted; /* a thread-pool wait's callback posted its packet */
};

struct pk_process {
    int pid;
    HANDLE process;
    HANDLE iocp;   /* where this run's packets arrive: its own, or its loop's */
    bool own_iocp; /* pk_run / pk_spawn: created for this run */
    HANDLE in;     /* stdin pipe (our end), NULL when none */
    const unsigned char *in_data;
    size_t in_len, in_off;
    HANDLE pipe[3];               /* [1] stdout, [2] stderr: our ends, NULL when not captured */
    struct pk__stream streams[3]; /* [1], [2] */
    struct pk__op ops[PK__OP_COUNT];
    HANDLE exit_wait, cancel_wait; /* thread-pool waits that post PK__OP_EXIT / PK__OP_CANCEL */
    int pending;                   /* packets still to come */
    int64_t start_ns;

    /* run control, as on POSIX */
    struct pk__limits lim; /* the time limits and cancel, as on POSIX (timelimits.c) */
    bool terminated;       /* the library terminated the tree (the exit code is then ours) */
    int break_signo;       /* the signal a Ctrl+Break we sent stood for, 0: none */
    bool closing;          /* being released: no new I/O is issued */
    pk_cancel *cancel;
    int (*on_line)(void *user, const pk_line *line);
    void *line_user;
    bool pulling;

    /* containment */
    struct pk_group *group;
    struct pk_group own;
    bool has_own;
    pk_containment containment;

    bool exited, reaped, taken, heap;
    int error;
    pk_outcome outcome;
    void *loop_run; /* the loop's record of this run, NULL outside a loop */
};

/* spawn.windows.c: starts cmd; its packets will arrive on iocp (NULL: a port of its own). */
int pk__process_start(const pk_command *cmd, struct pk_process *p, HANDLE iocp, pk_result *failure);
/* Runs the engine until the run is over, then fills *res. */
int pk__process_finish(struct pk_process *p, pk_result *res);
/* Ends the run now: kills what is left, stops the waits, cancels the I/O. Packets may still come
 * (p->pending); the port's owner drains them before pk__process_close. */
void pk__process_quiesce(struct pk_process *p);
/* Releases everything; a run with its own port is quiesced and drained first. */
void pk__process_close(struct pk_process *p);

/* engine.windows.c */
/* Issues the first stdin write and the exit/cancel waits. 0 or -errno. */
int pk__engine_arm(struct pk_process *p);
/* Starts reading the captured streams. Deferred until someone drives the run (wait, pull,
 * wait_any, a loop), as on POSIX, so a caller can still choose the pull API first. */
void pk__engine_start_reads(struct pk_process *p);
/* Handles one packet of this run. */
void pk__engine_packet(struct pk_process *p, struct pk__op *op, DWORD bytes, DWORD err);
void pk__engine_timers(struct pk_process *p, int64_t now);
int64_t pk__engine_next_wakeup(const struct pk_process *p);
/* Nothing left but building the result (and no packet still to come). */
bool pk__engine_done(const struct pk_process *p);
int pk__engine_result(struct pk_process *p, pk_result *res);
/* Waits for one packet on port (up to timeout_ms, INFINITE) and hands it to its run. Returns 1
 * when one was handled, 0 on timeout, or -errno. */
int pk__engine_wait_packet(HANDLE port, DWORD timeout_ms, struct pk_process **who);
/* Terminates the tree (or the direct child) with PK__KILL_CODE. */
void pk__engine_kill(struct pk_process *p);

#endif /* PK_INTERNAL_WINDOWS_H */
