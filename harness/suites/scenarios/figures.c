/*
 * The scenarios suite's figures: per scenario, each contender's median time per iteration as a
 * bar, the baseline's in its own colour, its value labelled with its unit, and beside each bar
 * every repetition as a point (disturbed ones as red crosses), so a two-cluster series or a
 * disturbed stretch is seen rather than averaged away. When the scenario's values span more than
 * 10×, the time axis is logarithmic, so glib's milliseconds do not flatten everyone else's
 * microseconds. A re-measured series says so under its name. Drawn by gnuplot and by matplotlib
 * from one data file (report/figure.h's pipeline):
 *
 *     <stem>.dat   two blocks (gnuplot's `index`): the bars — index, contender, median, label,
 *                  baseline 0/1, n, re-measured 0/1 — then the points — index, offset beside the
 *                  bar, value, disturbed 0/1; times in the scenario's unit, named in the header
 *     <stem>.gp    gnuplot script: reads <stem>.dat, writes <stem>.gnuplot.png and .svg
 *     <stem>.py    Python script: reads <stem>.dat, writes <stem>.matplotlib.png
 *
 * The scripts embed no number but the axis range and scale, which come from the same data: the
 * figures come from the .dat, which comes from the results file, and a reader can redraw them.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Okabe-Ito orange, blue and vermillion: distinguishable with every common colour-vision
 * deficiency. */
#define COLOR_BASELINE  "#E69F00"
#define COLOR_OTHER     "#0072B2"
#define COLOR_DISTURBED "#D55E00"

/* A scale spanning more than this factor is drawn logarithmic. */
#define LOG_SPAN 10.0

/* What the three files of one scenario share. */
struct figure {
    const pkb_results *r;
    const pkb_results_scenario *sc;
    const char *stem;
    double scale;     /* ns per time unit */
    const char *unit; /* "µs" */
    size_t bars;
    bool rotate;       /* long tick labels: slant them */
    bool log;          /* the values span more than LOG_SPAN */
    double ymin, ymax; /* the axis range, in the unit */
};

static void clean_name(pkb_buf *b, const char *s)
{
    for (; *s; s++)
        pkb_buf_printf(b, "%c", *s == '\t' || *s == '\n' || *s == '\r' ? '_' : *s);
}

/* The disturbed flag of repetition k of s (the file's `disturbed`, else its `noisy`). */
static int disturbed_at(const pkb_results_series *s, size_t k)
{
    const json_t *flags = json_object_get(s->json, "disturbed");
    if (flags == NULL)
        flags = json_object_get(s->json, "noisy");
    return json_is_true(json_array_get(flags, k));
}

static void write_dat(const struct figure *f, pkb_buf *b)
{
    pkb_buf_puts(b, "# pkbench report data, from ");
    pkb_buf_sanitized(b, f->r->file);
    pkb_buf_puts(b, ": scenario ");
    pkb_buf_sanitized(b, f->sc->name);
    pkb_buf_printf(b,
                   "\n# block 0, the bars: the median of the repetitions' wall time per "
                   "iteration, in %s\n"
                   "# index\tcontender\tmedian\tlabel\tbaseline\tn\tremeasured\n",
                   f->unit);
    size_t index = 0;
    for (size_t k = 0; k < f->sc->count; k++) {
        const pkb_results_series *s = &f->r->series[f->sc->members[k]];
        if (!s->measured)
            continue;
        pkb_buf_printf(b, "%zu\t", index++);
        clean_name(b, s->contender);
        pkb_buf_printf(b, "\t%.6f\t", s->sum.median / f->scale);
        pkb_fmt_rate(b, s->sum.median / f->scale);
        pkb_buf_printf(b, " %s\t%d\t%zu\t%d\n", f->unit,
                       (long)(s - f->r->series) == f->sc->baseline, s->n, s->attempts > 1);
    }
    pkb_buf_printf(b,
                   "\n\n# block 1, the points: every repetition, in %s, beside its bar\n"
                   "# index\toffset\tvalue\tdisturbed\n",
                   f->unit);
    index = 0;
    for (size_t k = 0; k < f->sc->count; k++) {
        const pkb_results_series *s = &f->r->series[f->sc->members[k]];
        if (!s->measured)
            continue;
        for (size_t i = 0; i < s->n; i++) {
            /* spread beside the bar in a fixed pattern, so identical values stay visible */
            double offset = 0.22 + 0.12 * ((double)((i * 7) % 11) / 10.0 - 0.5);
            pkb_buf_printf(b, "%zu\t%.3f\t%.6f\t%d\n", index, offset, s->samples[i] / f->scale,
                           disturbed_at(s, i));
        }
        index++;
    }
}

