/*
 * ab_cli — `pkbench ab BASE HEAD`'s command line, its two builds and its conclusion (ab_cli.c).
 * The measuring in between is pkbench.c's: the scenarios suite with both sides' workers, the
 * runner adding rounds through ab.h's pkb_ab_after_block.
 *
 * Exit status: 0 no series regressed; 2 a series regressed, or failed on the head side only; 3
 * none, but a series undecidable (open when the run was stopped, or too noisy at the last look);
 * 1 a usage error, a build that failed, an unreadable result; 130 interrupted (the results file
 * keeps every round). With --bisect-step (what `pkbench bisect` runs at each step) the status is
 * git bisect run's instead: 0 good, 1 bad, 125 skip (undecidable), 128 an error (stops the
 * bisection).
 */
#ifndef PKB_REGRESS_AB_CLI_H
#define PKB_REGRESS_AB_CLI_H

#include "common/cli.h"
#include "processkit.h"
#include "regress/ab.h"

#include <stdbool.h>

typedef struct pkb_ab_args {
    const char *spec[2]; /* BASE, HEAD */
    pkb_cli_run run;     /* --profile, --no-prime, --settle (--suite only "scenarios": its
                            contenders run in the workers; never --sequential, --repetitions) */
    const char *filter;
    const char *out; /* the results file; NULL: results/ab-<UTC time>.json */
    double max_time_s;
    pkb_ab_rule rule;
    pkb_compare_format format;
    bool bisect_step;
    bool quiet;
    bool controls; /* --controls: also the contenders that call nothing of the library */
    char path[PKB_AB_PATH_MAX]; /* the results file actually written */
} pkb_ab_args;

/* Parses `pkbench ab ...` (argv[1] is "ab"). Returns 0, 1 after a usage error, or -1 after
 * --help (printed). */
int pkb_ab_parse(int argc, char **argv, pkb_ab_args *a);

/* The results path (made writable), then both sides built (build.h). Returns 0, or 1 after a
 * message. */
int pkb_ab_prepare(pkb_ab_args *a, pkb_ab_side sides[2]);

/* After the run (`run_rc`: the suite's status, 0 or 130): the comparison of the file on stdout,
 * the summary and the file's path on stderr. Returns the exit status (above). */
int pkb_ab_conclude(const pkb_ab_args *a, int run_rc);

/* The line the runner prints for a finished series of an ab file: its side, median and rounds
 * (run.h's series_line). Returns 0 or the loader's error. */
int pkb_ab_series_line(const char *path, const char *name, pkb_buf *out);

/* Runs argv (argv[0] NULL: this pkbench) in cwd (NULL: here) as a child, its stderr and stdout
 * ours, or its stdout line by line to on_line when given; Ctrl-C and SIGTERM stop it (SIGTERM,
 * then SIGKILL after 30 s). What check --against and bisect run. Returns its exit status, 130
 * when it was stopped, or 1 after a message when it could not run. */
int pkb_ab_run(const char *const *argv,
               const char *cwd,
               int (*on_line)(void *user, const pk_line *line),
               void *user);

#endif /* PKB_REGRESS_AB_CLI_H */
