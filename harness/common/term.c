/*
 * term — the terminal's pieces (term.h): the colour decision, SGR-wrapped text, display widths,
 * durations, and the aligned table every terminal view prints its numbers in.
 *
 * A table keeps its cells as separately allocated strings with a tone each; rendering measures
 * every column first (in code points, so "µs" counts two), then writes each row with the padding
 * outside any colour sequence, so `grep`, `cut` or a reader's eye sees the same columns with and
 * without colour. Trailing padding is never written: the last cell of a line ends the line.
 */
#define _GNU_SOURCE
#include "common/term.h"

#include "common/buf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool pkb_term_wants_color(int fd)
{
    const char *no_color = getenv("NO_COLOR");
    if (no_color != NULL && no_color[0] != '\0')
        return false;
    const char *term = getenv("TERM");
    if (term == NULL || term[0] == '\0' || strcmp(term, "dumb") == 0)
        return false;
    return isatty(fd) == 1;
}

static const char *sgr(pkb_tone tone)
{
    switch (tone) {
    case PKB_TONE_BOLD:
        return "\033[1m";
    case PKB_TONE_DIM:
        return "\033[2m";
    case PKB_TONE_GOOD:
        return "\033[32m";
    case PKB_TONE_BAD:
        return "\033[31m";
    case PKB_TONE_WARN:
        return "\033[33m";
    case PKB_TONE_PLAIN:
        break;
    }
    return NULL;
}

void pkb_term_puts(pkb_buf *b, bool color, pkb_tone tone, const char *s)
{
    const char *on = color ? sgr(tone) : NULL;
    if (on != NULL)
        pkb_buf_printf(b, "%s%s\033[0m", on, s);
    else
        pkb_buf_puts(b, s);
}

void pkb_term_line(pkb_buf *b, bool color, pkb_tone tone, const char *fmt, ...)
{
    pkb_buf t = {0};
    va_list ap;
    va_start(ap, fmt);
    pkb_buf_vprintf(&t, fmt, ap);
    va_end(ap);
    pkb_term_puts(b, color, tone, t.failed || t.data == NULL ? "" : t.data);
    pkb_buf_puts(b, "\n");
    b->failed |= t.failed;
    pkb_buf_free(&t);
}

size_t pkb_text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80; /* count lead bytes, not continuations */
    return w;
}

void pkb_fmt_duration(char *out, size_t cap, double seconds)
{
    if (!isfinite(seconds) || seconds < 0) {
        snprintf(out, cap, "?");
        return;
    }
    long s = seconds > 0 && seconds < 1 ? 1 : lround(seconds); /* a moment is "1s", not "0s" */
    if (s < 60)
        snprintf(out, cap, "%lds", s);
    else if (s < 3600)
        snprintf(out, cap, "%ldm%02lds", s / 60, s % 60);
    else
        snprintf(out, cap, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
}

/* ==== Tables ================================================================================== */

struct cell {
    char *text;
    pkb_tone tone;
};

struct pkb_table {
    size_t ncols;
    char align[32];
    struct cell *cells;
    size_t n, cap;
    bool failed;
};

pkb_table *pkb_table_new(const char *align)
{
    size_t ncols = align != NULL ? strlen(align) : 0;
    if (ncols == 0 || ncols >= sizeof((pkb_table *)0)->align || strspn(align, "lr") != ncols)
        return NULL;
    pkb_table *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->ncols = ncols;
    memcpy(t->align, align, ncols + 1);
    return t;
}

void pkb_table_heads(pkb_table *t, ...)
{
    va_list ap;
    va_start(ap, t);
    for (const char *name; (name = va_arg(ap, const char *)) != NULL;)
        pkb_table_add(t, 0, "%s", name);
    va_end(ap);
}

static bool reserve(pkb_table *t)
{
    struct cell *cells = pkb_grow(t->cells, &t->cap, t->n + 1, sizeof *cells, 64);
    if (cells == NULL)
        return false;
    t->cells = cells;
    return true;
}

void pkb_table_add(pkb_table *t, pkb_tone tone, const char *fmt, ...)
{
    if (t == NULL || t->failed)
        return;
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(t)) {
        free(n < 0 ? NULL : text);
        t->failed = true;
        return;
    }
    for (char *p = text; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    t->cells[t->n++] = (struct cell){text, tone};
}

void pkb_table_end_row(pkb_table *t)
{
    while (t != NULL && !t->failed && t->n % t->ncols != 0)
        pkb_table_add(t, PKB_TONE_PLAIN, "%s", "");
}

size_t pkb_table_rows(const pkb_table *t)
{
    return t == NULL ? 0 : (t->n + t->ncols - 1) / t->ncols;
}

/* The width of every column: its widest cell. */
static void measure(const pkb_table *t, size_t *width)
{
    memset(width, 0, t->ncols * sizeof *width);
    for (size_t i = 0; i < t->n; i++) {
        size_t w = pkb_text_width(t->cells[i].text);
        if (w > width[i % t->ncols])
            width[i % t->ncols] = w;
    }
}

static void
render_row(const pkb_table *t, size_t row, const size_t *width, bool color, pkb_buf *out)
{
    size_t first = row * t->ncols, end = first + t->ncols < t->n ? first + t->ncols : t->n;
    size_t last = first; /* the last cell with text: nothing is padded after it */
    for (size_t i = first; i < end; i++)
        if (t->cells[i].text[0] != '\0')
            last = i;
    for (size_t i = first; i <= last; i++) {
        const struct cell *c = &t->cells[i];
        size_t k = i - first, pad = width[k] - pkb_text_width(c->text);
        if (k > 0)
            pkb_buf_puts(out, "  ");
        if (t->align[k] == 'r')
            pkb_buf_printf(out, "%*s", (int)pad, "");
        pkb_term_puts(out, color, row == 0 && c->tone == PKB_TONE_PLAIN ? PKB_TONE_BOLD : c->tone,
                      c->text);
        if (t->align[k] == 'l' && i < last)
            pkb_buf_printf(out, "%*s", (int)pad, "");
    }
}

void pkb_table_render(const pkb_table *t, const char *indent, bool color, pkb_buf *out)
{
    if (t == NULL || t->failed) {
        out->failed = true;
        return;
    }
    size_t *width = calloc(t->ncols, sizeof *width);
    if (width == NULL) {
        out->failed = true;
        return;
    }
    measure(t, width);
    for (size_t row = 0; row < pkb_table_rows(t); row++) {
        pkb_buf_puts(out, indent != NULL ? indent : "");
        render_row(t, row, width, color, out);
        pkb_buf_puts(out, "\n");
    }
    free(width);
}

void pkb_table_finish(pkb_table *t, bool color, pkb_buf *out)
{
    pkb_table_render(t, "  ", color, out);
    pkb_table_free(t);
    pkb_buf_puts(out, "\n");
}

void pkb_table_take(pkb_table *t, pkb_tone tone, pkb_buf *cell, pkb_buf *out)
{
    pkb_table_add(t, tone, "%s", cell->failed || cell->data == NULL ? "" : cell->data);
    out->failed |= cell->failed;
    pkb_buf_free(cell);
}

void pkb_table_free(pkb_table *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->cells[i].text);
    free(t->cells);
    free(t);
}
