/*
 * report — turns one results file into a Markdown report and figures. The engine here knows no
 * suite: each suite (suites/<name>/) supplies its Markdown and the figures it wants, and the
 * engine stages, draws and commits them. `pkbench report FILE` reaches it through the suite
 * registry (suites/suite.h's pkb_suite_report), which picks the file's suite.
 *
 * What one render writes into out_dir (name = the results file's basename without ".json"):
 *
 *     <name>.md                    the suite's report; every number in it comes from the file
 *     <stem>.dat                   per figure the suite asked for: the plotted numbers
 *     <stem>.gp                    the gnuplot script that drew ...
 *     <stem>.gnuplot.png, .svg     ... these (pngcairo when gnuplot has it, else png)
 *     <stem>.py                    the matplotlib script (Agg backend) that drew ...
 *     <stem>.matplotlib.png        ... this
 *
 * The scripts read the .dat next to them by its relative name and embed no number, so
 * `gnuplot <stem>.gp` or `/usr/bin/python3 <stem>.py` run in out_dir redraws a figure.
 *
 * Atomicity: everything is first written into a private staging directory inside out_dir (each
 * file we write is fsync'ed; the tools write theirs there too). Only when every file is complete
 * are they renamed into place, the report last; on any failure the staging directory is removed,
 * so a failed call leaves neither a half-written file nor a partial set of new files. out_dir is
 * created (with its parents) only after the results file has been read and validated.
 */
#ifndef PKB_REPORT_H
#define PKB_REPORT_H

#include "common/buf.h"
#include "report/figure.h"
#include "results/results.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a suite's report module provides (suites/suite.h puts it in the registry).
 *
 * markdown: the whole report into out. `plots`: link the figures `figures` makes. Returns 0, or
 *           a negative errno with a one-line message in err (-EBADMSG: a malformed suite field,
 *           named; -ENOMEM).
 * figures:  adds the figures the file calls for to figs (no file is written, no tool run).
 *           NULL: the suite draws none. Errors as markdown. */
typedef struct pkb_report_kind {
    int (*markdown)(const pkb_results *r, bool plots, pkb_buf *out, char *err, size_t err_len);
    int (*figures)(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len);
    /* terminal:    the report's key tables as aligned plain text (common/term.h), for the end
     *              of `pkbench run` and `pkbench report --print`; SGR colour only when `color`.
     *              The same numbers as the Markdown, from the same code. NULL: the engine's
     *              generic table of every series (pkb_term_report). Errors as markdown.
     * series_line: one finished series in one line, without a newline, for `pkbench run` to
     *              print once the file holds the series' final data: its median and spread, and
     *              its delta and verdict against the scenario's baseline once that has run.
     *              NULL: the engine's generic line. */
    int (*terminal)(const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len);
    void (*series_line)(const pkb_results *r, size_t index, pkb_buf *out);
} pkb_report_kind;

/* Renders `r` with `kind` into out_dir, replacing files of the same names.
 *
 * Returns 0, or a negative errno with a one-line message (no newline, no trailing period) in
 * err[0..err_len) that names the file or the tool and the problem:
 *   -EBADMSG           a malformed suite field (from the suite's module)
 *   -EIO               gnuplot or Python ran and failed (non-zero exit, a signal, or a figure it
 *                      did not write); the message quotes the tool's last line of output
 *   -ETIMEDOUT         gnuplot or Python ran longer than opts->tool_timeout_ms
 *   PK_ENOTFOUND, ...  gnuplot or Python could not be started (processkit's error)
 *   other -errno       creating out_dir or writing, syncing or renaming an output file
 *   -ENOMEM
 * On every error no output file has been created or replaced. err may be NULL when err_len is
 * 0. Thread-safe (no global state); the tools are started from the calling thread. */
int pkb_report_write(const pkb_results *r,
                     const pkb_report_kind *kind,
                     const char *out_dir,
                     const pkb_report_options *opts,
                     char *err,
                     size_t err_len);

/* Writes a document that is not one results file's report (a table of many files, a history):
 * <name>.md, <name>.json (the `json` document, indented) when it is not NULL, and the figures of
 * `figs` (NULL: none), staged and renamed into place as pkb_report_write does, the Markdown last;
 * out_dir is created. Their names are appended to opts->written. Errors as pkb_report_write. */
int pkb_report_write_doc(const char *name,
                         const pkb_buf *md,
                         const json_t *json,
                         pkb_figures *figs,
                         const char *out_dir,
                         const pkb_report_options *opts,
                         char *err,
                         size_t err_len);

/* ---- The terminal rendering (terminal.c) ------------------------------------------------------
 */

/* `r` for a terminal: a title line (suite, profile, created; a warning when the run is
 * incomplete), then kind->terminal, or, when the suite has none, a table per scenario of every
 * series' median, mean ± sd and repetitions, then a line on disturbed repetitions and one on
 * re-measured series when there were any. Returns 0 or the suite's error (-EBADMSG, -ENOMEM) with
 * its message in err. */
int pkb_term_report(const pkb_results *r,
                    const pkb_report_kind *kind,
                    bool color,
                    pkb_buf *out,
                    char *err,
                    size_t err_len);

/* Series `index` of r in one line: kind->series_line, or the generic line (median, mean ± sd,
 * n); a series that was not measured gives its status and reason. */
void pkb_term_series(const pkb_results *r, const pkb_report_kind *kind, size_t index, pkb_buf *out);

/* "  not timed: `name` — refused: reason" lines for the members of sc that were not measured. */
void pkb_term_not_timed(const pkb_results *r,
                        const pkb_results_scenario *sc,
                        bool color,
                        pkb_buf *out);

/* ---- Markdown sections every suite's report shares ----------------------------------------- */

/* The title and the provenance line (suite, profile, created, command, filter, finished; a
 * warning when the run is incomplete). First in every report. */
void pkb_md_title(const pkb_results *r, pkb_buf *b);
/* Where the numbers come from: "`file` (pkbench-results, schema version 1); generated, not edited
 * by hand. Command: `...`." and " Filter: `...`." when the run had one (pkb_md_title's middle,
 * for a suite that writes its own title). */
void pkb_md_provenance(const pkb_results *r, pkb_buf *b);
/* Priming, settings, environment, and the noisy-repetition footnote. Last in every report. */
void pkb_md_appendix(const pkb_results *r, pkb_buf *b);
/* "- `name`: refused — reason" for series s, which was not measured (the reason the file gives,
 * else "no reason given"): never silently missing. */
void pkb_md_unmeasured(pkb_buf *b, const char *name, const pkb_results_series *s);
/* The figure links of `stem`: the SVG inline with `alt` (Markdown, appended as is), then the PNGs,
 * the data and the scripts. */
void pkb_md_figure(pkb_buf *b, const char *stem, const char *alt);

#endif /* PKB_REPORT_H */
