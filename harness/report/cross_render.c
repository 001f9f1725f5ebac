/*
 * cross_render — a table of many results files (cross.h) as Markdown, as aligned text for a
 * terminal and as JSON. The three read one model and write the same cells with the same words
 * (cell_text), so the terminal, the report and a site built from the JSON never disagree.
 */
#define _GNU_SOURCE
#include "report/cross.h"

#include "common/files.h"
#include "common/md.h"
#include "common/term.h"
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== cells =================================================================================== */

/* A cell's text: "0.812× [0.789, 0.831] faster", "baseline", "81.80 ms", "refused", "" for an
 * empty cell; a pooled cell says how many files it holds, an unpaired one is marked †. */
static void cell_text(const pkb_cross_cell *c, bool md, pkb_buf *b)
{
    switch (c->kind) {
    case PKB_CROSS_EMPTY:
        return;
    case PKB_CROSS_BASELINE:
        pkb_buf_puts(b, "baseline");
        break;
    case PKB_CROSS_NO_BASELINE:
        pkb_buf_puts(b, "no baseline");
        break;
    case PKB_CROSS_UNMEASURED:
        pkb_buf_puts(b, c->status != NULL ? c->status : "not measured");
        break;
    case PKB_CROSS_ABSOLUTE:
        pkb_fmt_time(b, c->median_ns);
        break;
    case PKB_CROSS_RATIO: {
        bool strong = md && (c->word == PKB_WORD_SLOWER || c->word == PKB_WORD_FASTER);
        pkb_buf_puts(b, strong ? "**" : "");
        pkb_fmt_ratio(b, c->ratio.estimate);
        pkb_buf_puts(b, strong ? "**" : "");
        if (isfinite(c->ratio.lo) && isfinite(c->ratio.hi)) {
            pkb_buf_puts(b, " [");
            pkb_fmt_sig(b, c->ratio.lo, c->ratio.lo < 1 ? 3 : 4);
            pkb_buf_puts(b, ", ");
            pkb_fmt_sig(b, c->ratio.hi, c->ratio.hi < 1 ? 3 : 4);
            pkb_buf_puts(b, "]");
        } else {
            pkb_buf_puts(b, " (no CI)");
        }
        pkb_buf_printf(b, " %s%s", pkb_verdict_word_name(c->word), c->paired ? "" : " †");
        break;
    }
    }
    if (c->files > 1)
        pkb_buf_printf(b, " (%zu files)", c->files);
}

static pkb_tone cell_tone(const pkb_cross_cell *c)
{
    if (c->kind != PKB_CROSS_RATIO)
        return c->kind == PKB_CROSS_UNMEASURED ? PKB_TONE_WARN : PKB_TONE_PLAIN;
    return c->word == PKB_WORD_FASTER   ? PKB_TONE_GOOD
           : c->word == PKB_WORD_SLOWER ? PKB_TONE_BAD
                                        : PKB_TONE_PLAIN;
}

/* The noise floor beside a cell: "±2.1%", or "" when none. */
static void floor_text(const pkb_cross_cell *c, pkb_buf *b)
{
    if (c->kind == PKB_CROSS_RATIO && c->noise_floor > 0)
        pkb_buf_printf(b, "±%.1f%%", 100 * c->noise_floor);
}

static bool any_unpaired(const pkb_cross_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        if (t->cells[i].kind == PKB_CROSS_RATIO && !t->cells[i].paired)
            return true;
    return false;
}

/* The contender every ratio of a column is against, when it is one: NULL when several. */
static const char *column_base(const pkb_cross_table *t, size_t col, bool *several)
{
    const char *base = NULL;
    *several = false;
    for (size_t r = 0; r < t->nrows; r++) {
        const pkb_cross_cell *c = &t->cells[r * t->ncols + col];
        if (c->kind != PKB_CROSS_RATIO)
            continue;
        if (c->base == NULL || (base != NULL && strcmp(base, c->base) != 0))
            *several = true;
        else
            base = c->base;
    }
    return base;
}

