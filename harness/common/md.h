/*
 * md — the pieces every Markdown (and terminal) renderer shares: a time's best unit, a delta and a
 * rate as the seed document prints them, text and names made safe for a table cell, and a JSON
 * value or object as cells. Used by the report, the suites' report modules and `pkbench compare`.
 */
#ifndef PKB_COMMON_MD_H
#define PKB_COMMON_MD_H

#include "common/buf.h"

#include <jansson.h>

/* The unit a time of `ns` reads best in (ns, µs, ms, s): its name, and ns per unit in *scale. */
const char *pkb_time_unit(double ns, double *scale);

/* Text for a sentence or a table cell: pipes escaped, newlines flattened. */
void pkb_md_text(pkb_buf *b, const char *s);
/* A name as inline code (backticks inside become quotes). */
void pkb_md_code(pkb_buf *b, const char *s);
/* A delta as "+2.3%": one decimal, never "-0.0%". */
void pkb_fmt_delta(pkb_buf *b, double d);
/* A finite number rounded to an integer, thousands separated: 1,032,000 / -1,234. */
void pkb_fmt_count(pkb_buf *b, double v);
/* A rate with four significant digits, thousands separated: 1,634 / 469.3 / 17.49 / 1.234;
 * "n/a" when not finite. */
void pkb_fmt_rate(pkb_buf *b, double v);

/* ---- numbers as a reader wants them: a unit chosen for the size, 3 or 4 significant figures -- */

/* v rounded to `digits` significant figures (1 to 15), without an exponent, thousands separated
 * from 1,000 on: 0.0123 / 1.235 / 81,800 (5 digits at 4); "n/a" when not finite. */
void pkb_fmt_sig(pkb_buf *b, double v, int digits);
/* A time in the unit its size reads best in, to 4 significant figures: "81.80 ms", "611.2 µs",
 * "2.149 ms", "12.35 ns", "1.000 µs" (999.96 ns rounds up into the next unit), "4,321 s"; a
 * negative time keeps its sign ("-512.0 ns"); "n/a" when not finite. */
void pkb_fmt_time(pkb_buf *b, double ns);
/* The same with a sign always: "+1.234 µs", "-512.0 ns", "+0 ns". */
void pkb_fmt_time_signed(pkb_buf *b, double ns);
/* mean ± sd in the mean's unit, the sd to 3 significant figures: "81.80 ± 2.88 ms",
 * "2.163 ± 0.0490 ms"; an sd that is not finite (one sample) leaves "81.80 ms". */
void pkb_fmt_time_sd(pkb_buf *b, double mean_ns, double sd_ns);
/* A ratio: 4 significant figures from 1 on, 3 below: "1.053×", "0.812×", "12.34×". */
void pkb_fmt_ratio(pkb_buf *b, double r);

/* A JSON value as a table cell: strings as text without surrounding blanks ("(empty)" when
 * nothing is left), numbers shortest, null as "n/a", arrays joined with ", ", objects as
 * compact JSON in backticks. */
void pkb_md_json_value(pkb_buf *b, const json_t *v);
/* A two-column `field | value` table of every field of a JSON object, in the object's order; the
 * fields of an object inside it become rows of their own ("disturbance.steal_above"). */
void pkb_md_object_table(pkb_buf *b, const json_t *obj);

#endif /* PKB_COMMON_MD_H */
