/*
 * The relay (relay.posix.c): the pipes between the command and pkrun's stdout and stderr, set up
 * only when an option needs the output to pass through pkrun, and how each stream reached pkrun's
 * output, for the outcome. And the clock the relay's idle time and the run's limits are read on.
 */
#ifndef PKRUN_RELAY_POSIX_H
#define PKRUN_RELAY_POSIX_H

#include "capture.h"
#include "output.h"
#include "types.h"

#include <poll.h>
#include <time.h>

/* The clock every time of a run is read on: CLOCK_BOOTTIME, which goes on while pkrun is stopped
 * (SIGSTOP, Ctrl-Z) and while the machine sleeps, as the real-time timer timeout(1) arms does,
 * without following changes to the date. A limit is that long after the start, whatever happened
 * to pkrun in between. */
#define PKR_CLOCK CLOCK_BOOTTIME
/* PKR_CLOCK's reading, in nanoseconds. */
int64_t pkr_now_ns(void);

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

#endif /* PKRUN_RELAY_POSIX_H */