static void title(const struct figure *f, pkb_buf *b)
{
    pkb_buf_printf(b, "%s: %s, median per contender and every repetition (lower is better)",
                   json_string_value(json_object_get(f->r->root, "suite")), f->sc->name);
}

/* "contender" or, for a re-measured series, "contender (re-measured)": the tick text. */
static const char *tick_gp = "(stringcolumn(7) eq '1' ? stringcolumn(2).' (re-measured)' : "
                             "stringcolumn(2))";

static void write_gp(const struct figure *f, pkb_buf *b)
{
    pkb_buf title_text = {0}, what = {0};
    title(f, &title_text);
    pkb_buf_printf(&what, "scenario %s", f->sc->name);
    pkb_gp_head(b, f->r, what.failed ? "" : what.data, f->stem, 960, 600);
    pkb_buf_puts(b, "set title ");
    pkb_gp_string(b, title_text.failed ? "" : title_text.data);
    pkb_buf_printf(b, "\nset ylabel 'wall time per iteration (%s)%s'\n", f->unit,
                   f->log ? ", log scale" : "");
    if (f->log)
        pkb_buf_puts(b, "set logscale y\n");
    pkb_buf_printf(
        b,
        "set xlabel 'contender'\n"
        "set xrange [-0.6:%zu.6]\n"
        "set yrange [%g:%g]\n"
        "set style fill solid 0.85 border rgb '#333333'\n"
        "set boxwidth 0.34\n"
        "set grid ytics lt 1 lc rgb '#dddddd' lw 1\n"
        "set border 3\n"
        "set xtics nomirror%s\n"
        "set ytics nomirror\n"
        "%s"
        "set key top left\n"
        "plot dat index 0 using ($1-0.1):($5 == 1 ? $3 : 1/0):xtic(%s) with boxes "
        "lc rgb '" COLOR_BASELINE "' title 'median, baseline', \\\n"
        "     dat index 0 using ($1-0.1):($5 == 1 ? 1/0 : $3):xtic(%s) with boxes "
        "lc rgb '" COLOR_OTHER "' title 'median', \\\n"
        "     dat index 0 using ($1-0.1):3:4 with labels offset 0,0.7 font ',9' notitle, \\\n"
        "     dat index 1 using ($1+$2):($4 == 1 ? 1/0 : $3) with points pt 7 ps 0.55 "
        "lc rgb '#333333' title 'repetition', \\\n"
        "     dat index 1 using ($1+$2):($4 == 1 ? $3 : 1/0) with points pt 2 ps 1.1 lw 2 "
        "lc rgb '" COLOR_DISTURBED "' title 'disturbed repetition'\n",
        f->bars - 1, f->ymin, f->ymax, f->rotate ? " rotate by 25 right" : "",
        f->rotate ? "set lmargin 16\nset bmargin 7\n" : "", tick_gp, tick_gp);
    pkb_gp_tail(b, f->stem, 960, 600);
    pkb_buf_free(&title_text);
    pkb_buf_free(&what);
}

/* The matplotlib script's body, after its settings (write_py): reads the .dat's two blocks, draws
 * the median bars with their labels and every repetition beside them, the axes and the legend. */
