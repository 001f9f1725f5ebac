/*
 * The scenarios suite's report: the seed document's "Measured results" table per scenario and
 * its "Conclusions", worded from the numbers:
 *
 *   - the median and mean ± sd are stats.h's pks_summarize of the series' samples_ns (one value
 *     per repetition: the mean wall time of one iteration); every time column of a scenario's
 *     table is in one unit, the one its smallest median reads best in;
 *   - throughput = work_per_iteration / median time, in the series' unit (runs/s, MiB/s, ...);
 *   - Δ = the median per-round ratio to the baseline − 1 (paired by round; apart: median /
 *     baseline median − 1) with its 95% bootstrap CI and the verdict, all from
 *     results/verdict.h against the measured baseline series of the same scenario: the numbers
 *     `pkbench compare FILE --baseline-contender posix_spawn` prints for this file;
 *   - the targets are ratios processkit / other (paired by round as Δ), decided on their CI.
 *
 * Nothing is typed in: change the file and every number and verdict follows. The verdicts, a
 * table's unit and its cells come from table.c (shared with the terminal view), the conclusions
 * and targets are worded in verdict.c (both in words.c's words), the figures drawn from
 * figures.c's data. This file reads top-down: the report, then its sections in order.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"
#include "contenders/contender.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void md_how_to_read(const pkb_results *r, const pkb_verdict_set *vs, pkb_buf *b);
static void md_contenders(const pkb_results *r, pkb_buf *b);
static void md_scenario(const pkb_results *r,
                        const pkb_results_scenario *sc,
                        const pkb_verdict_set *vs,
                        bool plots,
                        pkb_buf *b);
static void md_table_head(const pkb_results *r, const pkb__table *t, pkb_buf *b);
static void
md_row(const pkb__table *t, const pkb_verdict_set *vs, const pkb_results_series *s, pkb_buf *b);
static void md_not_timed(const pkb_results *r, const pkb_results_scenario *sc, pkb_buf *b);
static void md_plot_links(const pkb_results *r, const pkb_results_scenario *sc, pkb_buf *b);

/* The report: title, how to read it, the measured results per scenario, the conclusions and
 * targets (verdict.c), the appendix (report/report.h). */
int pkb__scenarios_markdown(const pkb_results *r, bool plots, pkb_buf *b, char *err, size_t err_len)
{
    pkb_verdict_set vs;
    int rc = pkb__scenarios_verdicts(r, &vs, err, err_len);
    if (rc != 0)
        return rc;
    pkb_md_title(r, b);
    md_how_to_read(r, &vs, b);
    pkb_buf_puts(b, "## Measured results\n\n");
    md_contenders(r, b);
    if (r->nscenarios == 0)
        pkb_buf_puts(b, "The file holds no series.\n\n");
    for (size_t i = 0; i < r->nscenarios; i++)
        md_scenario(r, &r->scenarios[i], &vs, plots, b);
    pkb__md_seed(r, b);
    pkb__md_scale(r, plots, b);
    pkb__md_conclusions(r, &vs, b);
    pkb__md_targets(r, b);
    pkb_md_appendix(r, b);
    pkb_verdict_set_free(&vs);
    return b->failed ? pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file) : 0;
}

