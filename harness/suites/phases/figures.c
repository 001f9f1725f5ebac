/*
 * figures — the phases report's figure: one stacked bar per reconciled composite, built from
 * the same numbers as the reconciliation table: the base (os_spawn_plain, or the phase series the
 * composite builds on) at the bottom, then each primitive
 * the composite contains, each in its own colour, then the residual as its own hatched segment
 * (above the sum when the measured composite is larger, overlapping the top of the stack when it
 * is smaller), the measured mean ± sd as a black point with error bars, and beside each bar every
 * repetition of the composite (disturbed ones as red crosses), so its spread is seen.
 *
 * Files, into the staging directory (stem = <name>-reconciliation, sanitized):
 *
 *     <stem>.dat   block 0: one row per segment (bar, kind, label, bottom, top in µs);
 *                  block 1: one row per bar (bar, composite, measured mean, sd, sum of parts);
 *                  block 2: one row per repetition of a composite (bar, offset, µs, disturbed)
 *     <stem>.gp    gnuplot: <stem>.gnuplot.png (pngcairo, else png) and <stem>.gnuplot.svg
 *     <stem>.py    matplotlib (Agg): <stem>.matplotlib.png
 *
 * The scripts name the segments' kinds (their legend) and the bars' labels, never a number: the
 * figures come from the .dat, which comes from the results file. report/figure.h's pipeline
 * writes them and runs both tools, as for every suite's figures.
 */
#define _GNU_SOURCE
#include "suites/phases/view.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define COLOR_PLAIN    "#E69F00" /* the baseline's orange, as in the scenario figures */
#define COLOR_RESIDUAL "#555555"

/* Okabe-Ito without its orange, then some of Tol's muted colours: one per primitive, in order
 * of first appearance. */
static const char *const palette[] = {"#0072B2", "#56B4E9", "#009E73", "#F0E442", "#D55E00",
                                      "#CC79A7", "#332288", "#999933", "#AA4499", "#44AA99"};
#define NPALETTE (sizeof palette / sizeof palette[0])

/* The segment kinds: 0 is os_spawn_plain, then every other base and primitive in order of first
 * appearance,
 * then the residual. */
struct kinds {
    const char *name[PKB__MAX_PARTS * 4 + 2];
    size_t n;
};

static size_t kind_of(struct kinds *k, const char *name)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->name[i], name) == 0)
            return i;
    if (k->n == sizeof k->name / sizeof k->name[0] - 1)
        return k->n - 1; /* cannot happen: rows have at most PKB__MAX_PARTS parts */
    k->name[k->n] = name;
    return k->n++;
}

static const char *kind_color(size_t kind)
{
    return kind == 0 ? COLOR_PLAIN : palette[(kind - 1) % NPALETTE];
}

/* A name for a data file column: no tabs or newlines. */
static void tsv_name(pkb_buf *b, const char *s)
{
    for (; *s; s++)
        pkb_buf_printf(b, "%c", *s == '\t' || *s == '\n' || *s == '\r' ? '_' : *s);
}

/* What a row of the .dat is written from. */
struct dat {
    const pkb_results *r;
    const pkb__phases_view *v;
    struct kinds *k;
    size_t residual; /* the residual's kind */
};

/* Block 0: bar's segments, its base, each primitive on top, then the residual. */
static void seg_rows(const struct dat *d, const pkb__recon_row *row, size_t bar, pkb_buf *b)
{
    const pkb__phase_series *base = &d->v->series[row->base];
    pkb_buf_printf(b, "seg\t%zu\t%zu\t", bar, kind_of(d->k, row->base_name));
    tsv_name(b, row->base_name);
    pkb_buf_printf(b, "\t0\t%.6f\n", base->mean / 1e3);
    double at = base->mean;
    for (size_t p = 0; p < row->nparts; p++) {
        const char *name = PKB__NAME(d->r, row->parts[p]);
        double mean = d->v->series[row->parts[p]].mean;
        pkb_buf_printf(b, "seg\t%zu\t%zu\t", bar, kind_of(d->k, name));
        tsv_name(b, name);
        pkb_buf_printf(b, "\t%.6f\t%.6f\n", at / 1e3, (at + mean) / 1e3);
        at += mean;
    }
    double lo = fmin(row->rec.predicted_ns, row->rec.measured_ns);
    double hi = fmax(row->rec.predicted_ns, row->rec.measured_ns);
    pkb_buf_printf(b, "seg\t%zu\t%zu\tresidual\t%.6f\t%.6f\n", bar, d->residual, lo / 1e3,
                   hi / 1e3);
}

/* Block 1: the bar's composite, its measured mean and sd, and the sum of its parts. */
static void bar_row(const struct dat *d, const pkb__recon_row *row, size_t bar, pkb_buf *b)
{
    const pkb__phase_series *c = &d->v->series[row->composite];
    pkb_buf_printf(b, "bar\t%zu\t", bar);
    tsv_name(b, PKB__NAME(d->r, row->composite));
    pkb_buf_printf(b, "\t%.6f\t%.6f\t%.6f\n", c->mean / 1e3, isnan(c->sd) ? 0 : c->sd / 1e3,
                   row->rec.predicted_ns / 1e3);
}

