/*
 * Private declarations of the Windows build (internal.h includes them before what both platforms
 * share). The POSIX build's internal.posix.h describes a child plan for clone3 and a cgroup; here
 * a start is a CreateProcessW call, a group is a Job Object, and every run's pipes complete on an
 * I/O completion port.
 *
 * Module map (beside the halves both platforms share, listed in internal.h):
 *   text.windows.c     UTF-8 <-> UTF-16, Win32 errors -> errno, the clock
 *   cmdline.windows.c  argv -> a command line CommandLineToArgvW reads back; batch files
 *   resolve.windows.c  PATH x PATHEXT, the child's environment block
 *   process.windows.c  the start: the run's port and job, arming the engine; signals, wait_any
 *   spawn.windows.c    the program's text, standard handles and pipes, CreateProcessW
 *   engine.windows.c   one run's steps over the completion port and the single-run driver
 *   loop.windows.c     pk_loop's completion port
 *   group.windows.c    pk_group on a Job Object;  cancel.windows.c  cancel handles (events)
 *   errname.windows.c
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
#define PK__SIGCONT 18

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

/* Closes *h unless it is none (NULL or INVALID_HANDLE_VALUE), and marks it closed. */
static inline void pk__close_handle(HANDLE *h)
{
    if (*h != NULL && *h != INVALID_HANDLE_VALUE)
        CloseHandle(*h);
    *h = NULL;
}

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

/* pk__group_init makes a job with kill-on-close (PK_ENOCONTAIN for a mechanism Windows does not
 * have); pk__group_signal terminates for SIGKILL and sends Ctrl+Break to each member's process
 * group for SIGTERM/SIGINT. Both, and the rest: internal.h. */

/* Terminates every member with PK__KILL_CODE. */
int pk__group_terminate(struct pk_group *g);

struct pk_cancel {
    HANDLE event;        /* manual-reset, signalled once triggered */
    volatile LONG signo; /* the first signal for the tree, SIGTERM by default */
    volatile LONG fired;
};

/* ---- pk_loop's fields on Windows (loop.windows.c; the loop itself: loop.h) --------------- */

/* Nothing per run: every packet names its run's operation. */
#define PK__LOOP_RUN_FIELDS
/* The completion port every run of the loop posts to. */
#define PK__LOOP_FIELDS HANDLE iocp;

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
};

/* process.windows.c: starts cmd (pk__process_start with iocp NULL); its packets will arrive on
 * iocp (NULL: a port of its own). */
int pk__process_start_on(const pk_command *cmd,
                         struct pk_process *p,
                         HANDLE iocp,
                         pk_result *failure);
/* Ends the run now: kills what is left, stops the waits, cancels the I/O. Packets may still come
 * (p->pending); the port's owner drains them before pk__process_close, which on its own port
 * quiesces and drains first. */
void pk__process_quiesce(struct pk_process *p);

/* spawn.windows.c: the steps of a start that make the child, in order. */

/* Everything CreateProcessW needs, owned until the call returns. */
struct pk__start {
    wchar_t *app, *cmdline, *env, *cwd;
    HANDLE theirs[3]; /* the child's standard handles */
};
/* The program (resolved as pk_resolve_program does), the command line, the environment block and
 * the working directory; *stage names the step that failed. */
int pk__spawn_text(const pk_command *cmd,
                   const char *program,
                   struct pk__start *st,
                   pk_result *failure,
                   pk_stage *stage);
/* The child's standard handles into st->theirs, our pipe ends into p (in, pipe[1], pipe[2]), and
 * the streams' pumps. */
int pk__spawn_stdio(const pk_command *cmd, struct pk_process *p, struct pk__start *st);
/* CreateProcessW, born in (or assigned to) p->group's job when there is one: p->process, p->pid. */
int pk__spawn_create(struct pk_process *p, struct pk__start *st, pk_stage *stage);
/* Frees st and closes the child's handles (it has its copies by now, or never will). */
void pk__spawn_release(struct pk__start *st);

/* engine.windows.c */
/* Issues the first stdin write and the exit/cancel waits. 0 or -errno. */
int pk__engine_arm(struct pk_process *p);
/* Starts reading the captured streams. Deferred until someone drives the run (wait, pull,
 * wait_any, a loop), as on POSIX, so a caller can still choose the pull API first. */
void pk__engine_start_reads(struct pk_process *p);
/* Handles one packet of this run. */
void pk__engine_packet(struct pk_process *p, struct pk__op *op, DWORD bytes, DWORD err);
/* Waits for one packet on port (up to timeout_ms, INFINITE) and hands it to its run. Returns 1
 * when one was handled, 0 on timeout, or -errno. */
int pk__engine_wait_packet(HANDLE port, DWORD timeout_ms, struct pk_process **who);

#endif /* PK_INTERNAL_WINDOWS_H */
