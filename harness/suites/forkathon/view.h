/*
 * Private to the forkathon suite's folder: its report (report.c) and figures (figures.c), which
 * suite.c puts into the suite's registry entry.
 *
 * What a forkathon report writes into out_dir (name = the results file's basename without
 * ".json"; the figure stems are sanitized as report/report.h's):
 *
 *     <name>.md                     Wemm's time(1) table and ratio table (with his 2003 numbers),
 *                                   the RSS ladder's cost table, least-squares fits (slope per MiB,
 *                                   R²) and memory per step, settings, environment
 *     <name>-wemm.{dat,gp,py,...}   µs per fork of the four binaries, this run against 2003
 *     <name>-rss_ladder.{...}       µs per spawn against the parent's RSS, log-log, one line per
 *                                   mechanism × THP setting
 *
 * (the six files of a figure, as report/figure.h writes them: .dat, .gp, .gnuplot.png,
 * .gnuplot.svg, .py, .matplotlib.png). A part without measured series has no section body and no
 * figure.
 */
#ifndef PKB_SUITES_FORKATHON_VIEW_H
#define PKB_SUITES_FORKATHON_VIEW_H

#include "report/report.h"
#include "results/results.h"

/* The Markdown report (report.c). `plots`: link the figures. */
int pkb__forkathon_markdown(
    const pkb_results *r, bool plots, pkb_buf *out, char *err, size_t err_len);

/* The formatters the Markdown and the terminal share (report.c): a number field of `o` (NaN when
 * absent), a time given in µs in the unit it reads best in ("1.2 µs", "3.45 ms"; "n/a"), a ratio
 * ("2.70×"; "n/a" when not a number); integers are common/md.h's pkb_fmt_count. */
double pkb__fk_num(const json_t *o, const char *key);
void pkb__fk_us(pkb_buf *b, double us);
void pkb__fk_ratio(pkb_buf *b, const json_t *v);

/* terminal.c: Wemm's table, the ratio tables and the least-squares fits, from the summary. */
int pkb__forkathon_terminal(
    const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len);

/* figures.c: the figures the file has data for. */
int pkb__forkathon_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len);

/* The stem of figure `figure` ("wemm", "rss_ladder") into `stem`; whether the file has data for
 * it (figures.c). */
bool pkb__forkathon_figure(const pkb_results *r, const char *figure, char *stem, size_t cap);

#endif /* PKB_SUITES_FORKATHON_VIEW_H */
