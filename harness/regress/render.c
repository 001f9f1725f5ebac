/*
 * compare_render — a comparison (compare.h) as an aligned text table, a Markdown table or JSON.
 *
 * One row per compared series, benchstat's columns with the verdict spelt out:
 *
 *     series  base  new  delta  95% CI  p (Holm)  n  bar  verdict
 *
 * base and new are medians in the unit the base reads best in; delta = median(new) /
 * median(base) − 1 with the bootstrap CI of the same ratio; p is Mann-Whitney's after Holm's
 * correction (for --baseline-contender's series paired by round, delta and CI are the per-round
 * ratios' median and its CI, p Wilcoxon's signed-rank, n the rounds paired); bar = max(threshold,
 * noise floor, and for a drift-corrected series its controls' spread), what |delta| had to exceed
 * ("(noisy)": the series was too noisy for its point estimate and its whole CI cleared the bar,
 * widened by that noise).
 * A geomean row follows (decided series only), then the notes: why a series was undecidable, series
 * in only one file, series not measured in both, and (Markdown, JSON) differing environment keys.
 *
 * Between two files a line says the machine's drift (compare.h). When the verdicts are
 * drift-corrected, base/new/delta/CI/p are the corrected ones (medians in ns of the base run's
 * machine) and a last column, "raw", keeps the uncorrected delta and verdict beside them; a
 * control's verdict reads "control": its delta is the machine's, not the code's.
 */
#define _GNU_SOURCE
#include "regress/compare.h"

#include "common/files.h"
#include "common/md.h"
#include "results/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pkb_compare_parse_format(const char *name, pkb_compare_format *out)
{
    if (strcmp(name, "text") == 0)
        *out = PKB_COMPARE_TEXT;
    else if (strcmp(name, "md") == 0 || strcmp(name, "markdown") == 0)
        *out = PKB_COMPARE_MD;
    else if (strcmp(name, "json") == 0)
        *out = PKB_COMPARE_JSON;
    else
        return -EINVAL;
    return 0;
}

/* ==== Cells ================================================================================== */

enum { C_NAME, C_BASE, C_NEW, C_DELTA, C_CI, C_P, C_N, C_BAR, C_VERDICT, C_RAW, NCOL };

static const char *const headers[NCOL] = {"series",   "base", "new", "delta",   "95% CI",
                                          "p (Holm)", "n",    "bar", "verdict", "raw"};

/* One file of pkbench ab: head for new, each look's CI and p, and when the rule decided. */
static const char *const ab_headers[NCOL] = {"series", "base", "head", "delta",   "CI",
                                             "p",      "n",    "bar",  "verdict", "decided"};

static const char *header(const pkb_compare *c, int k)
{
    return c->sides ? ab_headers[k] : headers[k];
}

/* The columns shown: "raw" only when the verdicts are drift-corrected; "decided" for ab. */
static int ncols(const pkb_compare *c)
{
    return c->drift_applied || c->sides ? NCOL : C_RAW;
}

static bool left_aligned(int k)
{
    return k == C_NAME || k == C_VERDICT || k == C_RAW;
}

typedef char cell[200];

static void pct(char *out, size_t len, double d)
{
    double v = 100 * d;
    if (fabs(v) < 0.05)
        v = 0;
    snprintf(out, len, "%+.1f%%", v);
}

/* A time in the unit its size reads best in, to 4 significant figures (common/md.h). */
static void time_cell(char *out, size_t len, double ns)
{
    pkb_buf b = {0};
    pkb_fmt_time(&b, ns);
    snprintf(out, len, "%s", b.failed || b.data == NULL ? "?" : b.data);
    pkb_buf_free(&b);
}

/* pkbench ab's verdict and "decided" cells: "unchanged" is the rule's (the CI within the bar),
 * "~" the last look's (not shown to change); when and at which level the rule decided. */
static void ab_cells(const pkb_compare_row *r, cell *row)
{
    if (r->ab_open)
        snprintf(row[C_VERDICT], sizeof(cell), "undecidable (open)");
    else if (r->d.verdict == PKS_UNDECIDABLE)
        snprintf(row[C_VERDICT], sizeof(cell), "undecidable (%s)",
                 pks_undecidable_name(r->d.reason));
    else
        snprintf(row[C_VERDICT], sizeof(cell), "%s",
                 r->ab_unchanged ? "unchanged" : pks_verdict_name(r->d.verdict));
    if (r->ab_look < 0)
        snprintf(row[C_RAW], sizeof(cell), "-");
    else if (r->ab_open)
        snprintf(row[C_RAW], sizeof(cell), "open after %d rounds", r->ab_rounds);
    else
        snprintf(row[C_RAW], sizeof(cell), "%s %d, %d rounds (level %.2g)",
                 r->ab_decided ? "look" : "last look", r->ab_look + 1, r->ab_rounds, r->ab_level);
}

