/*
 * Private to the scenarios suite's folder: its report (report.c: the seed document's tables per
 * scenario; verdict.c: conclusions and targets; table.c: the numbers of a table row, shared by
 * every rendering), its terminal view (terminal.c) and its figures (figures.c: a bar chart per
 * scenario), which suite.c puts into the suite's registry entry.
 */
#ifndef PKB_SUITES_SCENARIOS_REPORT_H
#define PKB_SUITES_SCENARIOS_REPORT_H

#include "common/buf.h"
#include "report/report.h"
#include "results/results.h"

/* ---- table.c: one row of a scenario's table, computed once for every rendering ----------- */

typedef enum pkb__verdict {
    PKB__NO_BASELINE = 0, /* no measured baseline in the scenario: no delta */
    PKB__IS_BASELINE,
    PKB__NEGLIGIBLE, /* |delta| ≤ PKB_REPORT_NEGLIGIBLE */
    PKB__SLOWER,
    PKB__FASTER,
} pkb__verdict;

typedef struct pkb__row {
    const pkb_results_series *s;    /* a measured series */
    const pkb_results_series *base; /* the scenario's measured baseline, NULL when none */
    double throughput;              /* work per second at the mean time; NaN without work */
    double delta;                   /* (mean − baseline mean) / baseline mean; NaN: none */
    pkb__verdict verdict;
} pkb__row;

/* The row of measured series s of scenario sc. */
void pkb__scenario_row(const pkb_results *r,
                       const pkb_results_scenario *sc,
                       const pkb_results_series *s,
                       pkb__row *row);
/* (mean − baseline mean) / baseline mean: the report's delta. */
double pkb__delta(const pkb_results_series *s, const pkb_results_series *base);
/* A delta against the threshold (NaN: PKB__NO_BASELINE). */
pkb__verdict pkb__delta_verdict(double delta);
/* "negligible", "slower", "faster", "baseline"; "" for PKB__NO_BASELINE. */
const char *pkb__verdict_name(pkb__verdict v);

/* The cells, as both the Markdown and the terminal print them: "358.775 ± 80.099 µs" (or
 * "358.775 µs, n = 1"), the median in the mean's unit, "2,787 runs/s" (`md`: the unit made safe
 * for a Markdown cell), and "+1.2%" / "baseline" / "n/a". */
void pkb__cell_mean_sd(pkb_buf *b, const pkb_results_series *s);
void pkb__cell_median(pkb_buf *b, const pkb_results_series *s);
void pkb__cell_throughput(pkb_buf *b, const pkb__row *row, bool md);
void pkb__cell_delta(pkb_buf *b, const pkb__row *row);

/* ---- the renderings -------------------------------------------------------------------------- */

int pkb__scenarios_markdown(
    const pkb_results *r, bool plots, pkb_buf *out, char *err, size_t err_len);
int pkb__scenarios_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len);

/* verdict.c: the "Conclusions" section and its "Targets" subsection; the targets as terminal
 * tables (the ratio targets; processkit against each rival in every scenario). */
void pkb__md_conclusions(const pkb_results *r, pkb_buf *b);
void pkb__md_targets(const pkb_results *r, pkb_buf *b);
void pkb__term_targets(const pkb_results *r, bool color, pkb_buf *b);
void pkb__term_rivals(const pkb_results *r, bool color, pkb_buf *b);

/* terminal.c: the tables per scenario and the targets; the line of one finished series. */
int pkb__scenarios_terminal(
    const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len);
void pkb__scenarios_series_line(const pkb_results *r, size_t index, pkb_buf *out);

#endif /* PKB_SUITES_SCENARIOS_REPORT_H */
