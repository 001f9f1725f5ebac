/*
 * parse — the strict number parsers behind every command-line option that takes a value. Each
 * accepts the whole string or nothing: no leading blanks, no trailing junk, no overflow, no NaN
 * or infinity, so `--alpha 0.05x` or `--iterations 1e3` is an error naming the option rather
 * than a silent 0.05 or 1.
 */
#ifndef PKB_COMMON_PARSE_H
#define PKB_COMMON_PARSE_H

#include <stdbool.h>

/* A finite decimal number, all of `s`; with `percent`, one trailing '%' is allowed (and ignored:
 * "5%" reads 5). Returns true and sets *out, or false. */
bool pkb_parse_number(const char *s, bool percent, double *out);

/* A decimal integer in [min, max], all of `s` (no sign but '-' for a negative min). */
bool pkb_parse_count(const char *s, long min, long max, long *out);

/* A duration: a number of seconds, or a number with one unit, ms, s, m or h ("300", "90s",
 * "5m", "1.5h"); finite and not negative. Returns true and sets *seconds, or false. */
bool pkb_parse_duration(const char *s, double *seconds);

#endif /* PKB_COMMON_PARSE_H */