static void fill_row(const pkb_compare *c, const pkb_compare_row *r, cell *row)
{
    snprintf(row[C_NAME], sizeof(cell), "%s", r->name);
    time_cell(row[C_BASE], sizeof(cell), r->s.base.median);
    time_cell(row[C_NEW], sizeof(cell), r->s.cand.median);
    pct(row[C_DELTA], sizeof(cell), r->s.delta);
    char lo[32], hi[32];
    pct(lo, sizeof lo, r->s.ratio.lo - 1);
    pct(hi, sizeof hi, r->s.ratio.hi - 1);
    snprintf(row[C_CI], sizeof(cell), "[%s, %s]", lo, hi);
    if (r->p_holm < 0.001)
        snprintf(row[C_P], sizeof(cell), "<0.001");
    else
        snprintf(row[C_P], sizeof(cell), "%.3f", r->p_holm);
    if (r->paired)
        snprintf(row[C_N], sizeof(cell), "%zu paired", r->pair.n);
    else
        snprintf(row[C_N], sizeof(cell), "%zu/%zu", r->s.base.n, r->s.cand.n);
    /* (noisy): too noisy for its point estimate, decided because its whole CI cleared the bar
     * widened by that noise (stats.h, pks_decide). */
    snprintf(row[C_BAR], sizeof(cell), "%.1f%%%s", 100 * r->d.bar,
             r->d.noisy                                            ? " (noisy)"
             : r->noise_floor <= c->opts.threshold                 ? ""
             : r->corrected && r->control_spread >= r->noise_floor ? " (controls)"
                                                                   : " (floor)");
    if (c->sides) {
        ab_cells(r, row);
        return;
    }
    if (r->control)
        snprintf(row[C_VERDICT], sizeof(cell), "control");
    else if (r->machine_changed)
        snprintf(row[C_VERDICT], sizeof(cell), "undecidable (machine changed)");
    else if (r->d.verdict == PKS_UNDECIDABLE)
        snprintf(row[C_VERDICT], sizeof(cell), "undecidable (%s)",
                 pks_undecidable_name(r->d.reason));
    else
        snprintf(row[C_VERDICT], sizeof(cell), "%s", pks_verdict_name(r->d.verdict));
    char raw[32];
    pct(raw, sizeof raw, r->raw.s.delta);
    if (r->control)
        snprintf(row[C_RAW], sizeof(cell), "%s", raw);
    else if (r->raw.d.verdict == PKS_UNDECIDABLE)
        snprintf(row[C_RAW], sizeof(cell), "%s undecidable (%s)", raw,
                 pks_undecidable_name(r->raw.d.reason));
    else
        snprintf(row[C_RAW], sizeof(cell), "%s %s", raw, pks_verdict_name(r->raw.d.verdict));
}

static void fill_geomean(const pkb_compare *c, cell *row)
{
    snprintf(row[C_NAME], sizeof(cell), "geomean");
    if (c->geomean_n == 0) {
        snprintf(row[C_DELTA], sizeof(cell), "n/a");
        return;
    }
    time_cell(row[C_BASE], sizeof(cell), c->geomean_base);
    time_cell(row[C_NEW], sizeof(cell), c->geomean_cand);
    pct(row[C_DELTA], sizeof(cell), c->geomean - 1);
    snprintf(row[C_N], sizeof(cell), "%zu series", c->geomean_n);
}

/* Display width of UTF-8 text: code points, not bytes ("µs" is two columns). */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* pkbench ab's rule, and how the run ended. */
static void ab_rule_line(const pkb_compare *c, pkb_buf *b, bool md)
{
    const pkb_compare_options *o = &c->opts;
    size_t m = c->ab_pairs > 0 ? c->ab_pairs : 1;
    pkb_buf_printf(b,
                   "sequential rule: alpha %g over %zu series (%.2g each, Bonferroni), spent over "
                   "the looks by Lan-DeMets' O'Brien-Fleming function; a series is regressed or "
                   "improved when its p is below its look's level and |delta| > %.1f%%, "
                   "unchanged when its CI at that level lies within ±%.1f%%.%s",
                   o->alpha, m, o->alpha / (double)m, 100 * fmax(0, o->threshold),
                   100 * fmax(0, o->threshold), md ? " " : "\n");
    static const char *const why[][2] = {{"decided", "every series decided"},
                                         {"budget", "the time budget spent (the last look)"},
                                         {"interrupted", "interrupted (open series: undecidable)"}};
    const char *how = "still running";
    for (size_t i = 0; c->ab_stopped != NULL && i < sizeof why / sizeof why[0]; i++)
        if (strcmp(c->ab_stopped, why[i][0]) == 0)
            how = why[i][1];
    pkb_buf_printf(b,
                   "%d rounds, %zu look%s; stopped: %s. CIs at each look's level; n: rounds "
                   "paired.\n",
                   c->ab_rounds, c->ab_looks, c->ab_looks == 1 ? "" : "s", how);
}

