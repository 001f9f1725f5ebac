/*
 * The scenarios suite's numbers, computed once: a row of a scenario's table (throughput, delta
 * against the scenario's baseline, the verdict against the negligible-overhead threshold) and
 * the text of its cells. The Markdown table (report.c), the conclusions (verdict.c), the terminal
 * tables and the per-series line `pkbench run` prints (terminal.c) all read them from here, so
 * the terminal can never show a number the report computes differently.
 */
#include "suites/scenarios/report.h"

#include "common/md.h"

#include <math.h>

double pkb__delta(const pkb_results_series *s, const pkb_results_series *base)
{
    return (s->sum.mean - base->sum.mean) / base->sum.mean;
}

pkb__verdict pkb__delta_verdict(double delta)
{
    if (isnan(delta))
        return PKB__NO_BASELINE;
    return fabs(delta) <= PKB_REPORT_NEGLIGIBLE ? PKB__NEGLIGIBLE
           : delta > 0                          ? PKB__SLOWER
                                                : PKB__FASTER;
}

const char *pkb__verdict_name(pkb__verdict v)
{
    switch (v) {
    case PKB__IS_BASELINE:
        return "baseline";
    case PKB__NEGLIGIBLE:
        return "negligible";
    case PKB__SLOWER:
        return "slower";
    case PKB__FASTER:
        return "faster";
    case PKB__NO_BASELINE:
        break;
    }
    return "";
}

void pkb__scenario_row(const pkb_results *r,
                       const pkb_results_scenario *sc,
                       const pkb_results_series *s,
                       pkb__row *row)
{
    row->s = s;
    row->base = sc->baseline >= 0 ? &r->series[sc->baseline] : NULL;
    row->throughput = s->work > 0 ? s->work / (s->sum.mean * 1e-9) : NAN;
    row->delta = NAN;
    if (row->base == s) {
        row->verdict = PKB__IS_BASELINE;
        return;
    }
    if (row->base != NULL)
        row->delta = pkb__delta(s, row->base);
    row->verdict = pkb__delta_verdict(row->delta);
}

void pkb__cell_mean_sd(pkb_buf *b, const pkb_results_series *s)
{
    double scale;
    const char *unit = pkb_time_unit(s->sum.mean, &scale);
    if (s->n >= 2)
        pkb_buf_printf(b, "%.3f ± %.3f %s", s->sum.mean / scale, s->sum.sd / scale, unit);
    else
        pkb_buf_printf(b, "%.3f %s, n = 1", s->sum.mean / scale, unit);
}

void pkb__cell_median(pkb_buf *b, const pkb_results_series *s)
{
    double scale;
    const char *unit = pkb_time_unit(s->sum.mean, &scale); /* the mean's unit: rows compare */
    pkb_buf_printf(b, "%.3f %s", s->sum.median / scale, unit);
}

void pkb__cell_throughput(pkb_buf *b, const pkb__row *row, bool md)
{
    if (isnan(row->throughput)) {
        pkb_buf_puts(b, "n/a");
        return;
    }
    pkb_fmt_rate(b, row->throughput);
    pkb_buf_puts(b, " ");
    if (md)
        pkb_md_text(b, row->s->unit);
    else
        pkb_buf_puts(b, row->s->unit);
}

void pkb__cell_delta(pkb_buf *b, const pkb__row *row)
{
    if (row->verdict == PKB__IS_BASELINE)
        pkb_buf_puts(b, "baseline");
    else if (row->base != NULL)
        pkb_fmt_delta(b, row->delta);
    else
        pkb_buf_puts(b, "n/a");
}
