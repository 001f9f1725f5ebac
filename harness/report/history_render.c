/*
 * history_render — a history (history.h) as Markdown, as aligned text for a terminal, as JSON,
 * and as figures: per host and scenario, every series over the history with its change points
 * marked. All of them read one model.
 */
#define _GNU_SOURCE
#include "report/history.h"

#include "common/files.h"
#include "common/md.h"
#include "common/term.h"
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most revision labels a figure's axis shows: more would overlap. */
#define AXIS_LABELS 24

static const pkb_identity *id_at(const pkb_history *h, const pkb_history_host *host, size_t pos)
{
    return &h->files.files[host->files[pos]].id;
}

/* A value as the history measures it: a time, or a ratio. */
static void value_text(const pkb_history *h, double v, pkb_buf *b)
{
    if (h->opts.ratio)
        pkb_fmt_ratio(b, v);
    else
        pkb_fmt_time(b, v);
}

/* "+5.0% [+4.1%, +5.9%]" */
static void change_text(const pks_changepoint *cp, pkb_buf *b)
{
    pkb_fmt_delta(b, cp->ratio.estimate - 1);
    pkb_buf_puts(b, " [");
    pkb_fmt_delta(b, cp->ratio.lo - 1);
    pkb_buf_puts(b, ", ");
    pkb_fmt_delta(b, cp->ratio.hi - 1);
    pkb_buf_puts(b, "]");
}

/* "abc123def456..0123456789ab" (git's range: the commits after the first, up to the second), or
 * "at abc123def456" when both runs measured one revision. */
static void range_text(const pkb_history *h,
                       const pkb_history_host *host,
                       const pkb_history_change *c,
                       bool md,
                       pkb_buf *b)
{
    const char *ra = id_at(h, host, c->before)->revision, *rb = id_at(h, host, c->after)->revision;
    pkb_buf r = {0};
    if (strcmp(ra, rb) == 0)
        pkb_buf_printf(&r, "at %s", ra);
    else
        pkb_buf_printf(&r, "%s..%s", ra, rb);
    if (md && !r.failed)
        pkb_md_code(b, r.data);
    else
        pkb_buf_puts(b, r.failed ? "?" : r.data);
    b->failed |= r.failed;
    pkb_buf_free(&r);
    pkb_buf_printf(b, " (files %zu→%zu)", c->before + 1, c->after + 1);
}

static void p_text(double p, pkb_buf *b)
{
    if (p < 1e-4)
        pkb_buf_printf(b, "%.1e", p);
    else
        pkb_buf_printf(b, "%.4f", p);
}

static size_t count_changes(const pkb_history_host *host, size_t *with)
{
    size_t n = 0;
    *with = 0;
    for (size_t i = 0; i < host->nseries; i++) {
        n += host->series[i].nchanges;
        *with += host->series[i].nchanges > 0;
    }
    return n;
}

/* ==== figures ================================================================================= */

/* The scenarios of a host, each once: the first series of each, by index. */
static size_t scenarios(const pkb_history_host *host, size_t *first)
{
    size_t n = 0;
    for (size_t i = 0; i < host->nseries; i++) {
        size_t k = 0;
        while (k < n && (strcmp(host->series[first[k]].suite, host->series[i].suite) != 0 ||
                         strcmp(host->series[first[k]].scenario, host->series[i].scenario) != 0))
            k++;
        if (k == n)
            first[n++] = i;
    }
    return n;
}

static bool same_scenario(const pkb_history_series *a, const pkb_history_series *b)
{
    return strcmp(a->suite, b->suite) == 0 && strcmp(a->scenario, b->scenario) == 0;
}

static void figure_what(const pkb_history_host *host, const pkb_history_series *x, pkb_buf *b)
{
    pkb_buf_printf(b, "%s-%s-%s-%s", host->host, host->os, x->suite, x->scenario);
}