/* Block 2: every repetition of the bar's composite, spread a little beside it. */
static void rep_rows(const struct dat *d, const pkb__recon_row *row, size_t bar, pkb_buf *b)
{
    const pkb_results_series *s = &d->r->series[row->composite];
    const json_t *flags = json_object_get(s->json, "disturbed");
    if (flags == NULL)
        flags = json_object_get(s->json, "noisy");
    for (size_t k = 0; k < s->n; k++)
        pkb_buf_printf(b, "rep\t%zu\t%.3f\t%.6f\t%d\n", bar,
                       0.39 + 0.08 * ((double)((k * 7) % 11) / 10.0 - 0.5), s->samples[k] / 1e3,
                       json_is_true(json_array_get(flags, k)));
}

/* The .dat's blocks in order, each a header and then a bar's rows per reconciled composite. */
static const struct {
    const char *head;
    void (*rows)(const struct dat *d, const pkb__recon_row *row, size_t bar, pkb_buf *b);
} blocks[] = {
    {"# block 0, one row per segment\n# seg\tbar\tkind\tlabel\tbottom\ttop\n", seg_rows},
    {"\n\n# block 1, one row per bar\n# bar\tbar\tcomposite\tmeasured\tsd\tsum\n", bar_row},
    {"\n\n# block 2, every repetition of each composite, beside its bar\n"
     "# rep\tbar\toffset\tus\tdisturbed\n",
     rep_rows},
};

static void write_dat(
    const pkb_results *r, const pkb__phases_view *v, struct kinds *k, size_t residual, pkb_buf *b)
{
    const struct dat d = {.r = r, .v = v, .k = k, .residual = residual};
    pkb_buf_puts(b, "# pkbench report data, from ");
    pkb_buf_sanitized(b, r->file);
    pkb_buf_puts(b, ": the phases reconciliation, in µs\n");
    for (size_t blk = 0; blk < sizeof blocks / sizeof blocks[0]; blk++) {
        pkb_buf_puts(b, blocks[blk].head);
        size_t bar = 0;
        for (size_t i = 0; i < v->nrows; i++)
            if (v->rows[i].complete)
                blocks[blk].rows(&d, &v->rows[i], bar++, b);
    }
}

static const char title[] =
    "Where a start goes: base + primitives + residual, against the measured mean";
static const char ylabel[] = "mean wall time per spawn+wait (µs)";
static const char residual_label[] = "residual (measured − sum of the parts)";

static void write_gp(const pkb_results *r,
                     const pkb__phases_view *v,
                     const struct kinds *k,
                     const char *st,
                     pkb_buf *b)
{
    pkb_gp_head(b, r, "the phases reconciliation", st, 1200, 650);
    pkb_buf_puts(b, "set title ");
    pkb_gp_string(b, title);
    pkb_buf_puts(b, "\nset ylabel ");
    pkb_gp_string(b, ylabel);
    pkb_buf_printf(b,
                   "\nset xrange [-0.6:%zu.6]\n"
                   "set yrange [0:*]\n"
                   "set offsets 0, 0, graph 0.05, 0\n"
                   "set grid ytics lt 1 lc rgb '#dddddd' lw 1\n"
                   "set border 3\n"
                   "set ytics nomirror\n"
                   "set key outside right top vertical\n"
                   "set xtics nomirror rotate by 25 right (",
                   v->ncomplete - 1);
    size_t bar = 0;
    for (size_t i = 0; i < v->nrows; i++) {
        if (!v->rows[i].complete)
            continue;
        pkb_buf_puts(b, bar > 0 ? ", " : "");
        pkb_gp_string(b, PKB__NAME(r, v->rows[i].composite));
        pkb_buf_printf(b, " %zu", bar++);
    }
    pkb_buf_puts(b, ")\nplot ");
    for (size_t kind = 0; kind < k->n; kind++) {
        bool residual = kind + 1 == k->n;
        pkb_buf_printf(b,
                       "dat index 0 using 2:($3 == %zu ? ($5 + $6) / 2 : 1/0):($2 - 0.3):"
                       "($2 + 0.3):5:6 with boxxyerror %s lc rgb '%s' title ",
                       kind,
                       residual ? "fs transparent pattern 4 border rgb '#333333'"
                                : "fs solid 0.9 border rgb '#333333'",
                       residual ? COLOR_RESIDUAL : kind_color(kind));
        pkb_gp_string(b, residual ? residual_label : k->name[kind]);
        pkb_buf_puts(b, ", \\\n     ");
    }
    pkb_buf_printf(b, "dat index 1 using 2:4:5 with yerrorbars lc rgb 'black' pt 7 ps 0.8 lw 1.5 "
                      "title 'measured mean ± sd', \\\n"
                      "     dat index 2 using ($2 + $3):($5 == 1 ? 1/0 : $4) with points pt 7 "
                      "ps 0.4 lc rgb '#333333' title 'repetition', \\\n"
                      "     dat index 2 using ($2 + $3):($5 == 1 ? $4 : 1/0) with points pt 2 "
                      "ps 0.8 lc rgb '#D55E00' title 'disturbed repetition'\n");
    pkb_gp_tail(b, st, 1200, 650);
}