/* Two lines (text) or one paragraph (Markdown): the rule every verdict followed. */
static void settings_line(const pkb_compare *c, pkb_buf *b, bool md)
{
    const pkb_compare_options *o = &c->opts;
    if (c->sides) {
        ab_rule_line(c, b, md);
        return;
    }
    pkb_buf_printf(b, "alpha %g, Holm's correction over %zu series; threshold ", o->alpha,
                   c->nrows);
    if (o->threshold > 0)
        pkb_buf_printf(b, "%.1f%%", 100 * o->threshold);
    else
        pkb_buf_puts(b, "none");
    if (o->cv_limit > 0)
        pkb_buf_printf(b, "; cv limit %.1f%% (robust: 1.4826 MAD / median)", 100 * o->cv_limit);
    else
        pkb_buf_puts(b, "; no cv limit");
    pkb_buf_puts(b, md ? ". " : "\n");
    if (c->noise_floor_known)
        pkb_buf_printf(b, "noise floor: the base file's A/A run (alpha %g)", c->noise_floor_alpha);
    else
        pkb_buf_printf(b, "noise floor: none in the base file (%s measures one)",
                       md ? "`pkbench run --aa`" : "pkbench run --aa");
    pkb_buf_printf(b, "; bootstrap %zu resamples, seed %llu.\n", o->iterations,
                   (unsigned long long)o->seed);
    size_t paired = 0;
    for (size_t i = 0; i < c->nrows; i++)
        paired += c->rows[i].paired;
    if (paired > 0)
        pkb_buf_printf(
            b,
            "paired by round: %zu of %zu series took their repetitions in the same "
            "rounds as their base; their delta and CI are the median of the per-round "
            "ratios and its bootstrap CI, their p Wilcoxon's signed-rank test on the "
            "log ratios, their noise check the CI's half-width (n: the rounds paired).\n",
            paired, c->nrows);
}

static void counts_line(const pkb_compare *c, pkb_buf *b)
{
    pkb_buf_printf(b, "%zu regressed, %zu improved, %zu unchanged, %zu undecidable", c->regressed,
                   c->improved, c->unchanged, c->undecidable);
    if (c->machine_changed > 0)
        pkb_buf_printf(b, " (%zu: machine changed)", c->machine_changed);
    if (c->controls > 0)
        pkb_buf_printf(b, "; %zu control%s (no verdict)", c->controls, c->controls == 1 ? "" : "s");
    if (c->drift_applied)
        pkb_buf_printf(b,
                       "; raw, without the drift correction: %zu regressed, %zu improved, "
                       "%zu unchanged, %zu undecidable",
                       c->raw_regressed, c->raw_improved, c->raw_unchanged, c->raw_undecidable);
    if (c->missing > 0)
        pkb_buf_printf(b, "; %zu missing or failed in new", c->missing);
    if (c->environmental > 0)
        pkb_buf_printf(b, "; %zu could not run in new", c->environmental);
    pkb_buf_puts(b, ".\n");
}