/* The median of a series' values: what its line is drawn relative to. */
static double series_median(const pkb_history_series *x)
{
    double *v = malloc((x->n > 0 ? x->n : 1) * sizeof *v), m = 1;
    if (v != NULL && x->n > 0 && pks_median(x->value, x->n, v, &m) != 0)
        m = 1;
    free(v);
    return m > 0 ? m : 1;
}

/* "processkit (median 1.522 ms)": a series' line in a figure's key. */
static void series_title(const pkb_history *h, const pkb_history_series *x, pkb_buf *b)
{
    pkb_buf_printf(b, "%s (median ", x->contender);
    value_text(h, series_median(x), b);
    pkb_buf_puts(b, ")");
}

/* The .dat of one figure: a block per series (history position, value relative to the series'
 * median over the history, the revision as an axis label on every k-th position), then the
 * change points (between which positions, the axis' low and high end, the change in words). */
static void figure_data(const pkb_history *h,
                        const pkb_history_host *host,
                        size_t first,
                        double lo,
                        double hi,
                        pkb_buf *b)
{
    size_t every = host->nfiles > AXIS_LABELS ? (host->nfiles + AXIS_LABELS - 1) / AXIS_LABELS : 1;
    size_t block = 0;
    const pkb_history_series *f = &host->series[first];
    for (size_t i = first; i < host->nseries; i++) {
        const pkb_history_series *x = &host->series[i];
        if (!same_scenario(x, f))
            continue;
        pkb_buf_printf(b, "%s# block %zu ", block > 0 ? "\n\n" : "", block);
        series_title(h, x, b);
        pkb_buf_puts(b, "\n");
        double m = series_median(x);
        block++;
        for (size_t k = 0; k < x->n; k++)
            pkb_buf_printf(b, "%zu\t%.6g\t%.7s\n", x->at[k] + 1, x->value[k] / m,
                           x->at[k] % every == 0 ? id_at(h, host, x->at[k])->revision : "");
    }
    pkb_buf_printf(b, "\n\n# block %zu change points\n", block);
    for (size_t i = first; i < host->nseries; i++) {
        const pkb_history_series *x = &host->series[i];
        for (size_t c = 0; same_scenario(x, f) && c < x->nchanges; c++) {
            pkb_buf_printf(b, "%.1f\t%.6g\t%.6g\t%s ",
                           (double)(x->changes[c].before + x->changes[c].after) / 2 + 1, lo, hi,
                           x->contender);
            pkb_fmt_delta(b, x->changes[c].cp.ratio.estimate - 1);
            pkb_buf_puts(b, "\n");
        }
    }
}

/* The figure's vertical range: every series' values relative to its own median, with a margin
 * (and room at the top for the change points' labels). */
static void figure_range(const pkb_history_host *host, size_t first, double *lo, double *hi)
{
    double small = INFINITY, big = -INFINITY;
    for (size_t i = first; i < host->nseries; i++) {
        const pkb_history_series *x = &host->series[i];
        if (!same_scenario(x, &host->series[first]))
            continue;
        double m = series_median(x);
        for (size_t k = 0; k < x->n; k++) {
            small = fmin(small, x->value[k] / m);
            big = fmax(big, x->value[k] / m);
        }
    }
    double span = big - small > 0.02 ? big - small : 0.02;
    *lo = small - 0.1 * span;
    *hi = big + 0.45 * span;
}

/* What both scripts of a figure say: where it comes from, its title and axis, its range. */
struct figure_text {
    pkb_buf what, source, title, ylabel;
    double lo, hi;
};

/* The gnuplot script: a line per series (the first gives the axis its revision labels), then the
 * change points as dashed lines with their labels. */