static void md_how_to_read(const pkb_results *r, const pkb_verdict_set *vs, pkb_buf *b)
{
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t i = 0; i < r->nseries; i++) {
        if (r->series[i].measured) {
            lo = r->series[i].n < lo ? r->series[i].n : lo;
            hi = r->series[i].n > hi ? r->series[i].n : hi;
        }
    }
    pkb_buf_puts(b, "## How to read it\n\n");
    if (hi == 0)
        pkb_buf_puts(b, "No series was measured. ");
    else if (lo == hi)
        pkb_buf_printf(b, "Each measured series has %zu repetitions. ", lo);
    else
        pkb_buf_printf(b, "Each measured series has %zu to %zu repetitions. ", lo, hi);
    pkb_buf_puts(b, "A repetition's value is the mean wall time of one iteration: start the child "
                    "(or children), feed stdin, consume the output, reap. The table gives the "
                    "median of those values, which a few disturbed repetitions cannot move much, "
                    "and the mean ± sample standard deviation the seed document gives; every time "
                    "column of a table is in the unit its header names. Throughput is the work of "
                    "one iteration divided by the median time. ");
    size_t paired = 0;
    for (size_t i = 0; i < vs->n; i++)
        paired += vs->v[i].paired;
    pkb_buf_puts(b, "Δ compares a series with the baseline contender of the same scenario in this "
                    "same run (negative is faster). ");
    if (paired > 0) {
        pkb_buf_puts(b, "The rounds took one repetition of every series each, so ");
        if (paired < vs->n)
            pkb_buf_printf(b, "in %zu of the %zu pairs ", paired, vs->n);
        pkb_buf_puts(b, "a series and its baseline are *paired by round*: Δ is the median of "
                        "their per-round ratios − 1, which cancels what the machine did to both "
                        "within a round, with a 95% bootstrap confidence interval over the "
                        "rounds. ");
    }
    if (paired > 0 && paired < vs->n)
        pkb_buf_printf(b,
                       "The other pairs, with fewer than %d rounds in common (a re-measured "
                       "series), are compared apart: ",
                       PKS_MIN_SAMPLES);
    else if (paired == 0 && vs->n > 0)
        pkb_buf_puts(b, "The samples were not taken in rounds together, so each pair is "
                        "compared apart: ");
    if (paired < vs->n || vs->n == 0)
        pkb_buf_puts(b, "Δ is median / baseline median − 1, with the 95% bootstrap confidence "
                        "interval of that ratio. ");
    pkb_buf_printf(
        b,
        "The verdict is `pkbench compare`'s on the pair: *slower* or *faster* when the p after "
        "Holm's correction (%s) is below 0.05 and |Δ| exceeds %.0f%% (and the file's noise "
        "floor, when it has one), *negligible* when Δ is within that bar, *not distinguishable* "
        "when a larger Δ is not significant, *undecidable* when a side has fewer than %d "
        "repetitions or a robust coefficient of variation (1.4826 · MAD / median%s) above "
        "%.0f%%. Absolute times depend on the machine and its load; compare contenders only "
        "within one run.\n\n",
        paired == 0       ? "Mann-Whitney's test"
        : paired == vs->n ? "Wilcoxon's signed-rank test on the log ratios"
                          : "Wilcoxon's signed-rank test on the log ratios when paired, "
                            "Mann-Whitney's otherwise",
        PKB_VERDICT_NEGLIGIBLE * 100, PKS_MIN_SAMPLES,
        paired > 0 ? "; paired, the half-width of the ratio's 95% CI in its place" : "",
        PKS_DEFAULT_CV_LIMIT * 100);
}

/* "- `contender`", an item of the list `heading` opens before its first one (*any). */
static void item(pkb_buf *b, bool *any, const char *heading, const char *contender)
{
    if (!*any)
        pkb_buf_puts(b, heading);
    *any = true;
    pkb_buf_puts(b, "- ");
    pkb_md_code(b, contender);
}

/* Each contender's one-line description (the first series that gives one), in file order. */
static void md_contenders(const pkb_results *r, pkb_buf *b)
{
    bool any = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(r->series[k].contender, s->contender) == 0 &&
                   r->series[k].description != NULL;
        if (seen || s->description == NULL)
            continue;
        item(b, &any, "Contenders:\n\n", s->contender);
        pkb_buf_puts(b, ": ");
        pkb_md_text(b, s->description);
        pkb_buf_puts(b, "\n");
    }
    if (any)
        pkb_buf_puts(b, "\n");
}