/* ==== Markdown ================================================================================ */

static void md_keys(pkb_buf *b, char **keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pkb_buf_puts(b, i > 0 ? ", " : "");
        pkb_md_code(b, keys[i]);
    }
}

static void md_files(const pkb_cross *c, pkb_buf *b)
{
    pkb_buf_puts(b, "| file | suite | host | os | revision | created |\n"
                    "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < c->files.n; i++) {
        const pkb_many_file *f = &c->files.files[i];
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, f->path);
        pkb_buf_puts(b, " | ");
        pkb_md_text(b, pkb_identity_suite(f->r.suite));
        pkb_buf_puts(b, " | ");
        pkb_md_text(b, f->id.host);
        pkb_buf_puts(b, f->id.host_derived ? " (derived[^derived])" : "");
        pkb_buf_puts(b, " | ");
        pkb_md_text(b, f->id.os);
        pkb_buf_puts(b, " | ");
        pkb_md_code(b, f->id.revision);
        pkb_buf_puts(b, " | ");
        pkb_md_text(b, f->id.created != NULL ? f->id.created : "n/a");
        pkb_buf_puts(b, " |\n");
    }
    if (c->files.nskipped > 0) {
        pkb_buf_printf(b,
                       "\nSkipped %zu JSON file%s that %s not pkbench results:", c->files.nskipped,
                       c->files.nskipped == 1 ? "" : "s", c->files.nskipped == 1 ? "is" : "are");
        const pkb_buf *s = &c->files.skipped;
        for (size_t at = 0; at < s->len; at += strlen(s->data + at) + 1) {
            pkb_buf_puts(b, at > 0 ? ", " : " ");
            pkb_md_code(b, s->data + at);
        }
        pkb_buf_puts(b, ".\n");
    }
    pkb_buf_puts(b, "\n");
}

/* A value in a warning: long ones (a settings object) cut at 60 characters. */
static void short_value(const char *v, bool md, pkb_buf *b)
{
    char cut[80];
    size_t n = strlen(v);
    if (n > 60) {
        size_t k = 57;
        while (k > 0 && ((unsigned char)v[k] & 0xC0) == 0x80) /* not inside a UTF-8 sequence */
            k--;
        snprintf(cut, sizeof cut, "%.*s…", (int)k, v);
        v = cut;
    }
    if (md)
        pkb_md_code(b, v);
    else
        pkb_buf_printf(b, "'%s'", v);
}

/* labels[i] for every i < n with in[i], separated by ", ", each written by `put` (Markdown text
 * or code) or as it is. */
static void label_list(
    char *const *labels, const bool *in, size_t n, void (*put)(pkb_buf *, const char *), pkb_buf *b)
{
    for (size_t i = 0, k = 0; i < n; i++) {
        if (!in[i])
            continue;
        pkb_buf_puts(b, k++ > 0 ? ", " : "");
        put(b, labels[i]);
    }
}

/* A key's values and their columns: "`a` (col 1, col 2); `b` (col 3)". */
static void diff_values(const pkb_cross_table *t, const pkb_cross_diff *d, bool md, pkb_buf *b)
{
    for (size_t v = 0; v < d->nvalues; v++) {
        pkb_buf_puts(b, v > 0 ? "; " : "");
        short_value(d->values[v], md, b);
        pkb_buf_puts(b, " (");
        label_list(t->col_label, d->in_col + v * t->ncols, t->ncols,
                   md ? pkb_md_text : pkb_buf_puts, b);
        pkb_buf_puts(b, ")");
    }
}

