/*
 * The scenarios suite's tables, computed once: the verdicts of the file (results/verdict.h, the
 * family `pkbench compare FILE --baseline-contender` decides), a scenario's table (its baseline
 * and the one unit of its time columns) and the text of a row's cells. The Markdown tables
 * (report.c), the conclusions (verdict.c), the terminal tables and the per-series line `pkbench
 * run` prints (terminal.c) all read them from here, so the terminal can never show a number or a
 * word the report computes differently.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"

#include <math.h>

int pkb__scenarios_verdicts(const pkb_results *r, pkb_verdict_set *vs, char *err, size_t err_len)
{
    return pkb_verdict_contenders(
        r, NULL, &(pkb_verdict_options){.threshold = PKB_VERDICT_NEGLIGIBLE}, vs, err, err_len);
}

void pkb__scenario_table(const pkb_results *r, const pkb_results_scenario *sc, pkb__table *t)
{
    double smallest = INFINITY;
    for (size_t k = 0; k < sc->count; k++)
        if (r->series[sc->members[k]].measured)
            smallest = fmin(smallest, r->series[sc->members[k]].sum.median);
    t->sc = sc;
    t->base = sc->baseline >= 0 ? &r->series[sc->baseline] : NULL;
    t->unit = pkb_time_unit(isfinite(smallest) ? smallest : 1, &t->scale);
}

void pkb__scenario_row(const pkb__table *t,
                       const pkb_verdict_set *vs,
                       const pkb_results_series *s,
                       pkb__row *row)
{
    row->s = s;
    row->is_base = s == t->base;
    row->v = row->is_base ? NULL : pkb_verdict_set_find(vs, s);
    row->bucket = pkb__series_bucket(s, row->v);
}

void pkb__cell_median(pkb_buf *b, const pkb__table *t, const pkb_results_series *s)
{
    pkb_fmt_rate(b, s->sum.median / t->scale);
}

void pkb__cell_mean_sd(pkb_buf *b,
                       const pkb__table *t,
                       const pkb_results_series *s,
                       const char *unit)
{
    pkb_fmt_rate(b, s->sum.mean / t->scale);
    if (s->n >= 2) {
        pkb_buf_puts(b, " ± ");
        pkb_fmt_rate(b, s->sum.sd / t->scale);
    }
    if (unit != NULL)
        pkb_buf_printf(b, " %s", unit);
    if (s->n < 2)
        pkb_buf_puts(b, " (n = 1)");
}

void pkb__cell_throughput(pkb_buf *b, const pkb_results_series *s)
{
    if (s->work > 0)
        pkb_fmt_rate(b, s->work / (s->sum.median * 1e-9));
    else
        pkb_buf_puts(b, "n/a");
}

void pkb__cell_delta(pkb_buf *b, const pkb__row *row)
{
    if (row->is_base)
        pkb_buf_puts(b, "baseline");
    else if (row->v == NULL)
        pkb_buf_puts(b, "n/a");
    else
        pkb_fmt_delta(b, row->v->s.delta);
}

void pkb__cell_ci(pkb_buf *b, const pkb__row *row)
{
    if (row->v != NULL)
        pkb__fmt_ci(b, &row->v->s.ratio);
}

void pkb__cell_verdict(pkb_buf *b, const pkb__row *row, bool md)
{
    if (row->v == NULL)
        return;
    bool strong = md && (row->bucket == PKB__SLOWER || row->bucket == PKB__FASTER);
    pkb_buf_printf(b, strong ? "**%s**" : "%s", pkb__bucket_word(row->bucket));
    if (row->bucket == PKB__UNDECIDABLE)
        pkb_buf_printf(b, " (%s)", pks_undecidable_name(row->v->d.reason));
}

void pkb__cell_marks(pkb_buf *b, const pkb_results_series *s, bool md)
{
    if (s->noisy > 0)
        pkb_buf_printf(b, "%zu/%zu disturbed%s", s->noisy, s->n, md ? "[^noisy]" : "");
    if (s->attempts > 1)
        pkb_buf_printf(b, "%sre-measured, attempt %ld kept%s", s->noisy > 0 ? "; " : "",
                       s->attempt_used + 1, md ? "[^remeasured]" : "");
}