static const char py_plot[] =
    "bars, points, block = [], [], 0\n"
    "with open(DATA, encoding=\"utf-8\") as f:\n"
    "    for line in f:\n"
    "        if line.startswith(\"# block 1\"):\n"
    "            block = 1\n"
    "        if line.startswith(\"#\") or not line.strip():\n"
    "            continue\n"
    "        cols = line.rstrip(\"\\n\").split(\"\\t\")\n"
    "        if block == 0:\n"
    "            bars.append((int(cols[0]), cols[1], float(cols[2]), cols[3], cols[4] == "
    "\"1\",\n"
    "                         cols[6] == \"1\"))\n"
    "        else:\n"
    "            points.append((int(cols[0]) + float(cols[1]), float(cols[2]), cols[3] == "
    "\"1\"))\n"
    "\n"
    "fig, ax = plt.subplots(figsize=(9.6, 6.0), dpi=100)\n"
    "x = [i - 0.1 for i, *_ in bars]\n"
    "heights = [m for _, _, m, *_ in bars]\n"
    "colors = [\"" COLOR_BASELINE "\" if base else \"" COLOR_OTHER "\" for *_, base, _ in bars]\n"
    "ax.bar(x, heights, width=0.34, color=colors, edgecolor=\"#333333\")\n"
    "for xi, (_, _, m, label, _, _) in zip(x, bars):\n"
    "    ax.annotate(label, (xi, m), textcoords=\"offset points\", xytext=(0, 4),\n"
    "                ha=\"center\", va=\"bottom\", fontsize=8)\n"
    "calm = [(px, v) for px, v, d in points if not d]\n"
    "rough = [(px, v) for px, v, d in points if d]\n"
    "if calm:\n"
    "    ax.scatter([p[0] for p in calm], [p[1] for p in calm], s=12, color=\"#333333\",\n"
    "               zorder=3)\n"
    "if rough:\n"
    "    ax.scatter([p[0] for p in rough], [p[1] for p in rough], s=30, marker=\"x\",\n"
    "               color=\"" COLOR_DISTURBED "\", zorder=3)\n"
    "ax.set_xticks(range(len(bars)))\n"
    "ax.set_xticklabels([name + (\"\\n(re-measured)\" if again else \"\")\n"
    "                    for _, name, _, _, _, again in bars],\n"
    "                   rotation=25 if ROTATE else 0, ha=\"right\" if ROTATE else \"center\")\n"
    "if LOG:\n"
    "    ax.set_yscale(\"log\")\n"
    "    plain = FuncFormatter(lambda v, _: f\"{v:g}\")\n"
    "    ax.yaxis.set_major_formatter(plain)\n"
    "    ax.yaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))\n"
    "    ax.yaxis.set_minor_formatter(plain)\n"
    "ax.set_ylim(*YRANGE)\n"
    "ax.set_xlim(-0.6, len(bars) - 0.4)\n"
    "ax.set_xlabel(\"contender\")\n"
    "ax.set_ylabel(YLABEL)\n"
    "ax.set_title(TITLE, fontsize=11)\n"
    "ax.grid(axis=\"y\", color=\"#dddddd\")\n"
    "ax.set_axisbelow(True)\n"
    "ax.spines[\"top\"].set_visible(False)\n"
    "ax.spines[\"right\"].set_visible(False)\n"
    "ax.legend(handles=[\n"
    "    Patch(facecolor=\"" COLOR_BASELINE "\", edgecolor=\"#333333\", label=\"median, "
    "baseline\"),\n"
    "    Patch(facecolor=\"" COLOR_OTHER "\", edgecolor=\"#333333\", label=\"median\"),\n"
    "    Line2D([], [], ls=\"\", marker=\"o\", ms=4, color=\"#333333\", "
    "label=\"repetition\"),\n"
    "    Line2D([], [], ls=\"\", marker=\"x\", ms=6, color=\"" COLOR_DISTURBED "\",\n"
    "           label=\"disturbed repetition\")], loc=\"upper left\", fontsize=9)\n"
    "fig.tight_layout()\n"
    "fig.savefig(OUT)\n"
    "plt.close(fig)\n";