/* Where a group of keys differs: "In every row", or "In 4 of 16 rows (a, b, c, d)". */
static void diff_rows(const pkb_cross_table *t, const pkb_cross_diff *d, bool md, pkb_buf *b)
{
    if (d->nrows_differ == t->nrows) {
        pkb_buf_puts(b, t->nrows == 1 ? "In its one row" : "In every row");
        return;
    }
    pkb_buf_printf(b, "In %zu of %zu rows (", d->nrows_differ, t->nrows);
    label_list(t->row_label, d->in_row, t->nrows, md ? pkb_md_code : pkb_buf_puts, b);
    pkb_buf_puts(b, ")");
}

static bool same_rows(const pkb_cross_table *t, const pkb_cross_diff *a, const pkb_cross_diff *b)
{
    return memcmp(a->in_row, b->in_row, t->nrows * sizeof *a->in_row) == 0;
}

/* The warnings, the keys grouped by the rows they differ in (mostly all the same rows): each
 * group's rows once, then its keys with their values. `lead` starts every line ("> " in
 * Markdown, indentation on a terminal). */
static void diff_groups(const pkb_cross_table *t, bool md, bool color, const char *lead, pkb_buf *b)
{
    for (size_t i = 0; i < t->ndiffs; i++) {
        bool earlier = false;
        for (size_t j = 0; j < i && !earlier; j++)
            earlier = same_rows(t, &t->diffs[j], &t->diffs[i]);
        if (earlier)
            continue; /* its group was written with the first key of it */
        pkb_buf line = {0};
        diff_rows(t, &t->diffs[i], md, &line);
        pkb_buf_puts(&line, ":");
        if (md)
            pkb_buf_printf(b, "%s\n%s%s\n", lead, lead, line.failed ? "?" : line.data);
        else
            pkb_term_line(b, color, PKB_TONE_WARN, "%s%s", lead, line.failed ? "?" : line.data);
        b->failed |= line.failed;
        pkb_buf_free(&line);
        for (size_t k = i; k < t->ndiffs; k++) {
            if (!same_rows(t, &t->diffs[i], &t->diffs[k]))
                continue;
            if (md) {
                pkb_buf_printf(b, "%s- ", lead);
                pkb_md_code(b, t->diffs[k].key);
                pkb_buf_puts(b, ": ");
                diff_values(t, &t->diffs[k], true, b);
                pkb_buf_puts(b, "\n");
                continue;
            }
            diff_values(t, &t->diffs[k], false, &line);
            pkb_term_line(b, color, PKB_TONE_WARN, "%s  %s: %s", lead, t->diffs[k].key,
                          line.failed ? "?" : line.data);
            b->failed |= line.failed;
            pkb_buf_free(&line);
        }
    }
}

static void md_header(const pkb_cross *c, const pkb_cross_table *t, pkb_buf *b)
{
    pkb_buf_printf(b, "## %s\n\n%zu file%s.", t->suite, t->nfiles, t->nfiles == 1 ? "" : "s");
    if (t->ncommon > 0) {
        pkb_buf_puts(b, " Shared by every one:");
        for (size_t i = 0; i < t->ncommon; i++) {
            pkb_buf_printf(b, "%s %s ", i > 0 ? ";" : "", t->common_key[i]);
            pkb_md_code(b, t->common_value[i]);
        }
        pkb_buf_puts(b, ".");
    }
    pkb_buf_puts(b, "\n\n");
    if (t->ndiffs > 0) {
        pkb_buf_printf(b,
                       "> **Warning: %zu key%s differ%s inside rows**: keys that are not a row "
                       "or a column, so the files compared in a row differ in more than its "
                       "columns say.\n",
                       t->ndiffs, t->ndiffs == 1 ? "" : "s", t->ndiffs == 1 ? "s" : "");
        diff_groups(t, true, false, "> ", b);
        pkb_buf_puts(b, "\n");
    }
    if (c->opts.absolute)
        pkb_buf_puts(b, "> **Absolute times** (`--absolute`): each cell is a median as measured "
                        "on its own host. Times from different hosts, platforms or loads are not "
                        "comparable; the ratios of the default table are.\n\n");
}