/* The notes after the table, as "- " items (Markdown) or indented lines (text). */
static void notes(const pkb_compare *c, pkb_buf *b, bool md)
{
    const char *item = md ? "- " : "  ";
    bool any = false;
    for (size_t i = 0; i < c->nrows; i++) {
        const pkb_compare_row *r = &c->rows[i];
        if (r->d.verdict != PKS_UNDECIDABLE || r->control)
            continue;
        char why[200];
        pkb_compare_why(c, r, why, sizeof why);
        pkb_buf_printf(b, "%s%sundecidable: %s — %s\n", any ? "" : "\n", item, r->name, why);
        any = true;
    }
    for (int side = 0; side < 2; side++) {
        char **names = side ? c->only_cand : c->only_base;
        size_t n = side ? c->nonly_cand : c->nonly_base;
        if (n == 0)
            continue;
        pkb_buf_printf(b, "%s%sonly in %s: ", any ? "" : "\n", item, side ? "new" : "base");
        for (size_t i = 0; i < n; i++)
            pkb_buf_printf(b, "%s%s", i ? ", " : "", names[i]);
        pkb_buf_puts(b, "\n");
        any = true;
    }
    if (c->nabsent > 0) {
        pkb_buf_printf(b, "%s%smissing in new (the base measured them; counted as regressed): ",
                       any ? "" : "\n", item);
        for (size_t i = 0; i < c->nabsent; i++)
            pkb_buf_printf(b, "%s%s", i ? ", " : "", c->absent[i]);
        pkb_buf_puts(b, "\n");
        any = true;
    }
    static const char *const counted[] = {
        [PKB_NOTE_INFO] = "",
        [PKB_NOTE_MISSING] = "; counted as regressed",
        [PKB_NOTE_ENVIRONMENT] = "; counted as undecidable",
    };
    for (size_t i = 0; i < c->nskipped; i++) {
        pkb_buf_printf(b, "%s%snot compared: %s — %s%s\n", any ? "" : "\n", item,
                       c->skipped[i].name, c->skipped[i].why, counted[c->skipped[i].kind]);
        any = true;
    }
    for (size_t i = 0; i < c->nsettings; i++) {
        pkb_buf_printf(b,
                       md ? "%s- run settings differ: %s `%s` vs `%s`\n"
                          : "%s  run settings differ: %s '%s' (base) vs '%s' (new)\n",
                       any ? "" : "\n", c->settings[i].key, c->settings[i].base,
                       c->settings[i].cand);
        any = true;
    }
    for (size_t i = 0; md && i < c->nenv; i++) {
        pkb_buf_printf(b, "%s- environment differs: %s `%s` vs `%s`\n", any ? "" : "\n",
                       c->env[i].key, c->env[i].base, c->env[i].cand);
        any = true;
    }
}

/* The drift line (two files), then per control group that could not correct, why. */
static void drift_line(const pkb_compare *c, pkb_buf *b, bool md)
{
    if (c->cand_path == NULL)
        return;
    char line[512];
    pkb_compare_drift_line(c, line, sizeof line);
    pkb_buf_printf(b, "%s%s.\n", md ? "\n" : "", line);
    bool first = true;
    for (size_t i = 0; i < c->drift.ngroups; i++) {
        const pkb_drift_group *g = &c->drift.groups[i];
        if (g->state == PKB_DRIFT_OK)
            continue;
        char why[200];
        pkb_drift_why(&c->drift, g, why, sizeof why);
        pkb_buf_printf(b, "%scontrols of %s: %s.\n",
                       !md     ? "  "
                       : first ? "\n- "
                               : "- ",
                       g->name, why);
        first = false;
    }
}

/* ==== Text =================================================================================== */

static void render_text(const pkb_compare *c, pkb_buf *b)
{
    size_t nrows = c->nrows + 2;
    cell(*t)[NCOL] = calloc(nrows, sizeof *t);
    if (t == NULL) {
        b->failed = true;
        return;
    }
    for (int k = 0; k < NCOL; k++)
        snprintf(t[0][k], sizeof(cell), "%s", header(c, k));
    for (size_t i = 0; i < c->nrows; i++)
        fill_row(c, &c->rows[i], t[i + 1]);
    fill_geomean(c, t[nrows - 1]);
    size_t w[NCOL] = {0};
    int nc = ncols(c);
    for (size_t i = 0; i < nrows; i++)
        for (int k = 0; k < nc; k++)
            if (width(t[i][k]) > w[k])
                w[k] = width(t[i][k]);

    if (c->cand_path != NULL)
        pkb_buf_printf(b, "base: %s\nnew:  %s\n", c->base_path, c->cand_path);
    else if (c->sides)
        pkb_buf_printf(b, "file: %s (pkbench ab: one interleaved run)\nbase: %s%s\nhead: %s%s\n",
                       c->base_path, c->ab_base, c->ab_base_dirty ? " (uncommitted changes)" : "",
                       c->ab_head, c->ab_head_dirty ? " (uncommitted changes)" : "");
    else
        pkb_buf_printf(b, "file: %s (every contender against %s, per scenario)\n", c->base_path,
                       c->opts.baseline_contender);
    settings_line(c, b, false);
    drift_line(c, b, false);
    pkb_buf_puts(b, "\n");
    for (size_t i = 0; i < nrows; i++) {
        for (int k = 0; k < nc; k++) {
            size_t pad = w[k] - width(t[i][k]);
            bool left = left_aligned(k);
            if (k == nc - 1 && left) /* no trailing blanks */
                pad = 0;
            if (!left)
                pkb_buf_printf(b, "%*s", (int)pad, "");
            pkb_buf_puts(b, t[i][k]);
            if (left)
                pkb_buf_printf(b, "%*s", (int)pad, "");
            if (k < nc - 1)
                pkb_buf_puts(b, "  ");
        }
        /* the geomean row leaves the last columns empty: trim */
        while (b->len > 0 && b->data[b->len - 1] == ' ')
            b->data[--b->len] = '\0';
        pkb_buf_puts(b, "\n");
    }
    free(t);
    pkb_buf_puts(b, "\n");
    counts_line(c, b);
    notes(c, b, false);
}

