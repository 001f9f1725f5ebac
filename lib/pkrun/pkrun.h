/*
 * What pkrun's modules share on every platform. pkrun is a user of processkit's public API like
 * any other; nothing here is part of the library. One command line, one JSON outcome and one rule
 * for writing files serve the POSIX and the Windows pkrun; only the run itself differs.
 *
 *   args.c            the command line: options, durations, counts, --help (args.posix.c and
 *                     args.windows.c: what differs, such as signal names and containment choices)
 *   capture.c         the bounded head or tail of a stream kept for --json
 *   output.c          the JSON outcome and what pkrun says about a run (--verbose, a failed start)
 *   output.posix.c,   the one rule for writing a file, and pkrun's own stdout
 *   output.windows.c
 *   pkrun.posix.c     the POSIX run (with signals.posix.c, relay.posix.c, tty.posix.c: see
 *                     pkrun.posix.h)
 *   pkrun.windows.c   the Windows run
 */
#ifndef PKRUN_H
#define PKRUN_H

#include "processkit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* for __MINGW_PRINTF_FORMAT */

/* printf's format checking: mingw-w64's printf (__USE_MINGW_ANSI_STDIO) is the GNU one. */
#ifdef __MINGW_PRINTF_FORMAT
#define PKR_PRINTF(fmt, args) __attribute__((format(__MINGW_PRINTF_FORMAT, fmt, args)))
#else
#define PKR_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#endif

#define PKR_EXIT_TIMEOUT  124
#define PKR_EXIT_OWN      125
#define PKR_EXIT_NOEXEC   126
#define PKR_EXIT_NOTFOUND 127

/* ---- the command line (args.c) ------------------------------------------------------------- */

struct pkr_options {
    int64_t timeout_ns;    /* 0: none */
    int64_t kill_after_ns; /* after the first signal, SIGKILL this much later (0: at once) */
    int64_t idle_ns;       /* 0: none */
    int signo;             /* sent at a limit (-s), SIGTERM by default; 0 sends nothing */
    size_t max_bytes, max_lines;
    pk_keep keep;
    bool capture; /* a --max-bytes / --max-lines / --keep option was given */
    pk_containment containment;
    bool verbose, preserve_status, foreground;
    const char *json;       /* NULL, "-", or a path */
    const char *limit_text; /* how the user wrote the time limit, for messages */
    char **argv;            /* the command */
};

/* Parses argv into *o; a bad command line ends pkrun with 125 and one line naming what is wrong,
 * --help and --version end it with 0. */
void pkr_parse(int argc, char **argv, struct pkr_options *o);

/* A duration as pkrun reads it (see --help), into nanoseconds: 0 means none, a huge value
 * saturates ("never"), a positive value too small for the clock becomes 1 ns. Returns NULL, or
 * what is wrong with v. */
const char *pkr_parse_duration(const char *v, int64_t *ns);

/* Whether the command's output must pass through pkrun (--idle-timeout, --keep fail, --json with
 * a capture option); otherwise the command inherits pkrun's stdout and stderr. */
bool pkr_output_needed(const struct pkr_options *o);
/* Whether a relayed stream's head or tail is kept (for --json, or to check --keep fail). */
bool pkr_output_recorded(const struct pkr_options *o);

/* Prints "pkrun: " and the message, then the usage, on stderr, and exits 125. */
_Noreturn void pkr_bad_arg(const char *fmt, ...) PKR_PRINTF(1, 2);

/* What differs by platform (args.posix.c, args.windows.c). */

/* A value --containment accepts. */
struct pkr_choice {
    const char *name;
    int value;
};
/* --containment's values, in the order --help lists them, ending with {NULL, 0}. */
extern const struct pkr_choice pkr_containment_choices[];

/* The parts of --help that differ; args.c puts them in place. */
struct pkr_help {
    const char *options;     /* the usage's list of options, after "options: " */
    const char *about;       /* what pkrun does with COMMAND and its output */
    const char *signal;      /* -s */
    const char *kill_after;  /* -k, --grace */
    const char *foreground;  /* --foreground */
    const char *containment; /* --containment, --pdeathsig */
    const char *verbose;     /* -v */
    const char *signals;     /* the paragraph on signals (or what stands for them) */
    const char *exit_status; /* the paragraph on the exit status */
};
extern const struct pkr_help pkr_help;

/* -s's value: the signal number; a value that is not a signal (on Windows: any) ends pkrun
 * through pkr_bad_arg. */
int pkr_signal_arg(const char *v);
/* The options together, once all are read: a combination this platform cannot run ends pkrun
 * through pkr_bad_arg. */
void pkr_check_options(const struct pkr_options *o);

/* ---- the bounded capture (capture.c) ------------------------------------------------------- */

struct pkr_capture {
    pk_keep keep;
    size_t max_bytes, max_lines;
    char *buf;
    size_t cap, len, head; /* HEAD: buf[0, len); TAIL: a ring of cap bytes starting at head */
    uint64_t total_bytes, newlines;
    char last; /* the last byte seen */
};

