/*
 * plot_phases — the phases report's figure: one stacked bar per reconciled composite, built from
 * the same numbers as the reconciliation table: os_spawn_plain at the bottom, then each primitive
 * the composite contains, each in its own colour, then the residual as its own hatched segment
 * (above the sum when the measured composite is larger, overlapping the top of the stack when it
 * is smaller), and the measured mean ± sd as a black point with error bars.
 *
 * Files, into the staging directory (stem = <name>-reconciliation, sanitized):
 *
 *     <stem>.dat   block 0: one row per segment (bar, kind, label, bottom, top in µs);
 *                  block 1: one row per bar (bar, composite, measured mean, sd, sum of parts)
 *     <stem>.gp    gnuplot: <stem>.gnuplot.png (pngcairo, else png) and <stem>.gnuplot.svg
 *     <stem>.py    matplotlib (Agg): <stem>.matplotlib.png
 *
 * The scripts name the segments' kinds (their legend) and the bars' labels, never a number: the
 * figures come from the .dat, which comes from the results file. Both tools run through plot.c's
 * pkb__run_tool, as the scenario figures do.
 */
#define _GNU_SOURCE
#include "report_phases.h"

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

/* The segment kinds: 0 is os_spawn_plain, then every primitive in order of first appearance,
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

bool pkb__phases_plot_stem(const pkb__results *r, char *stem, size_t cap)
{
    pkb__phases_view v;
    if (pkb__phases_view_load(r, &v, NULL, 0) != 0)
        return false;
    bool any = v.ncomplete > 0;
    pkb__phases_view_free(&v);
    pkb__buf b = {0};
    pkb__buf_sanitized(&b, r->name);
    pkb__buf_puts(&b, "-reconciliation");
    snprintf(stem, cap, "%s", b.failed ? "reconciliation" : b.data);
    pkb__buf_free(&b);
    return any;
}

/* A name for a data file column: no tabs or newlines. */
static void tsv_name(pkb__buf *b, const char *s)
{
    for (; *s; s++)
        pkb__buf_printf(b, "%c", *s == '\t' || *s == '\n' || *s == '\r' ? '_' : *s);
}

static void write_dat(
    const pkb__results *r, const pkb__phases_view *v, struct kinds *k, size_t residual, pkb__buf *b)
{
    pkb__buf_puts(b, "# pkbench report data, from ");
    pkb__buf_sanitized(b, r->file);
    pkb__buf_puts(b, ": the phases reconciliation, in µs\n"
                     "# block 0, one row per segment\n# seg\tbar\tkind\tlabel\tbottom\ttop\n");
    const pkb__phase_series *plain = &v->series[v->plain];
    size_t bar = 0;
    for (size_t i = 0; i < v->nrows; i++) {
        const pkb__recon_row *row = &v->rows[i];
        if (!row->complete)
            continue;
        pkb__buf_printf(b, "seg\t%zu\t0\tos_spawn_plain\t0\t%.6f\n", bar, plain->mean / 1e3);
        double at = plain->mean;
        for (size_t p = 0; p < row->nparts; p++) {
            const char *name = PKB__NAME(r, row->parts[p]);
            double mean = v->series[row->parts[p]].mean;
            pkb__buf_printf(b, "seg\t%zu\t%zu\t", bar, kind_of(k, name));
            tsv_name(b, name);
            pkb__buf_printf(b, "\t%.6f\t%.6f\n", at / 1e3, (at + mean) / 1e3);
            at += mean;
        }
        double lo = fmin(row->rec.predicted_ns, row->rec.measured_ns);
        double hi = fmax(row->rec.predicted_ns, row->rec.measured_ns);
        pkb__buf_printf(b, "seg\t%zu\t%zu\tresidual\t%.6f\t%.6f\n", bar, residual, lo / 1e3,
                        hi / 1e3);
        bar++;
    }
    pkb__buf_puts(b, "\n\n# block 1, one row per bar\n# bar\tbar\tcomposite\tmeasured\tsd\tsum\n");
    bar = 0;
    for (size_t i = 0; i < v->nrows; i++) {
        const pkb__recon_row *row = &v->rows[i];
        if (!row->complete)
            continue;
        const pkb__phase_series *c = &v->series[row->composite];
        pkb__buf_printf(b, "bar\t%zu\t", bar++);
        tsv_name(b, PKB__NAME(r, row->composite));
        pkb__buf_printf(b, "\t%.6f\t%.6f\t%.6f\n", c->mean / 1e3, isnan(c->sd) ? 0 : c->sd / 1e3,
                        row->rec.predicted_ns / 1e3);
    }
}