/* ==== Markdown =============================================================================== */

static void render_md(const pkb_compare *c, pkb_buf *b)
{
    pkb_buf_puts(b, "## pkbench compare\n\n");
    if (c->cand_path != NULL) {
        pkb_buf_puts(b, "Base ");
        pkb_md_code(b, c->base_path);
        pkb_buf_puts(b, ", new ");
        pkb_md_code(b, c->cand_path);
    } else if (c->sides) {
        pkb_buf_puts(b, "File ");
        pkb_md_code(b, c->base_path);
        pkb_buf_puts(b, " of `pkbench ab`, one interleaved run: base ");
        pkb_md_code(b, c->ab_base);
        pkb_buf_puts(b, c->ab_base_dirty ? " (uncommitted changes), head " : ", head ");
        pkb_md_code(b, c->ab_head);
        pkb_buf_puts(b, c->ab_head_dirty ? " (uncommitted changes)" : "");
    } else {
        pkb_buf_puts(b, "File ");
        pkb_md_code(b, c->base_path);
        pkb_buf_puts(b, ", every contender against ");
        pkb_md_code(b, c->opts.baseline_contender);
        pkb_buf_puts(b, " per scenario");
    }
    pkb_buf_puts(b, ". ");
    settings_line(c, b, true);
    drift_line(c, b, true);
    int nc = ncols(c);
    pkb_buf_puts(b, "\n|");
    for (int k = 0; k < nc; k++)
        pkb_buf_printf(b, " %s |", header(c, k));
    pkb_buf_puts(b, "\n|");
    for (int k = 0; k < nc; k++)
        pkb_buf_puts(b, left_aligned(k) ? "---|" : "---:|");
    pkb_buf_puts(b, "\n");
    cell row[NCOL];
    for (size_t i = 0; i <= c->nrows; i++) {
        memset(row, 0, sizeof row);
        if (i < c->nrows)
            fill_row(c, &c->rows[i], row);
        else
            fill_geomean(c, row);
        pkb_buf_puts(b, "|");
        for (int k = 0; k < nc; k++) {
            pkb_buf_puts(b, " ");
            bool strong =
                k == C_VERDICT && i < c->nrows && !c->rows[i].control &&
                (c->rows[i].d.verdict == PKS_REGRESSED || c->rows[i].d.verdict == PKS_IMPROVED);
            if (k == C_NAME && i < c->nrows)
                pkb_md_code(b, row[k]);
            else if (k == C_NAME)
                pkb_buf_printf(b, "**%s**", row[k]);
            else if (strong)
                pkb_buf_printf(b, "**%s**", row[k]);
            else
                pkb_md_text(b, row[k]);
            pkb_buf_puts(b, " |");
        }
        pkb_buf_puts(b, "\n");
    }
    pkb_buf_puts(b, "\n");
    counts_line(c, b);
    notes(c, b, true);
}

/* ==== JSON =================================================================================== */

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *summary_json(const pks_summary *s, double robust_cv)
{
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer((json_int_t)s->n));
    json_object_set_new(o, "median_ns", num(s->median));
    json_object_set_new(o, "mean_ns", num(s->mean));
    json_object_set_new(o, "cv", num(s->cv));
    json_object_set_new(o, "robust_cv", num(robust_cv)); /* what the noise check used */
    json_object_set_new(o, "min_ns", num(s->min));
    json_object_set_new(o, "max_ns", num(s->max));
    return o;
}

