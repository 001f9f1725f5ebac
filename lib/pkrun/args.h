/*
 * pkrun's command line (args.c, with args.posix.c or args.windows.c for what differs): parsing
 * it into struct pkr_options (types.h), and what the options decide.
 */
#ifndef PKRUN_ARGS_H
#define PKRUN_ARGS_H

#include "types.h"

/* Parses argv into *o; a bad command line ends pkrun with 125 and one line naming what is wrong,
 * --help and --version end it with 0. */
void pkr_parse(int argc, char **argv, struct pkr_options *o);

/* A duration as pkrun reads it (see --help), into nanoseconds: 0 means none, inf and a huge value
 * are PKR_NEVER_NS ("never"), a positive value too small for the clock becomes 1 ns. Returns
 * NULL, or what is wrong with v. */
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

/* -k's value when none is given: none on POSIX, as timeout; 2 s on Windows, where the Ctrl+Break
 * a limit sends reaches only a command that shares pkrun's console. */
extern const int64_t pkr_kill_after_default_ns;

/* -s's value: the signal number; a value that is not a signal (on Windows: any) ends pkrun
 * through pkr_bad_arg. */
int pkr_signal_arg(const char *v);
/* The options together, once all are read: a combination this platform cannot run ends pkrun
 * through pkr_bad_arg. */
void pkr_check_options(const struct pkr_options *o);

/* "TERM", "KILL", "RTMIN+3", "EXIT" for 0 (POSIX only: args.posix.c). */
const char *pkr_signal_name(int signo, char buf[16]);

#endif /* PKRUN_ARGS_H */