static void write_py(const struct figure *f, pkb_buf *b)
{
    pkb_buf title_text = {0}, ylabel = {0}, what = {0};
    title(f, &title_text);
    pkb_buf_printf(&ylabel, "wall time per iteration (%s)%s", f->unit, f->log ? ", log scale" : "");
    pkb_buf_printf(&what, "scenario %s", f->sc->name);
    pkb_py_head(b, f->r, what.failed ? "" : what.data, f->stem);
    pkb_buf_puts(b, "from matplotlib.lines import Line2D\n"
                    "from matplotlib.patches import Patch\n"
                    "from matplotlib.ticker import FuncFormatter, LogLocator\n");
    pkb_buf_puts(b, "TITLE = ");
    pkb_py_string(b, title_text.failed ? "" : title_text.data);
    pkb_buf_puts(b, "\nYLABEL = ");
    pkb_py_string(b, ylabel.failed ? "" : ylabel.data);
    pkb_buf_printf(b,
                   "\nROTATE = %s\n"
                   "LOG = %s\n"
                   "YRANGE = (%g, %g)\n"
                   "\n",
                   f->rotate ? "True" : "False", f->log ? "True" : "False", f->ymin, f->ymax);
    pkb_buf_puts(b, py_plot);
    pkb_buf_free(&title_text);
    pkb_buf_free(&ylabel);
    pkb_buf_free(&what);
}

/* The unit (the one the smallest median reads best in, as the table), the axis range and
 * whether it must be logarithmic: from every value drawn, bars and points. */
static void axis(struct figure *f)
{
    const pkb_results *r = f->r;
    double lo = INFINITY, hi = 0, smallest = INFINITY;
    size_t label_chars = 0;
    for (size_t k = 0; k < f->sc->count; k++) {
        const pkb_results_series *s = &r->series[f->sc->members[k]];
        if (!s->measured)
            continue;
        smallest = fmin(smallest, s->sum.median);
        lo = fmin(lo, s->sum.min);
        hi = fmax(hi, s->sum.max);
        label_chars += strlen(s->contender) + 2 + (s->attempts > 1 ? 14 : 0);
        f->bars++;
    }
    f->unit = pkb_time_unit(smallest, &f->scale);
    f->rotate = label_chars > 64;
    f->log = hi > LOG_SPAN * lo;
    /* Room above the tallest point for the labels; a log axis starts below the smallest value. */
    f->ymin = f->log ? lo / f->scale / 1.6 : 0;
    f->ymax = f->log ? hi / f->scale * 2.2 : hi / f->scale * 1.18;
}

/* One figure per scenario with a measured series: the data and both scripts. */
static int add_figure(const pkb_results *r, const pkb_results_scenario *sc, pkb_figures *figs)
{
    pkb_figure *fig = pkb_figures_add(figs, r, sc->name);
    if (fig == NULL)
        return -ENOMEM;
    struct figure f = {.r = r, .sc = sc, .stem = fig->stem};
    axis(&f);
    write_dat(&f, &fig->dat);
    write_gp(&f, &fig->gp);
    write_py(&f, &fig->py);
    return fig->dat.failed || fig->gp.failed || fig->py.failed ? -ENOMEM : 0;
}

int pkb__scenarios_figures(const pkb_results *r, pkb_figures *figs, char *err, size_t err_len)
{
    for (size_t i = 0; i < r->nscenarios; i++)
        if (r->scenarios[i].measured > 0 && add_figure(r, &r->scenarios[i], figs) != 0)
            return pkb_fail(err, err_len, -ENOMEM, "plots: out of memory");
    if (pkb__scale_figure(r, figs) != 0)
        return pkb_fail(err, err_len, -ENOMEM, "plots: out of memory");
    return 0;
}
