/*
 * view — how the scenarios suite shows a results file, private to its folder. From the top:
 * suite.c puts the three renderings into the suite's registry entry — the report (report.c: the
 * seed document's tables per scenario, seed.c's table in the seed's own layout, then verdict.c's
 * conclusions and targets), the terminal
 * view (terminal.c) and the figures (figures.c: a bar chart per scenario). The renderings read a
 * table's unit and the numbers and cells of its rows from table.c, and table.c and verdict.c say
 * a verdict in words.c's words; the fan-out at scale has its section and terminal tables in scale.c
 * and its figure in scalefig.c. Each section below names its file; the calls go down that list,
 * never back up.
 */
#ifndef PKB_SUITES_SCENARIOS_VIEW_H
#define PKB_SUITES_SCENARIOS_VIEW_H

#include "common/buf.h"
#include "common/fit.h"
#include "report/report.h"
#include "results/results.h"
#include "results/verdict.h"

/* ---- the renderings: report.c, verdict.c, terminal.c, figures.c ---------------------------- */

int pkb__scenarios_markdown(
    const pkb_results *r, bool plots, pkb_buf *out, char *err, size_t err_len);
int pkb__scenarios_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len);

/* verdict.c: the "Conclusions" section (from the file's verdict set) and its "Targets"
 * subsection; the targets for a terminal (the ratio targets and the rival targets' results, then
 * processkit against each rival in every scenario), decided and worded by the same functions. */
void pkb__md_conclusions(const pkb_results *r, const pkb_verdict_set *vs, pkb_buf *b);
void pkb__md_targets(const pkb_results *r, pkb_buf *b);
void pkb__term_targets(const pkb_results *r, bool color, pkb_buf *b);

/* seed.c: the seed document's layout (its three scenarios; processkit, rust_tokio and rust_std,
 * Δ against rust_std), when the file has a Rust contender: a Markdown section and a terminal
 * table, from the same rows. */
bool pkb__seed_in_file(const pkb_results *r);
void pkb__md_seed(const pkb_results *r, pkb_buf *b);
void pkb__term_seed(const pkb_results *r, bool color, pkb_buf *out);

/* terminal.c: the tables per scenario and the targets; the line of one finished series. */
int pkb__scenarios_terminal(
    const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len);
void pkb__scenarios_series_line(const pkb_results *r, size_t index, pkb_buf *out);

/* ---- scale.c and scalefig.c: the fan-out at scale ------------------------------------------ */

#define PKB__SCALE_MAX_SIZES 16

/* One contender at one size N of the fan-out at scale. */
typedef struct pkb__scale_point {
    int n;
    const pkb_results_series *s; /* the measured series; NULL: none at this N */
    double per_child_ns;         /* its median / N */
    double lo_ns, hi_ns;         /* its fastest and slowest repetition / N */
    double peak_rss_kib;         /* the measuring worker's VmHWM; 0: not measured */
    double idle_fds, peak_fds;   /* before a fan-out, with all its children started; 0: not */
} pkb__scale_point;

/* One contender across the sizes: its points (aligned with pkb__scale.sizes) and its fits. */
typedef struct pkb__scale_line {
    const char *contender;
    pkb__scale_point pt[PKB__SCALE_MAX_SIZES];
    pkb_fit time; /* log(time per child) on log(N) */
    pkb_fit rss;  /* peak RSS (KiB) on N: its slope is the memory per child in flight */
    pkb_fit fds;  /* peak descriptors on N */
    bool has_time, has_rss, has_fds;
} pkb__scale_line;

/* The study: the sizes the file has (increasing, at most PKB__SCALE_MAX_SIZES) and a line per
 * contender, processkit first. */
typedef struct pkb__scale {
    int sizes[PKB__SCALE_MAX_SIZES];
    size_t nsizes;
    pkb__scale_line *lines;
    size_t nlines;
    bool measured; /* some line has a point: a timed series (else there is nothing to plot) */
} pkb__scale;

/* From the series with a "fan_out" object. 0 (nsizes 0 when there are none) or -ENOMEM. */
int pkb__scale_collect(const pkb_results *r, pkb__scale *m);
void pkb__scale_free(pkb__scale *m);
/* The report's "Fan-out at scale" section and its terminal tables (nothing without the study). */
void pkb__md_scale(const pkb_results *r, bool plots, pkb_buf *b);
void pkb__term_scale(const pkb_results *r, bool color, pkb_buf *b);
/* scalefig.c: the log-log figure of time per child against N ("fan_out_scale"). 0 or -ENOMEM. */
int pkb__scale_figure(const pkb_results *r, pkb_figures *figs);

