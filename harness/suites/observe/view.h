/*
 * Private to the observe suite's folder: its report (report.c) and figures (figures.c), which
 * suite.c puts into the suite's registry entry.
 *
 * What an observe report writes into out_dir (name = the results file's basename without
 * ".json"; the six files of a figure as report/figure.h writes them):
 *
 *     <name>.md                    what could run here (gates, hooks, refusals); per hold the
 *                                  seed's table (rate × observer: CPU-s, "attributed N of M") and
 *                                  the extra columns; conclusions from the numbers; the seed's
 *                                  prototype against this run; time inside the BPF programs;
 *                                  settings and environment
 *     <name>-cpu.{...}             the observer's CPU per cell against the rate, per hold
 *     <name>-attribution.{...}     the share of churned connections attributed, against the rate
 *     <name>-workload.{...}        the workload's own CPU against the rate, per observer
 */
#ifndef PKB_SUITES_OBSERVE_VIEW_H
#define PKB_SUITES_OBSERVE_VIEW_H

#include "report/report.h"
#include "results/results.h"

int pkb__observe_markdown(
    const pkb_results *r, bool plots, pkb_buf *out, char *err, size_t err_len);
int pkb__observe_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len);
/* terminal.c: the seed's table per hold as aligned text, and the observers that could not run. */
int pkb__observe_terminal(
    const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len);

/* conclude.c: the conclusions, the seed's prototype against this run, the time inside the BPF
 * programs — each a section of the report, from the summary (observe.h) of r. */
void pkb__observe_conclusions(const pkb_results *r, const json_t *sum, pkb_buf *b);
void pkb__observe_seed(const pkb_results *r, const json_t *sum, pkb_buf *b);
void pkb__observe_bpf_programs(const json_t *sum, pkb_buf *b);

/* The figures a file has data for, in report order: "cpu", "attribution", "workload". */
extern const char *const pkb__observe_figure_names[3];
/* Whether the summary (observe.h) has data for figure `what`. */
bool pkb__observe_has_figure(const json_t *summary, const char *what);

#endif /* PKB_SUITES_OBSERVE_VIEW_H */