static json_t *row_json(const pkb_compare *c, const pkb_compare_row *r)
{
    json_t *o = json_object();
    char why[200] = "";
    pkb_compare_why(c, r, why, sizeof why);
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "base_name", json_string(r->base_name));
    json_object_set_new(o, "verdict", json_string(pks_verdict_name(r->d.verdict)));
    json_object_set_new(o, "reason", why[0] ? json_string(why) : json_null());
    json_object_set_new(o, "base", summary_json(&r->s.base, r->cv_base));
    json_object_set_new(o, "new", summary_json(&r->s.cand, r->cv_cand));
    json_object_set_new(o, "ratio", num(r->s.ratio.estimate));
    json_object_set_new(o, "ratio_ci", json_pack("[o, o]", num(r->s.ratio.lo), num(r->s.ratio.hi)));
    json_object_set_new(o, "delta", num(r->s.delta));
    json_object_set_new(o, "p", num(r->paired ? r->pair.test.p : r->s.mwu.p));
    json_object_set_new(o, "p_holm", num(r->p_holm));
    json_object_set_new(o, "test",
                        json_string(r->paired ? "wilcoxon-signed-rank" : "mann-whitney"));
    json_object_set_new(
        o, "test_method",
        json_string(pks_mwu_method_name(r->paired ? r->pair.test.method : r->s.mwu.method)));
    json_object_set_new(o, "mwu_method", json_string(pks_mwu_method_name(r->s.mwu.method)));
    json_object_set_new(o, "paired_rounds",
                        r->paired ? json_integer((json_int_t)r->pair.n) : json_null());
    json_object_set_new(o, "ratios_cv", r->paired ? num(r->pair.cv) : json_null());
    json_object_set_new(o, "paired_ci_half_width",
                        r->paired ? num(pks_paired_half_width(&r->pair)) : json_null());
    json_object_set_new(o, "noise_floor", r->noise_floor > 0 ? num(r->noise_floor) : json_null());
    json_object_set_new(o, "bar", num(r->d.bar));
    json_object_set_new(o, "decided_by_ci", json_boolean(r->d.noisy));
    json_object_set_new(o, "control", json_boolean(r->control));
    json_object_set_new(o, "drift_corrected", json_boolean(r->corrected));
    json_object_set_new(o, "paired_by_round",
                        r->corrected ? json_boolean(r->by_round) : json_null());
    json_object_set_new(o, "drift_group",
                        r->group != NULL ? json_string(r->group->name) : json_null());
    json_object_set_new(o, "machine_changed", json_boolean(r->machine_changed));
    json_object_set_new(o, "control_spread", r->corrected ? num(r->control_spread) : json_null());
    if (r->control)
        json_object_set_new(o, "verdict", json_string("control"));
    /* The uncorrected statistics, always: what --no-drift-correction would gate on. */
    char raw_why[200] = "";
    pkb_compare_why_raw(c, r, raw_why, sizeof raw_why);
    json_t *raw = json_object();
    json_object_set_new(raw, "verdict", json_string(pks_verdict_name(r->raw.d.verdict)));
    json_object_set_new(raw, "reason", raw_why[0] ? json_string(raw_why) : json_null());
    json_object_set_new(raw, "base_median_ns", num(r->raw.s.base.median));
    json_object_set_new(raw, "new_median_ns", num(r->raw.s.cand.median));
    json_object_set_new(raw, "ratio", num(r->raw.s.ratio.estimate));
    json_object_set_new(raw, "ratio_ci",
                        json_pack("[o, o]", num(r->raw.s.ratio.lo), num(r->raw.s.ratio.hi)));
    json_object_set_new(raw, "delta", num(r->raw.s.delta));
    json_object_set_new(raw, "p_holm", num(r->raw.p_holm));
    json_object_set_new(o, "raw", raw);
    if (c->sides) /* pkbench ab: the look its statistics are from */
        json_object_set_new(o, "ab",
                            json_pack("{s:o, s:i, s:o, s:b, s:b, s:b, s:b}", "look",
                                      r->ab_look >= 0 ? json_integer(r->ab_look + 1) : json_null(),
                                      "rounds", r->ab_rounds, "level", num(r->ab_level), "decided",
                                      r->ab_decided, "unchanged", r->ab_unchanged, "last_look",
                                      r->ab_final, "open", r->ab_open));
    return o;
}

static json_t *interval_json(const pks_interval *i)
{
    return json_pack("{s:o, s:o, s:[o, o]}", "ratio", num(i->estimate), "delta",
                     num(i->estimate - 1), "ratio_ci", num(i->lo), num(i->hi));
}

