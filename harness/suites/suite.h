/*
 * suite — the contract between pkbench and a suite, shaped like the contender contract: a suite
 * is one folder (suites/<name>/) that defines one `const pkb_suite pkb_suite_<name>` and is listed
 * by one line in suites/registry.h. Nothing else in the harness names a suite.
 *
 * A suite runs (builds its series and hands them to the runner, run/run.h, which writes the
 * results file) and reports (its Markdown and its figures, through report/report.h, and
 * optionally its terminal view and per-series line, report.h's `terminal` and `series_line`).
 */
#ifndef PKB_SUITE_H
#define PKB_SUITE_H

#include "report/report.h"
#include "run/run.h"

#include <stdbool.h>

/* pkbench ab: one build of the library, whose worker (contenders/host/host.c, built against
 * it) runs every contender of the registry. */
typedef struct pkb_cli_side {
    const char *label;  /* "base", "head": the series' side */
    const char *worker; /* the pk_contender_host to start, once per series */
} pkb_cli_side;

/* The most sizes --fan-out may list. */
#define PKB_FAN_OUT_SIZES 8

/* What the command line hands a suite besides the runner's options. */
typedef struct pkb_cli {
    const char *filter;    /* extended regular expression over series names, or NULL */
    const char *tiny_path; /* the tiny static helper (spawn_only, phases) */
    long iterations;       /* --iterations; 0: the profile's (only where `takes_iterations`) */
    /* The scenarios suite only: its contenders in these builds' workers instead of this
     * process. Two sides (pkbench ab): every series once per side, base then head. One (pkbench
     * run --build): every series once, in that build's worker. 0: in this process. */
    const pkb_cli_side *sides;
    size_t nsides;
    /* Two sides: also the contenders that call nothing of the library (controls and
     * library_free ones, contenders/contender.h), whose sides run the same code (--controls). */
    bool controls;
    /* --fan-out: the sizes of the fan-out at scale (the scenarios suite), increasing; none: the
     * profile's (full 16, 64, 256, 1024, 4096; quick 16, 64, 256) */
    int fan_out[PKB_FAN_OUT_SIZES];
    size_t nfan_out;
} pkb_cli;

typedef struct pkb_suite {
    const char *name;        /* `--suite NAME`, the results file's `suite` */
    const char *description; /* one line, for `pkbench list` and --help */
    bool rounds;             /* timed through Google Benchmark: --interleave and --aa apply */
    bool takes_iterations;   /* --iterations applies */
    bool takes_workers;      /* --worker applies (contenders added for one run) */
    /* Runs the suite. Returns pkbench's exit status: 0, 1 (input or set-up error, message
     * printed) or 130 (interrupted; the results file keeps what finished). */
    int (*run)(const pkb_cli *cli, pkb_suite_options *opts);
    pkb_report_kind report;
} pkb_suite;

/* The registry: every suite listed in suites/registry.h, in --help order. */
extern const pkb_suite *const pkb_suites[];
extern const size_t pkb_suite_count;

/* `pkbench list`: the suites, the scenarios suite's contenders and the scenarios each one runs,
 * and the suite's own control series, as text (list.c). */
void pkb_suites_list(pkb_buf *out);

/* What a registry's list turns into (registry.c, registry.windows.c): a line X(name) declares
 * the suite's definition and makes it an entry of pkb_suites. */
#define PKB_SUITE_DECLARE(name) extern const pkb_suite pkb_suite_##name;
#define PKB_SUITE_ENTRY(name)   &pkb_suite_##name,

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

/* The end of `pkbench run` and `pkbench report FILE --print`: loads and validates the results
 * file and appends its suite's terminal view (report.h's pkb_term_report: the key tables as
 * aligned text, SGR colour only when `color`) to out. Writes no file. Errors as
 * pkb_report_render. */
int pkb_report_print(const char *results_path, bool color, pkb_buf *out, char *err, size_t err_len);

/* The runner's per-series hook (run.h's pkb_suite_options.series_line): loads the results file
 * just written and appends the one-line summary of series `name` (report.h's pkb_term_series).
 * Returns 0, -ENOENT when the file holds no series of that name, or the loader's error. */
int pkb_report_series_line(const char *results_path, const char *name, pkb_buf *out);

#endif /* PKB_SUITE_H */
