/*
 * What every module of pkrun shares, on every platform: the options the command line gives
 * (args.c fills them, everyone reads them), pkrun's own exit statuses, and printf's format check.
 * It includes nothing of pkrun's, so every module can depend on it and none on the main program.
 * pkrun is a user of processkit's public API like any other; nothing here is part of the library.
 *
 * One command line, one JSON outcome and one rule for writing files serve the POSIX and the
 * Windows pkrun; only the run itself differs. The modules, each with its header, from the bottom:
 *   capture.c         the bounded head or tail of a stream kept for --json (capture.h)
 *   output.c          the JSON outcome and what pkrun says about a run (--verbose, a failed
 *                     start); output.posix.c and output.windows.c: the one rule for writing a
 *                     file, and pkrun's own stdout (output.h)
 *   args.c            the command line: options, durations, counts, --help; args.posix.c and
 *                     args.windows.c: what differs, such as signal names and containment choices
 *                     (args.h)
 *   signals.posix.c   which signals are caught, the self-pipe their handler writes, re-raising
 *                     at the end (signals.posix.h)
 *   tty.posix.c       handing the terminal to a command in its own process group, and job
 *                     control (tty.posix.h)
 *   relay.posix.c     the pipes between the command and pkrun's stdout/stderr, when an option
 *                     needs them; how each stream reached pkrun's output (relay.posix.h)
 *   pkrun.posix.c     the POSIX run: set-up, the spawn, the event loop, the exit status
 *   pkrun.windows.c   the Windows run
 */
#ifndef PKRUN_TYPES_H
#define PKRUN_TYPES_H

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

/* pkrun's own exit statuses, as timeout(1) has them. */
#define PKR_EXIT_TIMEOUT  124
#define PKR_EXIT_OWN      125
#define PKR_EXIT_NOEXEC   126
#define PKR_EXIT_NOTFOUND 127

/* A duration past any clock: "never" (inf, or a value beyond 126 years). Half of INT64_MAX, so
 * that adding it to a clock's reading cannot overflow. */
#define PKR_NEVER_NS (INT64_MAX / 2)

/* What the command line asks for (args.c). */
struct pkr_options {
    int64_t timeout_ns;    /* 0 or PKR_NEVER_NS: none */
    int64_t kill_after_ns; /* after the first signal, SIGKILL this much later: 0 is none on
                              POSIX (as timeout's -k 0), at once on Windows; PKR_NEVER_NS none */
    int64_t idle_ns;       /* 0 or PKR_NEVER_NS: none */
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

#endif /* PKRUN_TYPES_H */