/* ---- table.c: a scenario's table, computed once for every rendering ------------------------ */

/* The family of verdicts every rendering reads: each measured series against its scenario's
 * baseline at the seed's 10% (PKB_VERDICT_NEGLIGIBLE), what `pkbench compare FILE
 * --baseline-contender` gives. Errors as pkb_verdict_contenders. */
int pkb__scenarios_verdicts(const pkb_results *r, pkb_verdict_set *vs, char *err, size_t err_len);

/* One scenario's table: its measured baseline and the one unit of its time columns, the one its
 * smallest median reads best in. */
typedef struct pkb__table {
    const pkb_results_scenario *sc;
    const pkb_results_series *base; /* NULL when the scenario has no measured baseline */
    const char *unit;               /* "µs" */
    double scale;                   /* ns per unit */
} pkb__table;

/* Where a contender's series falls against its scenario's baseline, from the pair's verdict
 * (results/verdict.h) — the table's verdict column and the conclusions, in words.c's words. */
typedef enum pkb__bucket {
    PKB__NEGLIGIBLE = PKB_WORD_NEGLIGIBLE, /* a verdict's word (results/verdict.h) ... */
    PKB__NOT_DISTINGUISHABLE = PKB_WORD_NOT_DISTINGUISHABLE,
    PKB__SLOWER = PKB_WORD_SLOWER,
    PKB__FASTER = PKB_WORD_FASTER,
    PKB__UNDECIDABLE = PKB_WORD_UNDECIDABLE,
    PKB__UNTIMED = PKB_NWORDS, /* ... or no verdict: refused or failed */
    PKB__NO_BASELINE,          /* the scenario's baseline was not measured */
    PKB__NBUCKETS
} pkb__bucket;

/* One row: a measured series and its verdict. */
typedef struct pkb__row {
    const pkb_results_series *s;
    const pkb_verdict *v; /* against the baseline; NULL for the baseline and without one */
    pkb__bucket bucket;   /* pkb__bucket_of(v); PKB__NO_BASELINE when v is NULL */
    bool is_base;
} pkb__row;

void pkb__scenario_table(const pkb_results *r, const pkb_results_scenario *sc, pkb__table *t);
void pkb__scenario_row(const pkb__table *t,
                       const pkb_verdict_set *vs,
                       const pkb_results_series *s,
                       pkb__row *row);

/* The cells, as the Markdown and the terminal print them (times in t's unit, which the column
 * headers name): the median "611.2"; mean ± sd "608.5 ± 16.56" ("608.5 (n = 1)"), followed by
 * " µs" when `unit` is not NULL; the throughput at the median "1,636" ("n/a" without work);
 * Δ "+1.4%" / "baseline" / "n/a"; the 95% CI "[-2.2%, +4.5%]" ("" without a verdict); the verdict
 * "slower" (bold when `md`), "undecidable (too noisy)", "" without a verdict; the marks "1/8
 * disturbed; re-measured, attempt 2 kept" (with their footnotes when `md`), "" without any. */
void pkb__cell_median(pkb_buf *b, const pkb__table *t, const pkb_results_series *s);
void pkb__cell_mean_sd(pkb_buf *b,
                       const pkb__table *t,
                       const pkb_results_series *s,
                       const char *unit);
void pkb__cell_throughput(pkb_buf *b, const pkb_results_series *s);
void pkb__cell_delta(pkb_buf *b, const pkb__row *row);
void pkb__cell_ci(pkb_buf *b, const pkb__row *row);
void pkb__cell_verdict(pkb_buf *b, const pkb__row *row, bool md);
void pkb__cell_marks(pkb_buf *b, const pkb_results_series *s, bool md);

/* ---- words.c: the words of a verdict -------------------------------------------------------- */

/* A verdict's bucket (see pkb__bucket above), a series' (untimed, no baseline: v NULL when it is
 * the baseline or there is none, or v's), and a bucket's word ("slower", "not timed"). */
pkb__bucket pkb__bucket_of(const pkb_verdict *v);
pkb__bucket pkb__series_bucket(const pkb_results_series *s, const pkb_verdict *v);
const char *pkb__bucket_word(pkb__bucket k);

/* A ratio's CI as deltas: "[+1.2%, +3.4%]". */
void pkb__fmt_ci(pkb_buf *b, const pks_interval *ci);

#endif /* PKB_SUITES_SCENARIOS_VIEW_H */