static void figure_gp(const pkb_history *h,
                      const pkb_history_host *host,
                      size_t first,
                      const struct figure_text *x,
                      pkb_figure *fig)
{
    const pkb_history_series *f = &host->series[first];
    pkb_buf *gp = &fig->gp;
    pkb_gp_head_named(gp, x->source.data, x->what.data, fig->stem, 1000, 500);
    pkb_buf_puts(gp, "set title ");
    pkb_gp_string(gp, x->title.data);
    pkb_buf_puts(gp, "\nset ylabel ");
    pkb_gp_string(gp, x->ylabel.data);
    pkb_buf_printf(gp,
                   "\nset xlabel 'file, in history order (revision)'\n"
                   "set key outside right top\nset grid ytics\nset xtics rotate by 45 right\n"
                   "set format y '%%.3f×'\nset yrange [%.6g:%.6g]\n",
                   x->lo, x->hi);
    pkb_buf_puts(gp, "plot ");
    size_t block = 0;
    bool changes = false;
    for (size_t i = first; i < host->nseries; i++) {
        if (!same_scenario(&host->series[i], f))
            continue;
        changes = changes || host->series[i].nchanges > 0;
        pkb_buf_printf(gp, "%sdat index %zu using 1:2%s with linespoints pt 7 ps 0.8 title ",
                       block > 0 ? ", \\\n     " : "", block, block == 0 ? ":xtic(3)" : "");
        pkb_buf key = {0};
        series_title(h, &host->series[i], &key);
        pkb_gp_string(gp, key.failed ? "" : key.data);
        gp->failed |= key.failed;
        pkb_buf_free(&key);
        block++;
    }
    if (changes)
        pkb_buf_printf(gp,
                       ", \\\n     dat index %zu using 1:2:(0):($3-$2) with vectors nohead dt 2 "
                       "lw 1.5 lc rgb '#d62728' title 'change point', \\\n     dat index %zu "
                       "using 1:3:4 with labels rotate by 90 right offset 0,-0.5 tc rgb "
                       "'#d62728' notitle",
                       block, block);
    pkb_buf_puts(gp, "\n");
    pkb_gp_tail(gp, fig->stem, 1000, 500);
}

/* The matplotlib script: the same lines, change points and axis, from the same .dat. */
static void figure_py(const struct figure_text *x, pkb_figure *fig)
{
    pkb_buf *py = &fig->py;
    pkb_py_head_named(py, x->source.data, x->what.data, fig->stem);
    pkb_py_assign(py, "TITLE", x->title.data);
    pkb_py_assign(py, "YLABEL", x->ylabel.data);
    pkb_buf_puts(py, "\n"
                     "blocks, names, block = [], [], -1\n"
                     "with open(DATA, encoding=\"utf-8\") as f:\n"
                     "    for line in f:\n"
                     "        if line.startswith(\"# block \"):\n"
                     "            block += 1\n"
                     "            blocks.append([])\n"
                     "            names.append(line.split(None, 3)[3].strip())\n"
                     "        elif line.strip() and not line.startswith(\"#\"):\n"
                     "            blocks[block].append(line.rstrip(\"\\n\").split(\"\\t\"))\n"
                     "fig, ax = plt.subplots(figsize=(10, 5), dpi=100)\n"
                     "for rows, name in zip(blocks[:-1], names[:-1]):\n"
                     "    ax.plot([float(r[0]) for r in rows], [float(r[1]) for r in rows], "
                     "marker=\"o\", ms=3, label=name)\n"
                     "ticks = [(float(r[0]), r[2]) for r in blocks[0] if len(r) > 2 and r[2]]\n"
                     "ax.set_xticks([t for t, _ in ticks], [l for _, l in ticks], rotation=45, "
                     "ha=\"right\")\n"
                     "for i, r in enumerate(blocks[-1]):\n"
                     "    ax.axvline(float(r[0]), color=\"#d62728\", ls=\"--\", lw=1.2, "
                     "label=\"change point\" if i == 0 else None)\n"
                     "    ax.annotate(r[3], (float(r[0]), float(r[2])), rotation=90, "
                     "va=\"top\", ha=\"right\", color=\"#d62728\", fontsize=8)\n"
                     "ax.yaxis.set_major_formatter(lambda v, _: f\"{v:.3f}\\u00d7\")\n"
                     "ax.set_ylim(float(blocks[-1][0][1]) if blocks[-1] else None, "
                     "float(blocks[-1][0][2]) if blocks[-1] else None)\n"
                     "ax.set_title(TITLE)\n"
                     "ax.set_xlabel(\"file, in history order (revision)\")\n"
                     "ax.set_ylabel(YLABEL)\n"
                     "ax.grid(axis=\"y\", alpha=0.3)\n");
    pkb_py_tail(py, "loc=\"upper left\", bbox_to_anchor=(1.01, 1), fontsize=8");
}