static void md_scenario(const pkb_results *r,
                        const pkb_results_scenario *sc,
                        const pkb_verdict_set *vs,
                        bool plots,
                        pkb_buf *b)
{
    pkb_buf_puts(b, "### ");
    pkb_md_code(b, sc->name);
    pkb_buf_puts(b, "\n\n");
    int children = 0, known = pkb_scenario_parse(sc->name, &children);
    if (known >= 0) {
        pkb_buf_puts(b, "Workload: ");
        if (known == PKB_FAN_OUT_SCALE)
            pkb_buf_printf(b, "N = %d: ", children);
        pkb_md_text(b, pkb_scenario_description((pkb_scenario)known));
        pkb_buf_puts(b, ".\n\n");
    }
    pkb__table t;
    pkb__scenario_table(r, sc, &t);
    if (sc->measured > 0)
        md_table_head(r, &t, b);
    for (size_t k = 0; k < sc->count; k++)
        if (r->series[sc->members[k]].measured)
            md_row(&t, vs, &r->series[sc->members[k]], b);
    if (sc->measured > 0)
        pkb_buf_puts(b, "\n");
    bool controls_only = sc->count > 0;
    for (size_t k = 0; k < sc->count; k++)
        controls_only &= r->series[sc->members[k]].control && !r->series[sc->members[k]].baseline;
    if (sc->measured > 0 && t.base == NULL && controls_only)
        pkb_buf_puts(b, "Control series only: nothing to compare them with in one run. "
                        "`pkbench compare` measures the machine's drift between two runs from "
                        "them.\n\n");
    else if (sc->measured > 0 && t.base == NULL)
        pkb_buf_puts(b, "No measured baseline in this scenario: no deltas.\n\n");
    md_not_timed(r, sc, b);
    if (plots && sc->measured > 0)
        md_plot_links(r, sc, b);
}

/* The table's header: every time column in the table's unit, throughput in the series' unit. */
static void md_table_head(const pkb_results *r, const pkb__table *t, pkb_buf *b)
{
    pkb_buf_printf(b, "| contender | median (%s) | mean ± sd (%s) | throughput (", t->unit,
                   t->unit);
    pkb_md_text(b, r->series[t->sc->members[0]].unit);
    pkb_buf_puts(b, ") | Δ median vs ");
    if (t->base != NULL)
        pkb_md_code(b, t->base->contender);
    else
        pkb_buf_puts(b, "baseline");
    pkb_buf_puts(b, " | 95% CI | verdict |\n|---|---:|---:|---:|---:|---:|---|\n");
}

static void
md_row(const pkb__table *t, const pkb_verdict_set *vs, const pkb_results_series *s, pkb_buf *b)
{
    pkb__row row;
    pkb__scenario_row(t, vs, s, &row);
    pkb_buf_puts(b, "| ");
    pkb_md_code(b, s->contender);
    if (s->side != NULL) /* a file of pkbench ab: which build */
        pkb_buf_printf(b, " [%s]", s->side);
    if (s->noisy > 0 || s->attempts > 1) {
        pkb_buf_puts(b, " (");
        pkb__cell_marks(b, s, true);
        pkb_buf_puts(b, ")");
    }
    pkb_buf_puts(b, " | ");
    pkb__cell_median(b, t, s);
    pkb_buf_puts(b, " | ");
    pkb__cell_mean_sd(b, t, s, NULL);
    pkb_buf_puts(b, " | ");
    pkb__cell_throughput(b, s);
    pkb_buf_puts(b, " | ");
    pkb__cell_delta(b, &row);
    if (row.v == NULL) { /* no CI, no verdict: empty cells */
        pkb_buf_puts(b, " | | |\n");
        return;
    }
    pkb_buf_puts(b, " | ");
    pkb__cell_ci(b, &row);
    pkb_buf_puts(b, " | ");
    pkb__cell_verdict(b, &row, true);
    pkb_buf_puts(b, " |\n");
}

static void md_not_timed(const pkb_results *r, const pkb_results_scenario *sc, pkb_buf *b)
{
    bool any = false;
    for (size_t k = 0; k < sc->count; k++) {
        const pkb_results_series *s = &r->series[sc->members[k]];
        if (s->measured)
            continue;
        item(b, &any, "Not timed:\n\n", s->contender);
        if (strcmp(s->status, "measured") == 0) {
            pkb_buf_puts(b, ": measured, but the file holds no samples\n");
            continue;
        }
        pkb_buf_printf(b, ": %s — ", s->status);
        pkb_md_text(b, s->reason ? s->reason : "no reason given");
        pkb_buf_puts(b, "\n");
    }
    if (any)
        pkb_buf_puts(b, "\n");
}

static void md_plot_links(const pkb_results *r, const pkb_results_scenario *sc, pkb_buf *b)
{
    char stem[256];
    pkb_figure_stem(r, sc->name, stem, sizeof stem);
    pkb_buf alt = {0};
    pkb_md_code(&alt, sc->name);
    pkb_buf_puts(&alt, ": median time per iteration by contender, every repetition shown");
    pkb_md_figure(b, stem, alt.failed ? "" : alt.data);
    b->failed |= alt.failed;
    pkb_buf_free(&alt);
}