static const char title[] =
    "Where a start goes: os_spawn_plain + primitives + residual, against the measured mean";
static const char ylabel[] = "mean wall time per spawn+wait (µs)";
static const char residual_label[] = "residual (measured − sum of the parts)";

static void write_gp(const pkb__results *r,
                     const pkb__phases_view *v,
                     const struct kinds *k,
                     const char *st,
                     pkb__buf *b)
{
    pkb__buf_puts(b, "# Generated by pkbench report from ");
    pkb__buf_sanitized(b, r->file);
    pkb__buf_printf(b,
                    ": the phases reconciliation.\n"
                    "# Redraw %s.gnuplot.png and .svg (run in this directory): gnuplot %s.gp\n"
                    "set encoding utf8\n"
                    "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                    "    set terminal pngcairo size 1200,650 font 'DejaVu Sans,11' noenhanced\n"
                    "} else {\n"
                    "    set terminal png size 1200,650 noenhanced\n"
                    "}\n"
                    "set output '%s.gnuplot.png'\n"
                    "set datafile separator '\\t'\n"
                    "dat = '%s.dat'\n"
                    "set title ",
                    st, st, st, st);
    pkb__gp_string(b, title);
    pkb__buf_puts(b, "\nset ylabel ");
    pkb__gp_string(b, ylabel);
    pkb__buf_printf(b,
                    "\nset xrange [-0.6:%zu.4]\n"
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
        pkb__buf_puts(b, bar > 0 ? ", " : "");
        pkb__gp_string(b, PKB__NAME(r, v->rows[i].composite));
        pkb__buf_printf(b, " %zu", bar++);
    }
    pkb__buf_puts(b, ")\nplot ");
    for (size_t kind = 0; kind < k->n; kind++) {
        bool residual = kind + 1 == k->n;
        pkb__buf_printf(b,
                        "dat index 0 using 2:($3 == %zu ? ($5 + $6) / 2 : 1/0):($2 - 0.3):"
                        "($2 + 0.3):5:6 with boxxyerror %s lc rgb '%s' title ",
                        kind,
                        residual ? "fs transparent pattern 4 border rgb '#333333'"
                                 : "fs solid 0.9 border rgb '#333333'",
                        residual ? COLOR_RESIDUAL : kind_color(kind));
        pkb__gp_string(b, residual ? residual_label : k->name[kind]);
        pkb__buf_puts(b, ", \\\n     ");
    }
    pkb__buf_printf(b,
                    "dat index 1 using 2:4:5 with yerrorbars lc rgb 'black' pt 7 ps 0.8 lw 1.5 "
                    "title 'measured mean ± sd'\n"
                    "set terminal svg size 1200,650 dynamic font 'DejaVu Sans,11' noenhanced "
                    "background rgb 'white'\n"
                    "set output '%s.gnuplot.svg'\n"
                    "replot\n"
                    "unset output\n",
                    st);
}

static void write_py(const pkb__results *r, const struct kinds *k, const char *st, pkb__buf *b)
{
    pkb__buf_puts(b, "#!/usr/bin/python3\n# Generated by pkbench report from ");
    pkb__buf_sanitized(b, r->file);
    pkb__buf_printf(
        b,
        ": the phases reconciliation.\n"
        "# Redraw %s.matplotlib.png (run in this directory): /usr/bin/python3 %s.py\n"
        "import matplotlib\n\nmatplotlib.use(\"Agg\")\nimport matplotlib.pyplot as plt\n"
        "\nDATA = \"%s.dat\"\nOUT = \"%s.matplotlib.png\"\nTITLE = ",
        st, st, st, st);
    pkb__py_string(b, title);
    pkb__buf_puts(b, "\nYLABEL = ");
    pkb__py_string(b, ylabel);
    pkb__buf_puts(b, "\nRESIDUAL_LABEL = ");
    pkb__py_string(b, residual_label);
    pkb__buf_printf(b, "\nRESIDUAL = %zu\nCOLORS = [", k->n - 1);
    for (size_t kind = 0; kind + 1 < k->n; kind++)
        pkb__buf_printf(b, "%s\"%s\"", kind > 0 ? ", " : "", kind_color(kind));
    pkb__buf_puts(
        b,
        "]\n\n"
        "segs, bars = [], []\n"
        "with open(DATA, encoding=\"utf-8\") as f:\n"
        "    for line in f:\n"
        "        if line.startswith(\"#\") or not line.strip():\n"
        "            continue\n"
        "        c = line.rstrip(\"\\n\").split(\"\\t\")\n"
        "        if c[0] == \"seg\":\n"
        "            segs.append((int(c[1]), int(c[2]), c[3], float(c[4]), float(c[5])))\n"
        "        elif c[0] == \"bar\":\n"
        "            bars.append((int(c[1]), c[2], float(c[3]), float(c[4])))\n"
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
        "ax.set_xticks([b[0] for b in bars])\n"
        "ax.set_xticklabels([b[1] for b in bars], rotation=25, ha=\"right\")\n"
        "ax.set_ylabel(YLABEL)\n"
        "ax.set_title(TITLE)\n"
        "ax.set_ylim(0, max([hi for _, _, _, _, hi in segs] + [b[2] + b[3] for b in bars]) * "
        "1.08)\n"
        "ax.grid(axis=\"y\", color=\"#dddddd\")\n"
        "ax.set_axisbelow(True)\n"
        "ax.spines[\"top\"].set_visible(False)\n"
        "ax.spines[\"right\"].set_visible(False)\n"
        "ax.legend(loc=\"upper left\", bbox_to_anchor=(1.01, 1.0), fontsize=9)\n"
        "fig.tight_layout()\n"
        "fig.savefig(OUT)\n"
        "plt.close(fig)\n");
}