static void md_table(const pkb_cross *c, const pkb_cross_table *t, pkb_buf *b)
{
    pkb_buf_puts(b, "| ");
    for (size_t k = 0; k < c->nrow_keys; k++) {
        pkb_buf_puts(b, k > 0 ? " · " : "");
        pkb_md_text(b, c->row_keys[k]);
    }
    for (size_t col = 0; col < t->ncols; col++) {
        pkb_buf_puts(b, " | ");
        pkb_md_text(b, t->col_label[col]);
        if (t->col_floor[col] && !c->opts.absolute) {
            pkb_buf_puts(b, " | noise floor (");
            pkb_md_text(b, t->col_label[col]);
            pkb_buf_puts(b, ")");
        }
    }
    pkb_buf_puts(b, " |\n|---");
    for (size_t col = 0; col < t->ncols; col++)
        pkb_buf_puts(b, t->col_floor[col] && !c->opts.absolute ? "|---:|---:" : "|---:");
    pkb_buf_puts(b, "|\n");
    for (size_t r = 0; r < t->nrows; r++) {
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, t->row_label[r]);
        for (size_t col = 0; col < t->ncols; col++) {
            const pkb_cross_cell *cell = &t->cells[r * t->ncols + col];
            pkb_buf cb = {0};
            cell_text(cell, true, &cb);
            pkb_buf_puts(b, " | ");
            pkb_md_text(b, cb.data != NULL ? cb.data : "");
            b->failed |= cb.failed;
            pkb_buf_free(&cb);
            if (t->col_floor[col] && !c->opts.absolute) {
                pkb_buf_puts(b, " | ");
                floor_text(cell, b);
            }
        }
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

/* Below the table: each column's baseline, the series not measured and why, the marks. */
static void md_notes(const pkb_cross *c, const pkb_cross_table *t, pkb_buf *b)
{
    if (!c->opts.absolute) {
        pkb_buf_puts(b, "Baselines:");
        for (size_t col = 0; col < t->ncols; col++) {
            bool several;
            const char *base = column_base(t, col, &several);
            pkb_buf_printf(b, "%s ", col > 0 ? ";" : "");
            pkb_md_text(b, t->col_label[col]);
            pkb_buf_puts(b, ": ");
            if (base == NULL)
                pkb_buf_puts(b, several ? "several" : "none");
            else
                pkb_md_code(b, base);
        }
        pkb_buf_puts(b, ".\n\n");
    }
    bool first = true;
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t col = 0; col < t->ncols; col++) {
            const pkb_cross_cell *cell = &t->cells[r * t->ncols + col];
            if (cell->kind != PKB_CROSS_UNMEASURED)
                continue;
            pkb_buf_puts(b, first ? "Not measured:\n\n" : "");
            first = false;
            pkb_buf_puts(b, "- ");
            pkb_md_code(b, t->row_label[r]);
            pkb_buf_puts(b, " on ");
            pkb_md_text(b, t->col_label[col]);
            pkb_buf_printf(b, ": %s — ", cell->status);
            pkb_md_text(b, cell->reason != NULL ? cell->reason : "no reason given");
            pkb_buf_puts(b, "\n");
        }
    }
    pkb_buf_puts(b, first ? "" : "\n");
    if (any_unpaired(t) && !c->opts.absolute)
        pkb_buf_puts(b, "† Not paired by round (the file's series were not taken in rounds "
                        "together): the ratio of the two medians, with its bootstrap CI.\n\n");
}

