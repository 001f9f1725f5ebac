/*
 * Private to the report module: the forkathon suite's own report. report.c calls these instead
 * of its compare renderers when the results file's `suite` is "forkathon"; every other file is
 * rendered as before.
 *
 * What a forkathon report writes into out_dir (name = the results file's basename without
 * ".json"; the figure stems are sanitized as report.h's):
 *
 *     <name>.md                     Wemm's time(1) table and ratio table (with his 2003 numbers),
 *                                   the RSS ladder's cost table, least-squares fits (slope per MiB,
 *                                   R²) and memory per step, settings, environment
 *     <name>-wemm.{dat,gp,py,...}   µs per fork of the four binaries, this run against 2003
 *     <name>-rss_ladder.{...}       µs per spawn against the parent's RSS, log-log, one line per
 *                                   mechanism × THP setting
 *
 * (the six files of a figure as plot.c's: .dat, .gp, .gnuplot.png, .gnuplot.svg, .py,
 * .matplotlib.png). A part without measured series has no section body and no figure.
 */
#ifndef PKB_REPORT_FORKATHON_H
#define PKB_REPORT_FORKATHON_H

#include "report_internal.h"

/* The file's suite is "forkathon". */
bool pkb__forkathon_is(const pkb__results *r);

/* The Markdown report (report_forkathon.c). `plots`: link the figures. Returns 0 or -ENOMEM. */
int pkb__forkathon_markdown(const pkb__results *r, bool plots, pkb__buf *out);

/* plot_forkathon.c: writes the figures' .dat, .gp and .py into `dir` (the staging directory),
 * runs gnuplot and Python there and checks what they wrote. Errors as pkb__plots_render. */
int pkb__forkathon_plots_render(const pkb__results *r,
                                const char *dir,
                                const pkb_report_options *opts,
                                char *err,
                                size_t err_len);

/* The file names of every figure file pkb__forkathon_plots_render writes, each followed by a NUL,
 * appended to `names` (what report.c moves into place). Returns 0 or -ENOMEM. */
int pkb__forkathon_plot_files(const pkb__results *r, pkb__buf *names);

/* The stem of figure `figure` ("wemm", "rss_ladder") into `stem`; whether the file has data for
 * it (plot_forkathon.c). */
bool pkb__forkathon_figure(const pkb__results *r, const char *figure, char *stem, size_t cap);

#endif /* PKB_REPORT_FORKATHON_H */
