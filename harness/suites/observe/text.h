/*
 * text — the observe report's shared pieces (text.c): a cell of the summary (observe.h) and
 * its numbers, and the report's number formats. Private to the suite's folder.
 */
#ifndef PKB_SUITES_OBSERVE_TEXT_H
#define PKB_SUITES_OBSERVE_TEXT_H

#include "common/buf.h"
#include "results/results.h"

#include <jansson.h>
#include <stdbool.h>

/* A number field of o (NaN when absent or not a number); the median of a {"median", "min",
 * "max"} field of c. */
double pkb__obs_num(const json_t *o, const char *key);
double pkb__obs_median(const json_t *c, const char *key);
/* The summary's cell of (hold, rate, observer), or NULL; whether a cell was measured. */
const json_t *pkb__obs_cell(const json_t *sum, double hold, double rate, const char *observer);
bool pkb__obs_measured(const json_t *c);
/* The grid's highest rate; a cell's length in seconds (from the file's configuration). */
double pkb__obs_top_rate(const json_t *sum);
double pkb__obs_duration(const pkb_results *r);

/* CPU seconds with enough digits for small ones ("n/a" for NaN); a {"median", "min", "max"}
 * object as "median (min–max)" times scale ("–" when not an object), of seconds or of
 * percentages; a count with thousands separators; a ratio as a percentage; a ratio as "3.2×"; two
 * ratios as "1.4×–1.9×" (one when they print alike). */
void pkb__obs_fmt_s(pkb_buf *b, double s);
void pkb__obs_fmt_range(pkb_buf *b, const json_t *r, double scale, const char *unit);
void pkb__obs_fmt_pct_range(pkb_buf *b, const json_t *r);
void pkb__obs_fmt_count(pkb_buf *b, double v);
void pkb__obs_fmt_pct(pkb_buf *b, double ratio);
void pkb__obs_fmt_times(pkb_buf *b, double ratio);
void pkb__obs_fmt_times_span(pkb_buf *b, double lo, double hi);

#endif /* PKB_SUITES_OBSERVE_TEXT_H */
