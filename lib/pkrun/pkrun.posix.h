/*
 * The POSIX pkrun's own modules (on top of pkrun.h): the signals it catches, the relay that
 * forwards the command's output when an option needs it, and the terminal.
 *
 *   pkrun.posix.c    set-up, the spawn, the event loop (limits, signals, the exit), the exit status
 *   args.posix.c     signal names and numbers, --containment's choices, the POSIX lines of --help
 *   signals.posix.c  which signals are caught, the self-pipe their handler writes, re-raising at
 *                    the end
 *   relay.posix.c    the pipes between the command and pkrun's stdout/stderr, when an option
 *                    needs them; how each stream reached pkrun's output, for the outcome
 *   tty.posix.c      handing the terminal to a command in its own process group, and job control
 */
#ifndef PKRUN_POSIX_H
#define PKRUN_POSIX_H

#include "pkrun.h"

#include <poll.h>

/* "TERM", "KILL", "RTMIN+3", "EXIT" for 0 (args.posix.c). */
const char *pkr_signal_name(int signo, char buf[16]);

/* ---- signals (signals.posix.c) --------------------------------------------------------------- */

/* A signal pkrun caught, as its handler recorded it. */
struct pkr_signal {
    int signo;
    bool from_kernel; /* si_code SI_KERNEL: sent by the terminal (Ctrl-C, hang-up), not kill(2) */
};

/* Catches every asynchronous terminating signal that was not ignored at start (a signal ignored
 * then stays ignored, for pkrun and the command: nohup), resets SIGCHLD to its default, and makes
 * the self-pipe whose read end pkr_signals_fd returns. Returns 0 or -errno. */
int pkr_signals_init(void);
int pkr_signals_fd(void);
/* Reads what the handlers recorded into sigs (up to cap); returns how many. */
size_t pkr_signals_take(struct pkr_signal *sigs, size_t cap);
/* After the spawn (the command keeps the mask pkrun was started with): unblocks the caught
 * signals for pkrun and blocks SIGTTIN and SIGTTOU, so pkrun's own terminal writes and tcsetpgrp
 * from the background never stop it. */
void pkr_signals_after_spawn(void);
/* Asks for SIGCHLD on the command's stops (job control, tty.posix.c). */
void pkr_signals_watch_stops(void);
/* Ends pkrun the way the command ended: by the same signal (no core file of pkrun's own), or
 * 128 + signo when that signal cannot end it. */
_Noreturn void pkr_die_like(int signo);

/* ---- the relay (relay.posix.c) --------------------------------------------------------------- */

/* Where a stream is forwarded: pkrun's own stdout or stderr. */
struct pkr_out {
    int fd;         /* what pkrun writes to (its own descriptor, or a non-blocking reopen) */
    int reopened;   /* the reopen to close, -1 when none */
    int mode;       /* how a write is made without blocking the loop (relay.posix.c) */
    bool is_pipe;   /* a pipe or FIFO: splice and tee can move bytes into it */
    bool is_file;   /* a regular file: splice can (unless it is O_APPEND) */
    bool gone;      /* its reader went away (EPIPE) */
    int error;      /* another write error, positive errno */
    uint64_t bytes; /* delivered */
};

struct pkr_stream {
    int id;        /* 1 stdout, 2 stderr (and stderr too when merged) */
    int src;       /* pkrun's read end of the command's pipe, -1 once closed */
    int child_end; /* the write end the command gets, -1 once closed */
    struct pkr_out *out;
    int how;      /* relay.posix.c: copy through pkrun; splice (pipe to pipe, nothing captured); or
                     tee (pipe to pipe, the capture reads what was duplicated into the output) */
    bool blocked; /* a write would block: wait for the output, read nothing meanwhile */
    char *buf;
    size_t off, len; /* pending bytes buf[off, off+len) */
    uint64_t bytes;  /* read from the command */
    bool capturing;
    struct pkr_capture cap;
};

struct pkr_relay {
    bool active;    /* the command writes into pipes pkrun forwards (else it inherits 1 and 2) */
    bool merged;    /* pkrun's stdout and stderr are one file: one pipe keeps their order */
    bool closed[3]; /* pkrun started with this standard descriptor closed */
    int nstreams;
    struct pkr_stream streams[2];
    struct pkr_out outs[2];
    bool draining;      /* the command exited: read what is buffered, then stop */
    int64_t last_io_ns; /* the last bytes from the command, or the end of a blocked write */
    uint64_t dropped;   /* bytes given up when pkrun was told to stop */
};

/* Makes the standard descriptors pkrun started without (closed) exist as /dev/null with
 * close-on-exec, so none of pkrun's own descriptors lands on 0, 1 or 2 and the command still
 * starts with them closed. Records which in r->closed. */
void pkr_relay_reserve_std(struct pkr_relay *r);
/* Sets up the pipes when `needed`, and the command's stdout/stderr in *cmd. 0 or -errno. */
int pkr_relay_prepare(struct pkr_relay *r,
                      bool needed,
                      const struct pkr_options *o,
                      pk_command *cmd);
/* The command has its copies of the pipes: closes pkrun's. */
void pkr_relay_spawned(struct pkr_relay *r);
/* Adds what the relay waits for to pfd (at most 4), returning how many; tags[k] names them. */
int pkr_relay_poll_set(struct pkr_relay *r, struct pollfd *pfd, int *tags);
/* Acts on the revents of what pkr_relay_poll_set added. */
void pkr_relay_handle(struct pkr_relay *r, const struct pollfd *pfd, const int *tags, int n);
/* True once every stream ended and everything read was delivered. */
bool pkr_relay_done(const struct pkr_relay *r);
/* True while some output cannot take more (the relay waits for its reader). */
bool pkr_relay_stalled(const struct pkr_relay *r);
/* Gives up on what the output has not taken (pkrun was told to stop): counts it in r->dropped. */
void pkr_relay_give_up(struct pkr_relay *r);
/* A write error other than a vanished reader, on any output: positive errno, else 0. */
int pkr_relay_error(const struct pkr_relay *r);
void pkr_relay_release(struct pkr_relay *r);
/* How each stream reached pkrun's output, for the outcome: out[0] stdout, out[1] stderr. */
void pkr_relay_report(struct pkr_relay *r, struct pkr_stream_report out[2]);

/* ---- the terminal (tty.posix.c) -------------------------------------------------------------- */

struct pkr_tty {
    int fd;      /* pkrun's controlling terminal among 0..2, -1 when none or not foreground */
    int pgid;    /* the command's process group */
    bool handed; /* the terminal is the command's */
};

/* For a command that leads its own process group, on pkrun's controlling terminal: when pkrun is
 * in the terminal's foreground, gives the terminal to the command's group (as a shell gives it to
 * a job) and continues it; either way watches the command's stops. */
void pkr_tty_start(struct pkr_tty *t, int command_pgid, int pidfd);
/* SIGCHLD arrived: when the command stopped for job control (Ctrl-Z, background tty access),
 * takes the terminal back, stops pkrun so that the shell sees the job stopped, and on `fg` gives
 * the terminal back and continues the command. */
void pkr_tty_check_stop(struct pkr_tty *t, int pidfd);
/* Gives the terminal back to pkrun's own process group. */
void pkr_tty_restore(struct pkr_tty *t);

#endif /* PKRUN_POSIX_H */
