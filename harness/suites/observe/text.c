/*
 * text — what the observe report's two halves (report.c: gates and tables; conclude.c:
 * conclusions, the seed, the BPF programs) share: looking a cell up in the summary (observe.h)
 * and writing numbers the way the report writes them.
 */
#define _GNU_SOURCE
#include "suites/observe/text.h"

#include "common/md.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- looking things up --------------------------------------------------------------------- */

double pkb__obs_num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The median of a {"median", "min", "max"} field, NaN when absent. */
double pkb__obs_median(const json_t *c, const char *key)
{
    return pkb__obs_num(json_object_get(c, key), "median");
}

const json_t *pkb__obs_cell(const json_t *sum, double hold, double rate, const char *observer)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(sum, "cells"), i, c)
    {
        if (pkb__obs_num(c, "hold_ms") == hold && pkb__obs_num(c, "rate") == rate &&
            strcmp(json_string_value(json_object_get(c, "observer")), observer) == 0)
            return c;
    }
    return NULL;
}

bool pkb__obs_measured(const json_t *c)
{
    const char *st = json_string_value(json_object_get(c, "status"));
    return c != NULL && st != NULL && strcmp(st, "measured") == 0;
}

double pkb__obs_top_rate(const json_t *sum)
{
    const json_t *rates = json_object_get(sum, "rates");
    return json_number_value(json_array_get(rates, json_array_size(rates) - 1));
}

double pkb__obs_duration(const pkb_results *r)
{
    return pkb__obs_num(pkb_results_field(r, "observe", "config"), "duration_s");
}

/* ---- formatting ---------------------------------------------------------------------------- */

/* CPU seconds, with enough digits for the small ones. */
void pkb__obs_fmt_s(pkb_buf *b, double s)
{
    if (!isfinite(s))
        pkb_buf_puts(b, "n/a");
    else if (fabs(s) >= 10)
        pkb_buf_printf(b, "%.1f", s);
    else if (fabs(s) >= 0.1)
        pkb_buf_printf(b, "%.3f", s);
    else
        pkb_buf_printf(b, "%.4f", s);
}

/* "median (min–max)" of a range object, each number written by `fmt` (times scale), `unit`
 * after the median; "–" when there is none. */
static void fmt_range_with(
    pkb_buf *b, const json_t *r, double scale, const char *unit, void (*fmt)(pkb_buf *, double))
{
    if (!json_is_object(r)) {
        pkb_buf_puts(b, "–");
        return;
    }
    fmt(b, pkb__obs_num(r, "median") * scale);
    pkb_buf_puts(b, unit);
    pkb_buf_puts(b, " (");
    fmt(b, pkb__obs_num(r, "min") * scale);
    pkb_buf_puts(b, "–");
    fmt(b, pkb__obs_num(r, "max") * scale);
    pkb_buf_puts(b, ")");
}

void pkb__obs_fmt_range(pkb_buf *b, const json_t *r, double scale, const char *unit)
{
    fmt_range_with(b, r, scale, unit, pkb__obs_fmt_s);
}

void pkb__obs_fmt_pct_range(pkb_buf *b, const json_t *r)
{
    fmt_range_with(b, r, 1, "", pkb__obs_fmt_pct);
}

void pkb__obs_fmt_count(pkb_buf *b, double v)
{
    if (!isfinite(v)) {
        pkb_buf_puts(b, "–");
        return;
    }
    pkb_fmt_count(b, v);
}

void pkb__obs_fmt_pct(pkb_buf *b, double ratio)
{
    if (!isfinite(ratio))
        pkb_buf_puts(b, "–");
    else if (ratio > 0 && ratio < 0.001)
        pkb_buf_printf(b, "%.3f%%", ratio * 100);
    else
        pkb_buf_printf(b, "%.1f%%", ratio * 100);
}

void pkb__obs_fmt_times(pkb_buf *b, double ratio)
{
    if (!isfinite(ratio))
        pkb_buf_puts(b, "n/a");
    else
        pkb_buf_printf(b, ratio >= 10 ? "%.0f×" : "%.1f×", ratio);
}

/* "1.6×", or "1.4×–1.9×" when the two differ as printed. */
void pkb__obs_fmt_times_span(pkb_buf *b, double lo, double hi)
{
    pkb_buf lo_s = {0}, hi_s = {0};
    pkb__obs_fmt_times(&lo_s, lo);
    pkb__obs_fmt_times(&hi_s, hi);
    pkb_buf_puts(b, lo_s.data);
    if (strcmp(lo_s.data, hi_s.data) != 0)
        pkb_buf_printf(b, "–%s", hi_s.data);
    pkb_buf_free(&lo_s);
    pkb_buf_free(&hi_s);
}