void pkb_cross_markdown(const pkb_cross *c, pkb_buf *b)
{
    pkb_buf_printf(b, "# %s of %zu results files\n\n", c->opts.absolute ? "Medians" : "Ratios",
                   c->files.n);
    pkb_buf_puts(b, "Rendered by `pkbench report` from the files below; generated, not edited by "
                    "hand. Rows: ");
    md_keys(b, c->row_keys, c->nrow_keys);
    pkb_buf_puts(b, "; columns: ");
    md_keys(b, c->col_keys, c->ncol_keys);
    pkb_buf_puts(b, ".\n\n");
    if (!c->opts.absolute)
        pkb_buf_printf(
            b,
            "Each cell compares a series with its scenario's baseline contender%s%s%s in the same "
            "file — the same host, in the same run — never with a time from another host: the "
            "ratio of the two (below 1 is faster), with its 95%% confidence interval, paired by "
            "round where the file's series were taken in rounds together (the median of the "
            "per-round ratios), and the verdict the file's own report gives: *slower* or *faster* "
            "when the difference is significant after Holm's correction and beyond 10%% and the "
            "file's noise floor, *negligible* within that bar, *not distinguishable* when a larger "
            "difference is not significant, *undecidable* when the samples are too few or too "
            "noisy. A cell holding several files pools them: their per-round ratios, or their "
            "samples when they all come from one host (decided together, Holm over the table's "
            "pooled cells); otherwise the geometric mean of their ratios, without a CI. A noise "
            "floor column gives each pair's minimum detectable effect from the file's A/A run "
            "(`pkbench run --aa`).\n\n",
            c->opts.baseline ? " (here `" : "", c->opts.baseline ? c->opts.baseline : "",
            c->opts.baseline ? "`)" : "");
    pkb_buf_puts(b, "## Files\n\n");
    md_files(c, b);
    for (size_t i = 0; i < c->ntables; i++) {
        md_header(c, &c->tables[i], b);
        md_table(c, &c->tables[i], b);
        md_notes(c, &c->tables[i], b);
    }
    bool derived = false;
    for (size_t i = 0; i < c->files.n; i++)
        derived = derived || c->files.files[i].id.host_derived;
    if (derived)
        pkb_buf_puts(b, "[^derived]: The file predates the host identity fields: its host is named "
                        "from a digest of the CPU model, the CPU count, the architecture and the "
                        "distribution its environment records.\n");
}

/* ==== the terminal ============================================================================ */

void pkb_cross_terminal(const pkb_cross *c, bool color, pkb_buf *out)
{
    for (size_t i = 0; i < c->ntables; i++) {
        const pkb_cross_table *t = &c->tables[i];
        pkb_term_line(out, color, PKB_TONE_BOLD, "%s: %zu file%s, %s", t->suite, t->nfiles,
                      t->nfiles == 1 ? "" : "s",
                      c->opts.absolute ? "medians as measured"
                                       : "each series as a ratio to its file's baseline");
        for (size_t k = 0; k < t->ncommon; k++)
            pkb_term_line(out, color, PKB_TONE_DIM, "  %s: %s", t->common_key[k],
                          t->common_value[k]);
        if (t->ndiffs > 0) {
            pkb_term_line(out, color, PKB_TONE_WARN,
                          "  warning: %zu key%s differ%s inside rows (not a row or column key):",
                          t->ndiffs, t->ndiffs == 1 ? "" : "s", t->ndiffs == 1 ? "s" : "");
            diff_groups(t, false, color, "    ", out);
        }
        if (c->opts.absolute)
            pkb_term_line(out, color, PKB_TONE_WARN,
                          "  absolute times: not comparable across hosts");
        pkb_buf_puts(out, "\n");
        char align[256] = "l";
        size_t ncol = 1;
        for (size_t col = 0; col < t->ncols && ncol + 2 < sizeof align; col++) {
            align[ncol++] = 'r';
            if (t->col_floor[col] && !c->opts.absolute)
                align[ncol++] = 'r';
        }
        align[ncol] = '\0';
        pkb_table *tab = pkb_table_new(align);
        if (tab == NULL) {
            out->failed = true;
            return;
        }
        pkb_buf head = {0};
        for (size_t k = 0; k < c->nrow_keys; k++)
            pkb_buf_printf(&head, "%s%s", k > 0 ? " · " : "", c->row_keys[k]);
        pkb_table_add(tab, 0, "%s", head.failed ? "" : head.data);
        pkb_buf_free(&head);
        for (size_t col = 0; col < t->ncols; col++) {
            pkb_table_add(tab, 0, "%s", t->col_label[col]);
            if (t->col_floor[col] && !c->opts.absolute)
                pkb_table_add(tab, 0, "noise floor");
        }
        for (size_t r = 0; r < t->nrows; r++) {
            pkb_table_add(tab, 0, "%s", t->row_label[r]);
            for (size_t col = 0; col < t->ncols; col++) {
                const pkb_cross_cell *cell = &t->cells[r * t->ncols + col];
                pkb_buf cb = {0};
                cell_text(cell, false, &cb);
                pkb_table_take(tab, cell_tone(cell), &cb, out);
                if (t->col_floor[col] && !c->opts.absolute) {
                    pkb_buf fb = {0};
                    floor_text(cell, &fb);
                    pkb_table_take(tab, 0, &fb, out);
                }
            }
        }
        pkb_table_finish(tab, color, out);
    }
}

