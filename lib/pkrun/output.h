/*
 * What pkrun writes (output.c, with output.posix.c or output.windows.c for the file rule and
 * pkrun's own stdout): the JSON outcome, what it says about a run, and how a stream of the command
 * reached pkrun's output.
 */
#ifndef PKRUN_OUTPUT_H
#define PKRUN_OUTPUT_H

#include "capture.h"
#include "types.h"

/* Whether `path` ("-" for stdout) can be written later (pkrun checks before running anything).
 * 0 or -errno. */
int pkr_output_check(const char *path);
/* Writes data to path: "-" is stdout, anything else goes by pkr_file_write's rule. 0 or -errno. */
int pkr_output_write(const char *path, const char *data, size_t len);

/* The file rule, one per platform (output.posix.c, output.windows.c): a regular file or a new
 * path is replaced atomically (a temporary file in the same directory, flushed to disk, renamed
 * over it; a symlink's target is what is replaced or made, even when it does not exist yet);
 * anything else (a terminal, a FIFO, /dev/stderr, NUL) is opened and written in place.
 * pkr_file_check says beforehand whether that will work (it makes and removes the temporary
 * file). When the new file cannot be written, a regular file already there (an earlier outcome)
 * is removed, so that it cannot pass for this one. 0 or -errno; on POSIX also -ENXIO when a FIFO
 * found no reader, -ETIMEDOUT when its reader took nothing, both for PKR_OUTPUT_WAIT_MS, and
 * -EINTR when a signal told pkrun to stop meanwhile (pkr_output_interrupt). */
int pkr_file_check(const char *path);
int pkr_file_write(const char *path, const char *data, size_t len);
/* Writes all of data, unchanged, to pkrun's stdout (stream 1) or stderr (2), adding what was
 * written to *done. 0, -EPIPE when the reader went away, or another -errno; on POSIX -EINTR when
 * a signal told pkrun to stop while the reader took nothing (pkr_output_interrupt). */
int pkr_write_std(int stream, const char *data, size_t len, uint64_t *done);

/* How long a write to a FIFO waits for its reader to open it, or to take more (POSIX). */
#define PKR_OUTPUT_WAIT_MS 5000

/* POSIX only (output.posix.c): what a wait for a reader watches besides the time. `fd` turns
 * readable when a signal arrived; stop(user) then says whether it tells pkrun to stop. */
struct pkr_interrupt {
    int fd;
    bool (*stop)(void *user);
    void *user;
};
void pkr_output_interrupt(const struct pkr_interrupt *in);

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
/* Writes the JSON outcome to --json's path. 0, or -errno when it could not be written: said on
 * stderr, and a lost outcome makes pkrun's exit status 125. */
int pkr_json_write(const struct pkr_report *rep);

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

#endif /* PKRUN_OUTPUT_H */
