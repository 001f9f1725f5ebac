/*
 * report — `pkbench report FILE`: a Markdown report and bar-chart plots rendered from one results
 * file (harness/results.schema.json, schema version 1). Every number in the output is computed
 * from the file; nothing is typed in.
 *
 * What one call writes into out_dir (name = the results file's basename without ".json"; stem =
 * name-scenario with every character outside [A-Za-z0-9_.-] replaced by '_'):
 *
 *     <name>.md                    the report: the seed document's table per scenario (contender |
 *                                  mean ± sd | median | throughput | delta vs baseline), refused
 *                                  and failed series with their reason, noisy repetitions, the
 *                                  conclusions (10% negligible-overhead threshold) and the
 *                                  project's targets, priming, settings, environment
 *     <stem>.dat                   per scenario with a measured series: the plotted numbers
 *     <stem>.gp                    the gnuplot script that drew ...
 *     <stem>.gnuplot.png, .svg     ... these (pngcairo when gnuplot has it, else png)
 *     <stem>.py                    the matplotlib script (Agg backend) that drew ...
 *     <stem>.matplotlib.png        ... this
 *
 * The scripts read the .dat next to them by its relative name, so `gnuplot <stem>.gp` or
 * `/usr/bin/python3 <stem>.py` run in out_dir redraws a figure.
 *
 * A file of the phases suite (`suite` "phases") gets the phases report instead (report_phases.c):
 * the phase, primitives, reconciliation and spawn-lock tables, and one figure set with the stem
 * <name>-reconciliation (the stacked bars of plot_phases.c), written and committed the same way.
 *
 * Atomicity: everything is first written into a private staging directory inside out_dir (each
 * file we write is fsync'ed; the tools write theirs there too). Only when every file is complete
 * are they renamed into place, the report last; on any failure the staging directory is removed,
 * so a failed call leaves neither a half-written file nor a partial set of new files. out_dir is
 * created (with its parents) only after the results file has been read and validated.
 *
 * The two plotting tools run through processkit's pk_run, each once for all scenarios (`gnuplot
 * a.gp b.gp ...`; one Python interpreter running every .py with runpy), with a time limit and
 * their output captured, so a failure is reported with the tool's last line of stderr.
 */
#ifndef PKB_REPORT_H
#define PKB_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The negligible-overhead threshold of the seed document's conclusions: |delta| ≤ 10%. */
#define PKB_REPORT_NEGLIGIBLE 0.10

/* Options; all-zero (or a NULL pointer) means: plots on, "gnuplot" from PATH, /usr/bin/python3
 * (Debian's python3-matplotlib belongs to it, not to a python3 earlier in PATH), 60 s per tool. */
typedef struct pkb_report_options {
    bool no_plots;           /* true: the Markdown report only (no tool runs; what tests use) */
    const char *gnuplot;     /* the gnuplot program: a bare name is searched in PATH */
    const char *python;      /* the Python interpreter that has matplotlib */
    int64_t tool_timeout_ms; /* per tool run; the tool's process tree is killed past it */
} pkb_report_options;

/* Renders the report (and, unless opts->no_plots, the plots) of the results file `results_path`
 * into `out_dir`, replacing files of the same names.
 *
 * Returns 0, or a negative errno with a one-line message (no newline, no trailing period) in
 * err[0..err_len) that names the file or the tool and the problem:
 *   -EINVAL            a NULL or empty argument
 *   -ENOENT, -EACCES,  the results file cannot be opened or read (the errno of open/read);
 *   -EISDIR, ...       -EFBIG when it is larger than 1 GiB
 *   -EBADMSG           not valid JSON; not a pkbench results file (`schema` is not
 *                      "pkbench-results"); a required field is missing or has the wrong type
 *                      (the message gives its path, e.g. series[3].samples_ns[2]); a scenario
 *                      with two measured baseline series
 *   -ENOTSUP           `schema_version` is not 1
 *   -EIO               gnuplot or Python ran and failed (non-zero exit, a signal, or a figure it
 *                      did not write); the message quotes the tool's last line of output
 *   -ETIMEDOUT         gnuplot or Python ran longer than opts->tool_timeout_ms
 *   PK_ENOTFOUND, ...  gnuplot or Python could not be started (processkit's error)
 *   other -errno       creating out_dir or writing, syncing or renaming an output file
 *   -ENOMEM
 * On every error no output file has been created or replaced.
 *
 * err may be NULL when err_len is 0. Thread-safe (no global state); the tools are started from
 * the calling thread. */
int pkb_report_render(const char *results_path,
                      const char *out_dir,
                      const pkb_report_options *opts,
                      char *err,
                      size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* PKB_REPORT_H */