/* ==== JSON ==================================================================================== */

static json_t *strings(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *number_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static const char *kind_name(pkb_cross_kind k)
{
    static const char *const names[] = {
        [PKB_CROSS_EMPTY] = "empty",           [PKB_CROSS_BASELINE] = "baseline",
        [PKB_CROSS_RATIO] = "ratio",           [PKB_CROSS_NO_BASELINE] = "no baseline",
        [PKB_CROSS_UNMEASURED] = "unmeasured", [PKB_CROSS_ABSOLUTE] = "absolute",
    };
    return names[k];
}

static json_t *cell_json(const pkb_cross_cell *c)
{
    if (c->kind == PKB_CROSS_EMPTY)
        return json_null();
    pkb_buf text = {0};
    cell_text(c, false, &text);
    json_t *j = json_pack("{s:s, s:I, s:o, s:s?}", "kind", kind_name(c->kind), "files",
                          (json_int_t)c->files, "median_ns", number_or_null(c->median_ns), "text",
                          text.data);
    pkb_buf_free(&text);
    if (j == NULL)
        return NULL;
    if (c->kind == PKB_CROSS_RATIO) {
        json_object_set_new(j, "ratio", number_or_null(c->ratio.estimate));
        json_object_set_new(j, "lo", number_or_null(c->ratio.lo));
        json_object_set_new(j, "hi", number_or_null(c->ratio.hi));
        json_object_set_new(j, "paired", json_boolean(c->paired));
        json_object_set_new(j, "verdict", json_string(pkb_verdict_word_name(c->word)));
        json_object_set_new(j, "noise_floor",
                            c->noise_floor > 0 ? json_real(c->noise_floor) : json_null());
        json_object_set_new(j, "baseline", c->base ? json_string(c->base) : json_null());
    }
    if (c->kind == PKB_CROSS_UNMEASURED) {
        json_object_set_new(j, "status", json_string(c->status ? c->status : "not measured"));
        json_object_set_new(j, "reason", c->reason ? json_string(c->reason) : json_null());
    }
    return j;
}

static json_t *diff_json(const pkb_cross_table *t, const pkb_cross_diff *d)
{
    json_t *values = json_array(), *rows = json_array();
    for (size_t v = 0; values != NULL && v < d->nvalues; v++) {
        json_t *cols = json_array();
        for (size_t col = 0; cols != NULL && col < t->ncols; col++)
            if (d->in_col[v * t->ncols + col])
                json_array_append_new(cols, json_integer((json_int_t)col));
        json_array_append_new(values,
                              json_pack("{s:s, s:o?}", "value", d->values[v], "columns", cols));
    }
    for (size_t r = 0; rows != NULL && r < t->nrows; r++)
        if (d->in_row[r])
            json_array_append_new(rows, json_integer((json_int_t)r));
    return json_pack("{s:s, s:o?, s:o?}", "key", d->key, "values", values, "rows", rows);
}

static json_t *table_json(const pkb_cross *c, const pkb_cross_table *t)
{
    json_t *cols = json_array(), *cells = json_array(), *common = json_object(),
           *diffs = json_array();
    for (size_t col = 0; cols != NULL && col < t->ncols; col++) {
        bool several;
        const char *base = column_base(t, col, &several);
        json_array_append_new(
            cols, json_pack("{s:s, s:o?, s:o, s:b}", "label", t->col_label[col], "values",
                            strings(t->col_value + col * t->nkeys_c, t->nkeys_c), "baseline",
                            base != NULL ? json_string(base) : json_null(), "noise_floor",
                            t->col_floor[col]));
    }
    for (size_t r = 0; cells != NULL && r < t->nrows; r++) {
        json_t *row = json_array();
        for (size_t col = 0; row != NULL && col < t->ncols; col++)
            json_array_append_new(row, cell_json(&t->cells[r * t->ncols + col]));
        json_array_append_new(cells, row);
    }
    for (size_t i = 0; common != NULL && i < t->ncommon; i++)
        json_object_set_new(common, t->common_key[i], json_string(t->common_value[i]));
    for (size_t i = 0; diffs != NULL && i < t->ndiffs; i++)
        json_array_append_new(diffs, diff_json(t, &t->diffs[i]));
    json_t *rows = json_array();
    for (size_t r = 0; rows != NULL && r < t->nrows; r++)
        json_array_append_new(rows, json_pack("{s:s, s:o?}", "label", t->row_label[r], "values",
                                              strings(t->row_value + r * t->nkeys_r, t->nkeys_r)));
    (void)c;
    return json_pack("{s:s, s:I, s:o?, s:o?, s:o?, s:o?, s:o?}", "suite", t->suite, "files",
                     (json_int_t)t->nfiles, "shared", common, "warnings", diffs, "rows", rows,
                     "columns", cols, "cells", cells);
}

json_t *pkb_cross_json(const pkb_cross *c)
{
    json_t *files = json_array(), *tables = json_array();
    for (size_t i = 0; files != NULL && i < c->files.n; i++) {
        const pkb_many_file *f = &c->files.files[i];
        json_array_append_new(files,
                              json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:s?, s:s?}", "path",
                                        f->path, "suite", f->r.suite, "host", f->id.host, "host_id",
                                        f->id.host_id, "host_derived", f->id.host_derived, "os",
                                        f->id.os, "revision", f->id.revision, "commit_time",
                                        f->id.commit_time, "created", f->id.created));
    }
    for (size_t i = 0; tables != NULL && i < c->ntables; i++)
        json_array_append_new(tables, table_json(c, &c->tables[i]));
    return json_pack("{s:s, s:i, s:o?, s:o?, s:b, s:s?, s:o?, s:o?}", "schema", "pkbench-table",
                     "schema_version", 1, "row_keys", strings(c->row_keys, c->nrow_keys),
                     "col_keys", strings(c->col_keys, c->ncol_keys), "absolute", c->opts.absolute,
                     "baseline", c->opts.baseline, "files", files, "tables", tables);
}

int pkb_cross_write(const pkb_cross *c,
                    const char *out_dir,
                    const char *name,
                    const pkb_report_options *opts,
                    char *err,
                    size_t err_len)
{
    pkb_buf md = {0};
    pkb_cross_markdown(c, &md);
    json_t *doc = pkb_cross_json(c);
    int rc = doc == NULL ? pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", name)
                         : pkb_report_write_doc(name, &md, doc, NULL, out_dir, opts, err, err_len);
    json_decref(doc);
    pkb_buf_free(&md);
    return rc;
}