static int add_figure(const pkb_history *h,
                      const pkb_history_host *host,
                      size_t first,
                      const char *name,
                      pkb_figures *figs)
{
    const pkb_history_series *f = &host->series[first];
    struct figure_text x = {0};
    figure_what(host, f, &x.what);
    pkb_figure *fig = x.what.failed ? NULL : pkb_figures_add_named(figs, name, x.what.data);
    int rc = fig != NULL ? 0 : -ENOMEM;
    if (rc == 0) {
        figure_range(host, first, &x.lo, &x.hi);
        figure_data(h, host, first, x.lo, x.hi, &fig->dat);
        pkb_buf_printf(&x.source, "history of %zu files", host->nfiles);
        pkb_buf_puts(&x.ylabel, h->opts.ratio
                                    ? "ratio to the baseline, over its median in the history"
                                    : "median time, over the series' median in the history");
        pkb_buf_printf(&x.title, "%s · %s: %s/%s over %zu files", host->host, host->os, f->suite,
                       f->scenario, host->nfiles);
        if (x.source.failed || x.ylabel.failed || x.title.failed)
            rc = -ENOMEM;
    }
    if (rc == 0) {
        figure_gp(h, host, first, &x, fig);
        figure_py(&x, fig);
    }
    pkb_buf_free(&x.what);
    pkb_buf_free(&x.source);
    pkb_buf_free(&x.ylabel);
    pkb_buf_free(&x.title);
    return rc;
}

