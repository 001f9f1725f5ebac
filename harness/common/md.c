/*
 * md — shared Markdown and number formatting (md.h). Everything here appends to a pkb_buf and
 * never fails on its own: an allocation failure is latched in the buffer.
 */
#define _GNU_SOURCE
#include "common/md.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pkb_time_unit(double ns, double *scale)
{
    static const struct {
        double below, scale;
        const char *name;
    } units[] = {{1e3, 1, "ns"}, {1e6, 1e3, "µs"}, {1e9, 1e6, "ms"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ns < units[i].below) {
            *scale = units[i].scale;
            return units[i].name;
        }
    }
    *scale = 1e9;
    return "s";
}

/* A pipe would end the cell, a newline the row. */
void pkb_md_text(pkb_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            pkb_buf_puts(b, "\\|");
        else if (*s == '\n' || *s == '\r')
            pkb_buf_puts(b, " ");
        else
            pkb_buf_printf(b, "%c", *s);
    }
}

void pkb_md_code(pkb_buf *b, const char *s)
{
    pkb_buf_puts(b, "`");
    for (; *s; s++) {
        if (*s == '|')
            pkb_buf_puts(b, "\\|");
        else if (*s == '\n' || *s == '\r' || *s == '`')
            pkb_buf_puts(b, *s == '`' ? "'" : " ");
        else
            pkb_buf_printf(b, "%c", *s);
    }
    pkb_buf_puts(b, "`");
}

void pkb_fmt_delta(pkb_buf *b, double d)
{
    double pct = d * 100;
    if (fabs(pct) < 0.05)
        pct = 0;
    pkb_buf_printf(b, "%+.1f%%", pct);
}

void pkb_fmt_count(pkb_buf *b, double v)
{
    char digits[64];
    int n = snprintf(digits, sizeof digits, "%.0f", v);
    for (int i = 0; i < n; i++) {
        if (i > 0 && digits[i - 1] != '-' && (n - i) % 3 == 0)
            pkb_buf_puts(b, ",");
        pkb_buf_printf(b, "%c", digits[i]);
    }
}

void pkb_fmt_rate(pkb_buf *b, double v)
{
    if (!isfinite(v)) {
        pkb_buf_puts(b, "n/a");
        return;
    }
    if (v < 1000) {
        pkb_buf_printf(b, "%.*f", v >= 100 ? 1 : v >= 10 ? 2 : 3, v);
        return;
    }
    pkb_fmt_count(b, v);
}

/* v rounded to `digits` significant figures, and the decimals that shows them. */
static double round_sig(double v, int digits, int *decimals)
{
    if (v == 0) {
        *decimals = digits - 1;
        return 0;
    }
    int e = (int)floor(log10(fabs(v)));
    double scale = pow(10, digits - 1 - e);
    double r = round(v * scale) / scale;
    if (r != 0 && (int)floor(log10(fabs(r))) > e) /* 999.96 -> 1000.0: one digit more */
        e++;
    *decimals = digits - 1 - e > 0 ? digits - 1 - e : 0;
    return r;
}

void pkb_fmt_sig(pkb_buf *b, double v, int digits)
{
    if (!isfinite(v)) {
        pkb_buf_puts(b, "n/a");
        return;
    }
    digits = digits < 1 ? 1 : digits > 15 ? 15 : digits;
    int decimals;
    double r = round_sig(v, digits, &decimals);
    if (fabs(r) >= 1000) {
        pkb_fmt_count(b, r);
        return;
    }
    pkb_buf_printf(b, "%.*f", decimals, r == 0 ? 0.0 : r); /* never "-0" */
}

/* The unit of a time of magnitude `ns` once rounded to 4 significant figures. */
static const char *time_unit_rounded(double ns, double *scale)
{
    const char *unit = pkb_time_unit(fabs(ns), scale);
    int decimals;
    double r = fabs(round_sig(ns / *scale, 4, &decimals));
    if (r >= 1000 && *scale < 1e9)
        unit = pkb_time_unit(*scale * 1000, scale); /* the next unit up */
    return unit;
}

void pkb_fmt_time_sd(pkb_buf *b, double mean_ns, double sd_ns)
{
    if (!isfinite(mean_ns)) {
        pkb_buf_puts(b, "n/a");
        return;
    }
    double scale;
    const char *unit = time_unit_rounded(mean_ns, &scale);
    pkb_fmt_sig(b, mean_ns / scale, 4);
    if (isfinite(sd_ns)) {
        pkb_buf_puts(b, " ± ");
        pkb_fmt_sig(b, sd_ns / scale, 3);
    }
    pkb_buf_printf(b, " %s", unit);
}

void pkb_fmt_time(pkb_buf *b, double ns)
{
    pkb_fmt_time_sd(b, ns, NAN); /* no sd: the time alone */
}

void pkb_fmt_time_signed(pkb_buf *b, double ns)
{
    if (isfinite(ns) && ns >= 0)
        pkb_buf_puts(b, "+");
    pkb_fmt_time(b, ns);
}

void pkb_fmt_ratio(pkb_buf *b, double r)
{
    pkb_fmt_sig(b, r, isfinite(r) && fabs(r) < 1 ? 3 : 4);
    if (isfinite(r))
        pkb_buf_puts(b, "×");
}

void pkb_md_json_value(pkb_buf *b, const json_t *v)
{
    if (json_is_string(v)) {
        /* A cell shows the text, not the blanks around it (a compiler_flags of " -O3"). */
        const char *t = json_string_value(v);
        size_t n = strlen(t);
        while (*t == ' ' || *t == '\t')
            t++, n--;
        while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
            n--;
        char *trimmed = strndup(t, n);
        if (trimmed == NULL) {
            b->failed = true;
            return;
        }
        pkb_md_text(b, n > 0 ? trimmed : "(empty)");
        free(trimmed);
    } else if (json_is_integer(v)) {
        pkb_buf_printf(b, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        pkb_buf_printf(b, "%.15g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        pkb_buf_puts(b, json_is_true(v) ? "true" : "false");
    } else if (json_is_null(v)) {
        pkb_buf_puts(b, "n/a"); /* not known on this machine: never a literal null */
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item)
        {
            if (i > 0)
                pkb_buf_puts(b, ", ");
            pkb_md_json_value(b, item);
        }
    } else {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (text == NULL) {
            b->failed = true;
            return;
        }
        pkb_buf_puts(b, "`");
        pkb_md_text(b, text);
        pkb_buf_puts(b, "`");
        free(text);
    }
}

/* The rows of obj, a nested object's fields as "outer.inner" rows rather than a JSON blob. */
static void object_rows(pkb_buf *b, const char *prefix, const json_t *obj)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        char path[256];
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", key);
        if (json_is_object(v) && json_object_size(v) > 0 && prefix[0] == '\0') {
            object_rows(b, path, v);
            continue;
        }
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, path);
        pkb_buf_puts(b, " | ");
        pkb_md_json_value(b, v);
        pkb_buf_puts(b, " |\n");
    }
}

void pkb_md_object_table(pkb_buf *b, const json_t *obj)
{
    pkb_buf_puts(b, "| field | value |\n|---|---|\n");
    object_rows(b, "", obj);
}