/* The drift object: what was measured, from which controls, and whether it was applied. */
static json_t *drift_json(const pkb_compare *c)
{
    const pkb_drift *d = &c->drift;
    char line[512];
    pkb_compare_drift_line(c, line, sizeof line);
    json_t *o = json_object();
    json_object_set_new(o, "available", json_boolean(d->available));
    json_object_set_new(o, "why_not", d->available ? json_null() : json_string(d->why_not));
    json_object_set_new(o, "applied", json_boolean(c->drift_applied));
    json_object_set_new(o, "line", json_string(line));
    json_object_set_new(o, "limit", num(d->opts.limit));
    json_object_set_new(o, "disagreement_threshold", num(d->opts.threshold));
    json_object_set_new(o, "uneven_above", num(PKB_DRIFT_UNEVEN_ABOVE));
    json_t *controls = json_array(), *groups = json_array();
    for (size_t i = 0; i < d->ncontrols; i++) {
        json_t *k = interval_json(&d->controls[i].ratio);
        json_object_set_new(k, "name", json_string(d->controls[i].name));
        json_object_set_new(k, "scenario", json_string(d->controls[i].scenario));
        json_array_append_new(controls, k);
    }
    for (size_t i = 0; i < d->ngroups; i++) {
        const pkb_drift_group *g = &d->groups[i];
        char why[200];
        pkb_drift_why(d, g, why, sizeof why);
        json_t *k = interval_json(&g->ratio);
        json_t *members = json_array();
        for (size_t m = 0; m < g->n; m++)
            json_array_append_new(members, json_string(d->controls[g->members[m]].name));
        json_object_set_new(k, "name", json_string(g->name));
        json_object_set_new(k, "controls", members);
        json_object_set_new(k, "spread", num(g->spread));
        json_object_set_new(k, "state", json_string(pkb_drift_state_name(g->state)));
        json_object_set_new(k, "why", why[0] ? json_string(why) : json_null());
        json_array_append_new(groups, k);
    }
    json_object_set_new(o, "estimate",
                        d->available ? interval_json(&d->groups[0].ratio) : json_null());
    json_object_set_new(o, "groups", groups);
    json_object_set_new(o, "controls", controls);
    return o;
}

static json_t *names_json(char **names, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(names[i]));
    return a;
}

/* The options the comparison ran with, env_keys split at the commas. */
static json_t *options_json(const pkb_compare_options *o)
{
    json_t *keys = json_array();
    const char *p = o->env_keys;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len > 0)
            json_array_append_new(keys, json_stringn(p, len));
        p += len + (p[len] == ',');
    }
    json_t *options = json_object();
    json_object_set_new(options, "alpha", num(o->alpha));
    json_object_set_new(options, "threshold", num(o->threshold));
    json_object_set_new(options, "cv_limit", o->cv_limit > 0 ? num(o->cv_limit) : json_null());
    json_object_set_new(options, "filter", o->filter ? json_string(o->filter) : json_null());
    json_object_set_new(options, "bootstrap_iterations", json_integer((json_int_t)o->iterations));
    json_object_set_new(options, "seed", json_integer((json_int_t)(o->seed & INT64_MAX)));
    json_object_set_new(options, "env_keys", keys);
    json_object_set_new(options, "strict_env", json_boolean(o->strict_env));
    json_object_set_new(options, "drift_correction", json_boolean(!o->no_drift_correction));
    json_object_set_new(options, "drift_limit", num(o->drift_limit));
    return options;
}

/* The environment keys or run settings that differ: [{key, base, new}]. */
static json_t *diffs_json(const pkb_compare_env_diff *d, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            a, json_pack("{s:s, s:s, s:s}", "key", d[i].key, "base", d[i].base, "new", d[i].cand));
    return a;
}

static json_t *geomean_json(const pkb_compare *c)
{
    json_t *geo = json_object();
    json_object_set_new(geo, "n", json_integer((json_int_t)c->geomean_n));
    json_object_set_new(geo, "base_median_ns", num(c->geomean_base));
    json_object_set_new(geo, "new_median_ns", num(c->geomean_cand));
    json_object_set_new(geo, "ratio", num(c->geomean));
    json_object_set_new(geo, "delta", num(c->geomean - 1));
    return geo;
}

/* The counts, as decided and raw. */
static void counts_json(const pkb_compare *c, json_t *doc)
{
    json_object_set_new(doc, "counts",
                        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "regressed",
                                  (json_int_t)c->regressed, "improved", (json_int_t)c->improved,
                                  "unchanged", (json_int_t)c->unchanged, "undecidable",
                                  (json_int_t)c->undecidable, "missing", (json_int_t)c->missing,
                                  "not_run", (json_int_t)c->environmental));
    json_object_set_new(doc, "raw_counts",
                        json_pack("{s:I, s:I, s:I, s:I}", "regressed", (json_int_t)c->raw_regressed,
                                  "improved", (json_int_t)c->raw_improved, "unchanged",
                                  (json_int_t)c->raw_unchanged, "undecidable",
                                  (json_int_t)c->raw_undecidable));
}