int pkb_history_figures(const pkb_history *h, const char *name, pkb_figures *figs)
{
    for (size_t i = 0; i < h->nhosts; i++) {
        const pkb_history_host *host = &h->hosts[i];
        size_t *first = calloc(host->nseries > 0 ? host->nseries : 1, sizeof *first);
        if (first == NULL)
            return -ENOMEM;
        size_t n = scenarios(host, first);
        int rc = 0;
        for (size_t k = 0; rc == 0 && k < n; k++)
            rc = add_figure(h, host, first[k], name, figs);
        free(first);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ==== Markdown ================================================================================ */

static void md_order(const pkb_history *h, const pkb_history_host *host, pkb_buf *b)
{
    pkb_buf_printf(b, "%zu file%s, ", host->nfiles, host->nfiles == 1 ? "" : "s");
    if (host->ancestry)
        pkb_buf_printf(b,
                       "in the order of the repository's history (`git rev-list --topo-order` "
                       "in %s; a dirty tree after its commit, runs of one revision by their "
                       "start).\n\n",
                       h->opts.repo != NULL ? h->opts.repo : ".");
    else
        pkb_buf_printf(b, "ordered by time: %s.\n\n", host->order_note);
}

static void md_changes(const pkb_history *h, const pkb_history_host *host, pkb_buf *b)
{
    size_t with;
    size_t n = count_changes(host, &with);
    pkb_buf_puts(b, "### Change points\n\n");
    if (n == 0) {
        pkb_buf_printf(b, "No change point in any of the %zu series.\n\n", host->nseries);
        return;
    }
    pkb_buf_printf(b,
                   "%zu change point%s in %zu of %zu series. *Between* names the revisions of "
                   "the two files around the change (`git log A..B` lists the commits it lies "
                   "in); *before* and *after* are the geometric means of the %s on each side, up "
                   "to the neighbouring change points; *also changed* names the environment keys "
                   "that differ between those two files.\n\n",
                   n, n == 1 ? "" : "s", with, host->nseries, h->opts.ratio ? "ratios" : "medians");
    pkb_buf_puts(b, "| series | between | before | after | change [95% CI] | p | also changed |\n"
                    "|---|---|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < host->nseries; i++) {
        const pkb_history_series *x = &host->series[i];
        for (size_t c = 0; c < x->nchanges; c++) {
            const pkb_history_change *ch = &x->changes[c];
            pkb_buf_puts(b, "| ");
            pkb_md_code(b, x->name);
            pkb_buf_puts(b, " | ");
            range_text(h, host, ch, true, b);
            pkb_buf_puts(b, " | ");
            value_text(h, ch->cp.before, b);
            pkb_buf_puts(b, " | ");
            value_text(h, ch->cp.after, b);
            pkb_buf_puts(b, " | ");
            bool strong = ch->cp.ratio.estimate > 1;
            pkb_buf_puts(b, strong ? "**" : "");
            change_text(&ch->cp, b);
            pkb_buf_puts(b, strong ? "**" : "");
            pkb_buf_puts(b, " | ");
            p_text(ch->cp.p, b);
            pkb_buf_puts(b, " | ");
            for (size_t k = 0; k < ch->nenv_keys; k++) {
                pkb_buf_puts(b, k > 0 ? ", " : "");
                pkb_md_code(b, ch->env_keys[k]);
            }
            pkb_buf_puts(b, ch->nenv_keys == 0 ? "— |\n" : " |\n");
        }
    }
    pkb_buf_puts(b, "\n");
    if (with < host->nseries) {
        pkb_buf_printf(b, "No change point in the other %zu series:", host->nseries - with);
        for (size_t i = 0, k = 0; i < host->nseries; i++) {
            if (host->series[i].nchanges > 0)
                continue;
            pkb_buf_puts(b, k++ > 0 ? ", " : " ");
            pkb_md_code(b, host->series[i].name);
        }
        pkb_buf_puts(b, ".\n\n");
    }
}

static void md_files(const pkb_history *h, const pkb_history_host *host, pkb_buf *b)
{
    pkb_buf_puts(b, "### Files in history order\n\n| # | revision | commit date | started | file "
                    "|\n|---:|---|---|---|---|\n");
    for (size_t i = 0; i < host->nfiles; i++) {
        const pkb_many_file *f = &h->files.files[host->files[i]];
        pkb_buf_printf(b, "| %zu | ", i + 1);
        pkb_md_code(b, f->id.revision);
        pkb_buf_puts(b, " | ");
        pkb_md_text(b, f->id.commit_time != NULL ? f->id.commit_time : "n/a");
        pkb_buf_puts(b, " | ");
        pkb_md_text(b, f->id.created != NULL ? f->id.created : "n/a");
        pkb_buf_puts(b, " | ");
        pkb_md_code(b, f->path);
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

void pkb_history_markdown(const pkb_history *h, const char *name, bool figures, pkb_buf *b)
{
    double alpha = h->opts.cp.alpha > 0 ? h->opts.cp.alpha : PKS_CHANGEPOINT_ALPHA;
    size_t min = h->opts.cp.min_size > 0 ? h->opts.cp.min_size : PKS_CHANGEPOINT_MIN_SIZE;
    pkb_buf_printf(b, "# History of %zu results files\n\n", h->files.n);
    pkb_buf_printf(b,
                   "Rendered by `pkbench history` from the files listed below; generated, not "
                   "edited by hand. A series' value in a file is %s. A change point is where a "
                   "series' level moved: placed by E-divisive means and kept when Student's "
                   "t-test between the files on either side gives p < %g, with at least %zu "
                   "files on each side%s (METHODOLOGY.md, \"How change points are found\"). The "
                   "change is the ratio of the geometric means after and before, with its 95%% "
                   "CI.\n\n",
                   h->opts.ratio ? "its same-host ratio to its scenario's baseline contender in "
                                   "that file (`--ratio`), which cancels what the machine did to "
                                   "every series between runs"
                                 : "its median time per iteration",
                   alpha, min,
                   h->opts.cp.min_magnitude > 0 ? " and a change beyond the minimum" : "");
    if (h->files.nskipped > 0)
        pkb_buf_printf(b, "%zu JSON file%s that %s not pkbench results skipped.\n\n",
                       h->files.nskipped, h->files.nskipped == 1 ? "" : "s",
                       h->files.nskipped == 1 ? "is" : "are");
    for (size_t i = 0; i < h->nhosts; i++) {
        const pkb_history_host *host = &h->hosts[i];
        pkb_buf_puts(b, "## ");
        pkb_md_text(b, host->host);
        pkb_buf_puts(b, " · ");
        pkb_md_text(b, host->os);
        pkb_buf_puts(b, "\n\n");
        md_order(h, host, b);
        md_changes(h, host, b);
        if (figures) {
            size_t *first = calloc(host->nseries > 0 ? host->nseries : 1, sizeof *first);
            size_t n = first != NULL ? scenarios(host, first) : 0;
            b->failed |= first == NULL;
            for (size_t k = 0; k < n; k++) {
                pkb_buf what = {0};
                figure_what(host, &host->series[first[k]], &what);
                char stem[256];
                pkb_figure_stem_named(name, what.data != NULL ? what.data : "", stem, sizeof stem);
                pkb_buf_printf(b, "#### %s/%s\n\n", host->series[first[k]].suite,
                               host->series[first[k]].scenario);
                pkb_md_figure(b, stem, "every series over the history, change points marked");
                b->failed |= what.failed;
                pkb_buf_free(&what);
            }
            free(first);
        }
        md_files(h, host, b);
    }
}

/* ==== the terminal ============================================================================ */

void pkb_history_terminal(const pkb_history *h, bool color, pkb_buf *out)
{
    for (size_t i = 0; i < h->nhosts; i++) {
        const pkb_history_host *host = &h->hosts[i];
        size_t with;
        size_t n = count_changes(host, &with);
        pkb_term_line(out, color, PKB_TONE_BOLD,
                      "%s · %s: %zu files, %zu series, %zu change "
                      "point%s",
                      host->host, host->os, host->nfiles, host->nseries, n, n == 1 ? "" : "s");
        if (!host->ancestry)
            pkb_term_line(out, color, PKB_TONE_WARN, "  ordered by time: %s", host->order_note);
        pkb_buf_puts(out, "\n");
        if (n == 0)
            continue;
        pkb_table *t = pkb_table_new("llrrrl");
        if (t == NULL) {
            out->failed = true;
            return;
        }
        pkb_table_heads(t, "series", "between", "before", "after", "change [95% CI]",
                        "also changed", NULL);
        for (size_t k = 0; k < host->nseries; k++) {
            const pkb_history_series *x = &host->series[k];
            for (size_t c = 0; c < x->nchanges; c++) {
                const pkb_history_change *ch = &x->changes[c];
                pkb_buf cell = {0};
                pkb_table_add(t, 0, "%s", x->name);
                range_text(h, host, ch, false, &cell);
                pkb_table_take(t, 0, &cell, out);
                value_text(h, ch->cp.before, &cell);
                pkb_table_take(t, 0, &cell, out);
                value_text(h, ch->cp.after, &cell);
                pkb_table_take(t, 0, &cell, out);
                change_text(&ch->cp, &cell);
                pkb_table_take(t, ch->cp.ratio.estimate > 1 ? PKB_TONE_BAD : PKB_TONE_GOOD, &cell,
                               out);
                for (size_t e = 0; e < ch->nenv_keys; e++)
                    pkb_buf_printf(&cell, "%s%s", e > 0 ? ", " : "", ch->env_keys[e]);
                if (ch->nenv_keys == 0)
                    pkb_buf_puts(&cell, "-");
                pkb_table_take(t, 0, &cell, out);
            }
        }
        pkb_table_finish(t, color, out);
    }
}

/* ==== JSON ==================================================================================== */

static json_t *
change_json(const pkb_history *h, const pkb_history_host *host, const pkb_history_change *c)
{
    json_t *keys = json_array();
    for (size_t k = 0; keys != NULL && k < c->nenv_keys; k++)
        json_array_append_new(keys, json_string(c->env_keys[k]));
    return json_pack("{s:I, s:I, s:I, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:o?}", "index",
                     (json_int_t)c->cp.index, "file_before", (json_int_t)c->before, "file_after",
                     (json_int_t)c->after, "revision_before", id_at(h, host, c->before)->revision,
                     "revision_after", id_at(h, host, c->after)->revision, "before", c->cp.before,
                     "after", c->cp.after, "ratio", c->cp.ratio.estimate, "lo", c->cp.ratio.lo,
                     "hi", c->cp.ratio.hi, "p", c->cp.p, "also_changed", keys);
}

static json_t *
series_json(const pkb_history *h, const pkb_history_host *host, const pkb_history_series *x)
{
    json_t *points = json_array(), *changes = json_array();
    for (size_t k = 0; points != NULL && k < x->n; k++)
        json_array_append_new(points, json_pack("[I, f]", (json_int_t)x->at[k], x->value[k]));
    for (size_t c = 0; changes != NULL && c < x->nchanges; c++)
        json_array_append_new(changes, change_json(h, host, &x->changes[c]));
    return json_pack("{s:s, s:s, s:s, s:s, s:o?, s:o?}", "suite", x->suite, "name", x->name,
                     "scenario", x->scenario, "contender", x->contender, "points", points,
                     "changes", changes);
}

json_t *pkb_history_json(const pkb_history *h)
{
    json_t *hosts = json_array();
    for (size_t i = 0; hosts != NULL && i < h->nhosts; i++) {
        const pkb_history_host *host = &h->hosts[i];
        json_t *files = json_array(), *series = json_array();
        for (size_t k = 0; files != NULL && k < host->nfiles; k++) {
            const pkb_many_file *f = &h->files.files[host->files[k]];
            json_array_append_new(
                files, json_pack("{s:s, s:s, s:s?, s:o, s:s?, s:s?}", "path", f->path, "revision",
                                 f->id.revision, "commit", f->id.commit, "dirty",
                                 f->id.dirty < 0 ? json_null() : json_boolean(f->id.dirty),
                                 "commit_time", f->id.commit_time, "created", f->id.created));
        }
        for (size_t k = 0; series != NULL && k < host->nseries; k++)
            json_array_append_new(series, series_json(h, host, &host->series[k]));
        json_array_append_new(hosts,
                              json_pack("{s:s, s:s, s:b, s:s?, s:o?, s:o?}", "host", host->host,
                                        "os", host->os, "ancestry", host->ancestry, "order_note",
                                        host->order_note, "files", files, "series", series));
    }
    return json_pack(
        "{s:s, s:i, s:s, s:f, s:I, s:f, s:o?}", "schema", "pkbench-history", "schema_version", 1,
        "value", h->opts.ratio ? "ratio" : "median_ns", "alpha",
        h->opts.cp.alpha > 0 ? h->opts.cp.alpha : PKS_CHANGEPOINT_ALPHA, "min_size",
        (json_int_t)(h->opts.cp.min_size > 0 ? h->opts.cp.min_size : PKS_CHANGEPOINT_MIN_SIZE),
        "min_magnitude", h->opts.cp.min_magnitude, "hosts", hosts);
}

int pkb_history_write(const pkb_history *h,
                      const char *out_dir,
                      const char *name,
                      const pkb_report_options *opts,
                      char *err,
                      size_t err_len)
{
    bool plots = opts == NULL || !opts->no_plots;
    pkb_buf md = {0};
    pkb_figures figs = {0};
    pkb_history_markdown(h, name, plots, &md);
    json_t *doc = pkb_history_json(h);
    int rc = doc == NULL ? -ENOMEM : 0;
    if (rc == 0 && plots)
        rc = pkb_history_figures(h, name, &figs);
    if (rc != 0)
        rc = pkb_fail(err, err_len, rc, "rendering %s: out of memory", name);
    else
        rc = pkb_report_write_doc(name, &md, doc, &figs, out_dir, opts, err, err_len);
    json_decref(doc);
    pkb_figures_free(&figs);
    pkb_buf_free(&md);
    return rc;
}
