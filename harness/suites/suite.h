/*
 * suite — the contract between pkbench and a suite, shaped like the contender contract: a suite
 * is one folder (suites/<name>/) that defines one `const pkb_suite pkb_suite_<name>` and is listed
 * by one line in suites/registry.h. Nothing else in the harness names a suite.
 *
 * A suite runs (builds its series and hands them to the runner, run/run.h, which writes the
 * results file) and reports (its Markdown and its figures, through report/report.h).
 */
#ifndef PKB_SUITE_H
#define PKB_SUITE_H

#include "report/report.h"
#include "run/run.h"

#include <stdbool.h>

/* What the command line hands a suite besides the runner's options. */
typedef struct pkb_cli {
    const char *filter;    /* extended regular expression over series names, or NULL */
    const char *tiny_path; /* the tiny static helper (spawn_only, phases) */
    long iterations;       /* --iterations; 0: the profile's (only where `takes_iterations`) */
} pkb_cli;

typedef struct pkb_suite {
    const char *name;        /* `--suite NAME`, the results file's `suite` */
    const char *description; /* one line, for `pkbench list` and --help */
    bool rounds;             /* timed through Google Benchmark: --interleave and --aa apply */
    bool takes_iterations;   /* --iterations applies */
    /* Runs the suite. Returns pkbench's exit status: 0, 1 (input or set-up error, message
     * printed) or 130 (interrupted; the results file keeps what finished). */
    int (*run)(const pkb_cli *cli, pkb_suite_options *opts);
    pkb_report_kind report;
} pkb_suite;

/* The registry: every suite listed in suites/registry.h, in --help order. */
extern const pkb_suite *const pkb_suites[];
extern const size_t pkb_suite_count;

/* The suite of that name, or NULL. Results files from before the compare suite was renamed
 * (`suite` "compare") are the scenarios suite's. */
const pkb_suite *pkb_suite_find(const char *name);

/* `pkbench report FILE`: loads and validates the results file, picks its suite and renders its
 * report into out_dir (report.h's pkb_report_write). Errors as results.h's pkb_results_load and
 * report.h's pkb_report_write, plus -EINVAL for a NULL or empty argument and -ENOTSUP for a file
 * of a suite this pkbench does not know. */
int pkb_report_render(const char *results_path,
                      const char *out_dir,
                      const pkb_report_options *opts,
                      char *err,
                      size_t err_len);

#endif /* PKB_SUITE_H */