json_t *pkb_compare_json(const pkb_compare *c)
{
    const pkb_compare_options *o = &c->opts;
    json_t *series = json_array(), *skipped = json_array();
    json_t *regressed = json_array(), *undecidable = json_array();
    for (size_t i = 0; i < c->nrows; i++) {
        json_array_append_new(series, row_json(c, &c->rows[i]));
        if (c->rows[i].control)
            continue;
        if (c->rows[i].d.verdict == PKS_REGRESSED)
            json_array_append_new(regressed, json_string(c->rows[i].name));
        if (c->rows[i].d.verdict == PKS_UNDECIDABLE)
            json_array_append_new(undecidable, json_string(c->rows[i].name));
    }
    static const char *const kinds[] = {
        [PKB_NOTE_INFO] = "info",
        [PKB_NOTE_MISSING] = "missing",
        [PKB_NOTE_ENVIRONMENT] = "environmental",
    };
    json_t *missing = names_json(c->absent, c->nabsent), *not_run = json_array();
    for (size_t i = 0; i < c->nskipped; i++) {
        const pkb_compare_note *n = &c->skipped[i];
        json_array_append_new(skipped, json_pack("{s:s, s:s, s:s}", "name", n->name, "why", n->why,
                                                 "counts_as", kinds[n->kind]));
        if (n->kind == PKB_NOTE_MISSING)
            json_array_append_new(missing, json_string(n->name));
        if (n->kind == PKB_NOTE_ENVIRONMENT)
            json_array_append_new(not_run, json_string(n->name));
    }
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("pkbench-compare"));
    json_object_set_new(doc, "schema_version", json_integer(1));
    json_object_set_new(doc, "base", json_string(c->base_path));
    json_object_set_new(doc, "new", c->cand_path ? json_string(c->cand_path) : json_null());
    json_object_set_new(doc, "baseline_contender",
                        o->baseline_contender ? json_string(o->baseline_contender) : json_null());
    json_object_set_new(doc, "options", options_json(o));
    json_object_set_new(doc, "noise_floor",
                        json_pack("{s:b, s:o}", "known", c->noise_floor_known, "alpha",
                                  c->noise_floor_known ? num(c->noise_floor_alpha) : json_null()));
    if (c->cand_path != NULL)
        json_object_set_new(doc, "drift", drift_json(c));
    if (c->sides)
        json_object_set_new(doc, "ab",
                            json_pack("{s:s, s:b, s:s, s:b, s:I, s:I, s:i, s:o}", "base",
                                      c->ab_base, "base_dirty", c->ab_base_dirty, "head",
                                      c->ab_head, "head_dirty", c->ab_head_dirty, "series",
                                      (json_int_t)c->ab_pairs, "looks", (json_int_t)c->ab_looks,
                                      "rounds", c->ab_rounds, "stopped",
                                      c->ab_stopped ? json_string(c->ab_stopped) : json_null()));
    json_object_set_new(doc, "environment_differs", diffs_json(c->env, c->nenv));
    json_object_set_new(doc, "settings_differ", diffs_json(c->settings, c->nsettings));
    json_object_set_new(doc, "series", series);
    json_object_set_new(doc, "geomean", geomean_json(c));
    json_object_set_new(doc, "only_in_base", names_json(c->only_base, c->nonly_base));
    json_object_set_new(doc, "only_in_new", names_json(c->only_cand, c->nonly_cand));
    json_object_set_new(doc, "not_compared", skipped);
    json_object_set_new(doc, "missing_in_new", missing);
    json_object_set_new(doc, "not_run_in_new", not_run);
    counts_json(c, doc);
    json_object_set_new(doc, "controls", json_integer((json_int_t)c->controls));
    json_object_set_new(doc, "machine_changed", json_integer((json_int_t)c->machine_changed));
    json_object_set_new(doc, "regressed", regressed);
    json_object_set_new(doc, "undecidable", undecidable);
    json_object_set_new(doc, "status", json_integer(c->status));
    return doc;
}

/* ==== Entry point ============================================================================ */

int pkb_compare_render(const pkb_compare *c, pkb_compare_format format, char **text)
{
    *text = NULL;
    if (format == PKB_COMPARE_JSON) {
        json_t *doc = pkb_compare_json(c);
        *text = pkb_json_text(doc, 2);
        json_decref(doc);
        return *text != NULL ? 0 : -ENOMEM;
    }
    pkb_buf b = {0};
    if (format == PKB_COMPARE_MD)
        render_md(c, &b);
    else
        render_text(c, &b);
    if (b.failed || b.data == NULL) {
        pkb_buf_free(&b);
        return -ENOMEM;
    }
    *text = b.data;
    return 0;
}