static void write_py(const pkb_results *r, const struct kinds *k, const char *st, pkb_buf *b)
{
    pkb_py_head(b, r, "the phases reconciliation", st);
    pkb_py_assign(b, "TITLE", title);
    pkb_py_assign(b, "YLABEL", ylabel);
    pkb_py_assign(b, "RESIDUAL_LABEL", residual_label);
    pkb_buf_printf(b, "RESIDUAL = %zu\nCOLORS = [", k->n - 1);
    for (size_t kind = 0; kind + 1 < k->n; kind++)
        pkb_buf_printf(b, "%s\"%s\"", kind > 0 ? ", " : "", kind_color(kind));
    pkb_buf_puts(
        b,
        "]\n\n"
        "segs, bars, reps = [], [], []\n"
        "with open(DATA, encoding=\"utf-8\") as f:\n"
        "    for line in f:\n"
        "        if line.startswith(\"#\") or not line.strip():\n"
        "            continue\n"
        "        c = line.rstrip(\"\\n\").split(\"\\t\")\n"
        "        if c[0] == \"seg\":\n"
        "            segs.append((int(c[1]), int(c[2]), c[3], float(c[4]), float(c[5])))\n"
        "        elif c[0] == \"bar\":\n"
        "            bars.append((int(c[1]), c[2], float(c[3]), float(c[4])))\n"
        "        elif c[0] == \"rep\":\n"
        "            reps.append((int(c[1]) + float(c[2]), float(c[3]), c[4] == \"1\"))\n"
        "\n"
        "fig, ax = plt.subplots(figsize=(12.0, 6.5), dpi=100)\n"
        "labelled = set()\n"
        "# the residual segments last, so the legend lists the parts first\n"
        "for bar, kind, label, lo, hi in sorted(segs, key=lambda s: s[1] == RESIDUAL):\n"
        "    residual = kind == RESIDUAL\n"
        "    ax.bar(bar, hi - lo, bottom=lo, width=0.6,\n"
        "           color=\"none\" if residual else COLORS[kind],\n"
        "           edgecolor=\"#333333\", hatch=\"///\" if residual else None,\n"
        "           label=None if kind in labelled else (RESIDUAL_LABEL if residual else label))\n"
        "    labelled.add(kind)\n"
        "ax.errorbar([b[0] for b in bars], [b[2] for b in bars], yerr=[b[3] for b in bars],\n"
        "            fmt=\"o\", color=\"black\", capsize=5, markersize=5,\n"
        "            label=\"measured mean ± sd\")\n"
        "for rough, style in ((False, dict(s=8, color=\"#333333\", label=\"repetition\")),\n"
        "                     (True, dict(s=20, marker=\"x\", color=\"#D55E00\",\n"
        "                                 label=\"disturbed repetition\"))):\n"
        "    pts = [(x, y) for x, y, d in reps if d == rough]\n"
        "    if pts:\n"
        "        ax.scatter([p[0] for p in pts], [p[1] for p in pts], zorder=3, **style)\n"
        "ax.set_xticks([b[0] for b in bars])\n"
        "ax.set_xticklabels([b[1] for b in bars], rotation=25, ha=\"right\")\n"
        "ax.set_ylabel(YLABEL)\n"
        "ax.set_title(TITLE)\n"
        "ax.set_ylim(0, max([hi for _, _, _, _, hi in segs] + [b[2] + b[3] for b in bars] +\n"
        "                   [y for _, y, _ in reps]) * 1.08)\n"
        "ax.grid(axis=\"y\", color=\"#dddddd\")\n");
    pkb_py_tail(b, "loc=\"upper left\", bbox_to_anchor=(1.01, 1.0), fontsize=9");
}

int pkb__phases_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len)
{
    pkb__phases_view v;
    int rc = pkb__phases_view_load(r, &v, err, err_len);
    if (rc != 0 || v.ncomplete == 0) {
        pkb__phases_view_free(&v);
        return rc;
    }
    pkb_figure *fig = pkb_figures_add(figs, r, PKB__PHASES_FIGURE);
    if (fig != NULL) {
        struct kinds k = {.name = {"os_spawn_plain"}, .n = 1};
        for (size_t i = 0; i < v.nrows; i++) {
            if (v.rows[i].complete)
                kind_of(&k, v.rows[i].base_name);
            for (size_t p = 0; v.rows[i].complete && p < v.rows[i].nparts; p++)
                kind_of(&k, PKB__NAME(r, v.rows[i].parts[p]));
        }
        size_t residual = kind_of(&k, "residual");
        write_dat(r, &v, &k, residual, &fig->dat);
        write_gp(r, &v, &k, fig->stem, &fig->gp);
        write_py(r, &k, fig->stem, &fig->py);
    }
    pkb__phases_view_free(&v);
    if (fig == NULL || fig->dat.failed || fig->gp.failed || fig->py.failed)
        return pkb_fail(err, err_len, -ENOMEM, "plots: out of memory");
    return 0;
}
