/*
 * parse — strict numbers for command-line values (parse.h). strtod/strtol do the reading; the
 * checks around them reject what they would silently accept (leading spaces, a partial parse,
 * ERANGE, "nan", "inf", hexadecimal floats).
 */
#include "common/parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* strto* skip leading white space and accept "0x" floats and "nan"/"inf": a value an option
 * takes starts with a digit, a sign or a point. */
static bool starts_like_a_number(const char *s)
{
    return (*s >= '0' && *s <= '9') || *s == '-' || *s == '+' || *s == '.';
}

static bool has_hex_prefix(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

bool pkb_parse_number(const char *s, bool percent, double *out)
{
    if (s == NULL || !starts_like_a_number(s) || has_hex_prefix(s))
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno != 0 || !isfinite(v))
        return false;
    if (percent && *end == '%')
        end++;
    if (*end != '\0')
        return false;
    *out = v;
    return true;
}

bool pkb_parse_count(const char *s, long min, long max, long *out)
{
    if (s == NULL || !((*s >= '0' && *s <= '9') || *s == '-'))
        return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool pkb_parse_duration(const char *s, double *seconds)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"", 1}};
    size_t len = strlen(s);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t k = strlen(units[i].unit);
        if (len <= k || strcmp(s + len - k, units[i].unit) != 0)
            continue;
        char num[64];
        if (len - k >= sizeof num)
            return false;
        memcpy(num, s, len - k);
        num[len - k] = '\0';
        double v;
        if (!pkb_parse_number(num, false, &v) || v < 0)
            return false;
        *seconds = v * units[i].scale;
        return true;
    }
    return false;
}