/* Every figure a tool should have written is there and not empty. */
static int check_outputs(const char *dir,
                         const char *stem,
                         const char *what,
                         const char *suffixes,
                         char *err,
                         size_t err_len)
{
    char list[64];
    snprintf(list, sizeof list, "%s", suffixes);
    for (char *save = NULL, *suffix = strtok_r(list, " ", &save); suffix != NULL;
         suffix = strtok_r(NULL, " ", &save)) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s%s", dir, stem, suffix);
        struct stat st;
        if (stat(path, &st) != 0 || st.st_size == 0) {
            snprintf(err, err_len, "%s exited 0 but did not write %s%s", what, stem, suffix);
            return -EIO;
        }
    }
    return 0;
}

int pkb__phases_plots_render(const pkb__results *r,
                             const char *dir,
                             const pkb_report_options *opts,
                             char *err,
                             size_t err_len)
{
    pkb__phases_view v;
    int rc = pkb__phases_view_load(r, &v, err, err_len);
    if (rc != 0 || v.ncomplete == 0) {
        pkb__phases_view_free(&v);
        return rc;
    }
    char st[300];
    pkb__phases_plot_stem(r, st, sizeof st);
    struct kinds k = {.name = {"os_spawn_plain"}, .n = 1};
    for (size_t i = 0; i < v.nrows; i++)
        for (size_t p = 0; v.rows[i].complete && p < v.rows[i].nparts; p++)
            kind_of(&k, PKB__NAME(r, v.rows[i].parts[p]));
    size_t residual = kind_of(&k, "residual");
    pkb__buf dat = {0}, gp = {0}, py = {0};
    write_dat(r, &v, &k, residual, &dat);
    write_gp(r, &v, &k, st, &gp);
    write_py(r, &k, st, &py);
    rc = pkb__write_buf(dir, st, ".dat", &dat);
    if (rc == 0)
        rc = pkb__write_buf(dir, st, ".gp", &gp);
    if (rc == 0)
        rc = pkb__write_buf(dir, st, ".py", &py);
    if (rc != 0)
        snprintf(err, err_len, "cannot write the reconciliation plot scripts in %s: %s", dir,
                 strerror(-rc));
    pkb__buf_free(&dat);
    pkb__buf_free(&gp);
    pkb__buf_free(&py);
    pkb__phases_view_free(&v);

    char gp_name[320], py_name[320];
    snprintf(gp_name, sizeof gp_name, "%s.gp", st);
    snprintf(py_name, sizeof py_name, "%s.py", st);
    const char *gnuplot = opts->gnuplot ? opts->gnuplot : "gnuplot";
    const char *python = opts->python ? opts->python : "/usr/bin/python3";
    int64_t timeout = opts->tool_timeout_ms > 0 ? opts->tool_timeout_ms : 60000;
    static const char *const py_env[] = {"MPLBACKEND=Agg", NULL};
    if (rc == 0)
        rc = pkb__run_tool("gnuplot", (const char *const[]){gnuplot, gp_name, NULL}, dir, NULL,
                           timeout, err, err_len);
    if (rc == 0)
        rc = check_outputs(dir, st, "gnuplot", ".gnuplot.png .gnuplot.svg", err, err_len);
    if (rc == 0)
        rc = pkb__run_tool("matplotlib", (const char *const[]){python, py_name, NULL}, dir, py_env,
                           timeout, err, err_len);
    if (rc == 0)
        rc = check_outputs(dir, st, "matplotlib", ".matplotlib.png", err, err_len);
    return rc;
}
