/*
 * Private to the phases suite's folder (report.c, figures.c, suite.c): the per-call view of every
 * series and the reconciliation rows, both computed from the results file alone, and the
 * report's two entry points.
 */
#ifndef PKB_SUITES_PHASES_VIEW_H
#define PKB_SUITES_PHASES_VIEW_H

#include "phases/attribution/phases.h"
#include "report/report.h"
#include "results/results.h"

#define PKB__MAX_PARTS 16

/* One series as the phases report reads it. */
typedef struct pkb__phase_series {
    const json_t *j;  /* its object in the file */
    const char *kind; /* "phase", "primitive", "lock" (inferred from the group when absent) */
    double calls;     /* calls per iteration (1 unless the file says otherwise) */
    double mean, sd, median; /* per call, ns (valid when the series was measured) */
} pkb__phase_series;

/* A base + parts against one composite. The base is os_spawn_plain unless the composite names
 * another phase series (`base` in the file): a step only a child can take has no child-less
 * primitive, so it is measured against the series before it, where it is the residual. */
typedef struct pkb__recon_row {
    size_t composite; /* index into the results' series */
    size_t base;      /* index of the base series (valid when complete) */
    const char *base_name;
    size_t parts[PKB__MAX_PARTS];
    size_t nparts;
    /* Complete when the composite, plain and every part were measured; otherwise `missing` names
     * the first term that was not and `why` says so ("not in this file", "refused: ..."). */
    bool complete;
    const char *missing;
    const char *why;
    pkb_reconciliation rec;
} pkb__recon_row;

typedef struct pkb__phases_view {
    pkb__phase_series *series; /* parallel to the results' series */
    long plain;                /* the measured baseline of group "phase", -1 when none */
    pkb__recon_row *rows;      /* every composite phase series, in file order */
    size_t nrows, ncomplete;
} pkb__phases_view;

/* Builds the view; checks the phases fields (kind, composition, calls_per_iteration, steps,
 * walk) and fails with -EBADMSG naming the first bad one. -ENOMEM. On error nothing to free. */
int pkb__phases_view_load(const pkb_results *r, pkb__phases_view *v, char *err, size_t err_len);
void pkb__phases_view_free(pkb__phases_view *v);

/* A series' name within its group: the file's `contender`. */
#define PKB__NAME(r, i) ((r)->series[i].contender)

/* The figure's name: its stem is <results name>-reconciliation. */
#define PKB__PHASES_FIGURE "reconciliation"

/* Series i against os_spawn_plain, per call: the difference of the means in ns and as a
 * fraction of plain's mean. false when plain was not measured, or i is plain or not measured. */
bool pkb__phase_vs_plain(
    const pkb_results *r, const pkb__phases_view *v, size_t i, double *diff_ns, double *fraction);

/* Cells the Markdown and the terminal share (report.c): "12.345 µs", "12.345 ± 1.234 µs" (or
 * "12.345 µs, n = 1") of a series' per-call numbers, and a signed "+3.000 µs". */
void pkb__us(pkb_buf *b, double ns);
void pkb__mean_sd_us(pkb_buf *b, const pkb_results_series *s, const pkb__phase_series *p);
void pkb__signed_us(pkb_buf *b, double ns);
/* Series i against os_spawn_plain: "+12.000 µs (+12.0%)"; "baseline" for plain itself; "n/a"
 * without a measured plain. */
void pkb__vs_plain(const pkb_results *r, const pkb__phases_view *v, size_t i, pkb_buf *b);

/* The targets among phase series (targets.c): a "## Targets" section for the Markdown, a table
 * for the terminal; nothing when the file has none of their series. */
void pkb__phases_md_targets(const pkb_results *r, pkb_buf *b);
void pkb__phases_term_targets(const pkb_results *r, bool color, pkb_buf *out);

/* The terminal view (terminal.c): the phase table and the reconciliation; and one series' line
 * (per call), for `pkbench run`. */
int pkb__phases_terminal(const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len);
void pkb__phases_series_line(const pkb_results *r, size_t index, pkb_buf *out);

/* The Markdown report; -EBADMSG (a malformed phases field, named in err) or -ENOMEM. */
int pkb__phases_markdown(const pkb_results *r, bool plots, pkb_buf *out, char *err, size_t err_len);
/* The stacked-bar figure, when at least one composite could be reconciled. */
int pkb__phases_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len);

#endif /* PKB_SUITES_PHASES_VIEW_H */