void pkr_capture_init(struct pkr_capture *c, pk_keep keep, size_t max_bytes, size_t max_lines);
/* Counts and keeps (within the caps) the next bytes of the stream. -ENOMEM, else 0. */
int pkr_capture_feed(struct pkr_capture *c, const char *data, size_t len);
/* Where the next `want` bytes of the stream can be read straight into the kept text: up to
 * *room bytes at the pointer returned (fewer than want where the ring wraps), then
 * pkr_capture_commit with how many came. NULL (and *room 0) when no byte read now would be kept
 * (a sealed head, max_bytes 0), when the tail's ring is smaller than want, or when memory ran
 * out: read them elsewhere and pkr_capture_feed them, which counts them (and says -ENOMEM). */
char *pkr_capture_slot(struct pkr_capture *c, size_t want, size_t *room);
/* The len bytes just read into the slot: counted and kept. */
void pkr_capture_commit(struct pkr_capture *c, size_t len);
/* What was kept: whole lines only (a final unterminated line counts as one), the head or the
 * tail within both caps. *text points into the capture (valid until release); *truncated when
 * kept < total. */
void pkr_capture_kept(struct pkr_capture *c, const char **text, size_t *len, bool *truncated);
/* Lines seen: newlines, plus one for a final unterminated line. */
uint64_t pkr_capture_lines(const struct pkr_capture *c);
void pkr_capture_release(struct pkr_capture *c);
/* Newline bytes in data[0, len) (a word at a time). */
uint64_t pkr_count_newlines(const char *data, size_t len);

/* ---- output (output.c, output.posix.c, output.windows.c) ------------------------------------ */

/* Whether `path` ("-" for stdout) can be written later (pkrun checks before running anything).
 * 0 or -errno. */
int pkr_output_check(const char *path);
/* Writes data to path: "-" is stdout, anything else goes by pkr_file_write's rule. 0 or -errno. */
int pkr_output_write(const char *path, const char *data, size_t len);

/* The file rule, one per platform (output.posix.c, output.windows.c): a regular file or a new
 * path is replaced atomically (a temporary file in the same directory, flushed to disk, renamed
 * over it; a symlink's target is what is replaced); anything else (a terminal, a FIFO,
 * /dev/stderr, NUL) is opened and written in place. pkr_file_check says beforehand whether that
 * will work. 0 or -errno. */
int pkr_file_check(const char *path);
int pkr_file_write(const char *path, const char *data, size_t len);
/* Writes all of data, unchanged, to pkrun's stdout (stream 1) or stderr (2), adding what was
 * written to *done. 0, -EPIPE when the reader went away, or another -errno. */
int pkr_write_std(int stream, const char *data, size_t len, uint64_t *done);

/* How a stream of the command reached pkrun's output. */
enum pkr_forwarding {
    PKR_INHERITED, /* the command had pkrun's own stdout or stderr */
    PKR_CLOSED,    /* pkrun started without it */
    PKR_MERGED,    /* stderr: one pipe with stdout (pkrun's stdout and stderr are one file) */
    PKR_RELAYED,   /* through pkrun */
};

/* One of the command's output streams as the outcome reports it, whichever platform ran it. */
struct pkr_stream_report {
    enum pkr_forwarding forwarding;
    uint64_t bytes;              /* RELAYED: read from the command */
    uint64_t delivered_bytes;    /* RELAYED: written to pkrun's output */
    bool reader_gone;            /* RELAYED: the output's reader went away (EPIPE) */
    int write_error;             /* RELAYED: another write error, positive errno; else 0 */
    struct pkr_capture *capture; /* RELAYED: what was kept for --json; NULL when nothing is */
};

/* Everything the JSON outcome reports. */
struct pkr_report {
    const struct pkr_options *o;
    const pk_result *res;
    int run_rc;
    pk_outcome_kind kind; /* what pkrun says happened (a limit, or the result's own kind) */
    int status;           /* pkrun's exit status (128 + N when it ends by signal N) */
    struct pkr_stream_report streams[2]; /* stdout, stderr */
};

/* The outcome as JSON (schema "pkrun", version 2), malloc'd into *text. 0 or -ENOMEM. */
int pkr_json(const struct pkr_report *rep, char **text, size_t *len);
/* Writes the JSON outcome to --json's path; a failure is said on stderr (the status stands). */
void pkr_json_write(const struct pkr_report *rep);

/* --verbose before the start: the mechanisms, and whether the output is relayed (and, `merged`,
 * through one pipe). */
void pkr_say_start(const struct pkr_options *o, bool relayed, bool merged);
/* --verbose at the end: the containment the run had, how it ended, pkrun's exit status. */
void pkr_say_end(const struct pkr_options *o,
                 const pk_result *res,
                 pk_outcome_kind kind,
                 int status);
/* One line on stderr for a start that failed (rc, the result `f`); returns the exit status
 * timeout would give. */
int pkr_start_failed(const struct pkr_options *o, int rc, const pk_result *f);
/* --keep fail: whether a kept stream did not fit (each such stream is named on stderr). */
bool pkr_over_fail_cap(const struct pkr_stream_report streams[2]);

#endif /* PKRUN_H */
