/*
 * The scenarios suite's figures: per scenario, a bar chart of the contenders' mean time per
 * iteration with ± sd error bars, the baseline bar in its own colour, drawn by gnuplot and by
 * matplotlib from one data file (report/figure.h's pipeline):
 *
 *     <stem>.dat   index, contender, mean, sd (in the scenario's time unit), baseline 0/1, n
 *     <stem>.gp    gnuplot script: reads <stem>.dat, writes <stem>.gnuplot.png and .svg
 *     <stem>.py    Python script: reads <stem>.dat, writes <stem>.matplotlib.png
 *
 * The scripts embed no number, so the figures come from the .dat, which comes from the results
 * file, and a reader can redraw them.
 */
#include "suites/scenarios/report.h"

#include "common/md.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Okabe-Ito orange and blue: distinguishable with every common colour-vision deficiency. */
#define COLOR_BASELINE "#E69F00"
#define COLOR_OTHER    "#0072B2"

/* What the three files of one scenario share. */
struct figure {
    const pkb_results *r;
    const pkb_results_scenario *sc;
    const char *stem;
    double scale;     /* ns per time unit */
    const char *unit; /* "µs" */
    size_t bars;
    bool rotate; /* long tick labels: slant them */
};

static void write_dat(const struct figure *f, pkb_buf *b)
{
    pkb_buf_puts(b, "# pkbench report data, from ");
    pkb_buf_sanitized(b, f->r->file);
    pkb_buf_puts(b, ": scenario ");
    pkb_buf_sanitized(b, f->sc->name);
    pkb_buf_printf(b,
                   "\n# mean and sd of the repetitions' wall time per iteration, in %s\n"
                   "# index\tcontender\tmean\tsd\tbaseline\tn\n",
                   f->unit);
    size_t index = 0;
    for (size_t k = 0; k < f->sc->count; k++) {
        const pkb_results_series *s = &f->r->series[f->sc->members[k]];
        if (!s->measured)
            continue;
        pkb_buf_printf(b, "%zu\t", index++);
        for (const char *c = s->contender; *c; c++)
            pkb_buf_printf(b, "%c", *c == '\t' || *c == '\n' || *c == '\r' ? '_' : *c);
        double sd = s->n >= 2 ? s->sum.sd : 0;
        pkb_buf_printf(b, "\t%.6f\t%.6f\t%d\t%zu\n", s->sum.mean / f->scale, sd / f->scale,
                       (long)(s - f->r->series) == f->sc->baseline, s->n);
    }
}

static void title(const struct figure *f, pkb_buf *b)
{
    pkb_buf_printf(b, "%s: %s, mean ± sd of the repetitions (lower is better)",
                   json_string_value(json_object_get(f->r->root, "suite")), f->sc->name);
}

static void write_gp(const struct figure *f, pkb_buf *b)
{
    pkb_buf title_text = {0}, what = {0};
    title(f, &title_text);
    pkb_buf_printf(&what, "scenario %s", f->sc->name);
    pkb_gp_head(b, f->r, what.failed ? "" : what.data, f->stem, 960, 600);
    pkb_buf_puts(b, "set title ");
    pkb_gp_string(b, title_text.failed ? "" : title_text.data);
    pkb_buf_printf(b, "\nset ylabel 'mean wall time per iteration (%s)'\n", f->unit);
    pkb_buf_printf(
        b,
        "set xlabel 'contender'\n"
        "set xrange [-0.6:%zu.4]\n"
        "set yrange [0:*]\n"
        "set offsets 0, 0, graph 0.2, 0\n"
        "set style fill solid 0.85 border rgb '#333333'\n"
        "set boxwidth 0.6\n"
        "set errorbars front 2 lc rgb 'black' lw 1.5\n"
        "set grid ytics lt 1 lc rgb '#dddddd' lw 1\n"
        "set border 3\n"
        "set xtics nomirror%s\n"
        "set ytics nomirror\n"
        "set key top right\n"
        "plot dat using 1:($5 == 1 ? $3 : 1/0):4:xtic(2) with boxerrorbars lc rgb '" COLOR_BASELINE
        "' title 'baseline', \\\n"
        "     dat using 1:($5 == 1 ? 1/0 : $3):4:xtic(2) with boxerrorbars lc rgb '" COLOR_OTHER
        "' title 'contender', \\\n"
        "     dat using 1:($3 + $4):(sprintf('%%.4g', $3)) with labels "
        "offset 0,0.8 notitle\n",
        f->bars - 1, f->rotate ? " rotate by 25 right" : "");
    pkb_gp_tail(b, f->stem, 960, 600);
    pkb_buf_free(&title_text);
    pkb_buf_free(&what);
}

static void write_py(const struct figure *f, pkb_buf *b)
{
    pkb_buf title_text = {0}, ylabel = {0}, what = {0};
    title(f, &title_text);
    pkb_buf_printf(&ylabel, "mean wall time per iteration (%s)", f->unit);
    pkb_buf_printf(&what, "scenario %s", f->sc->name);
    pkb_py_head(b, f->r, what.failed ? "" : what.data, f->stem);
    pkb_buf_puts(b, "from matplotlib.patches import Patch\n");
    pkb_buf_puts(b, "TITLE = ");
    pkb_py_string(b, title_text.failed ? "" : title_text.data);
    pkb_buf_puts(b, "\nYLABEL = ");
    pkb_py_string(b, ylabel.failed ? "" : ylabel.data);
    pkb_buf_printf(
        b,
        "\nROTATE = %s\n"
        "\n"
        "names, means, sds, baseline = [], [], [], []\n"
        "with open(DATA, encoding=\"utf-8\") as f:\n"
        "    for line in f:\n"
        "        if line.startswith(\"#\") or not line.strip():\n"
        "            continue\n"
        "        cols = line.rstrip(\"\\n\").split(\"\\t\")\n"
        "        names.append(cols[1])\n"
        "        means.append(float(cols[2]))\n"
        "        sds.append(float(cols[3]))\n"
        "        baseline.append(cols[4] == \"1\")\n"
        "\n"
        "colors = [\"" COLOR_BASELINE "\" if b else \"" COLOR_OTHER "\" for b in baseline]\n"
        "fig, ax = plt.subplots(figsize=(9.6, 6.0), dpi=100)\n"
        "x = list(range(len(names)))\n"
        "ax.bar(x, means, width=0.6, yerr=sds, capsize=6, color=colors, edgecolor=\"#333333\",\n"
        "       error_kw={\"elinewidth\": 1.5})\n"
        "for i, (m, s) in enumerate(zip(means, sds)):\n"
        "    ax.annotate(f\"{m:.4g}\", (i, m + s), textcoords=\"offset points\", xytext=(0, 4),\n"
        "                ha=\"center\", va=\"bottom\", fontsize=9)\n"
        "ax.set_xticks(x)\n"
        "ax.set_xticklabels(names, rotation=25 if ROTATE else 0, ha=\"right\" if ROTATE else "
        "\"center\")\n"
        "ax.set_xlabel(\"contender\")\n"
        "ax.set_ylabel(YLABEL)\n"
        "ax.set_title(TITLE)\n"
        "ax.set_ylim(0, max(m + s for m, s in zip(means, sds)) * 1.25)\n"
        "ax.grid(axis=\"y\", color=\"#dddddd\")\n"
        "ax.set_axisbelow(True)\n"
        "ax.spines[\"top\"].set_visible(False)\n"
        "ax.spines[\"right\"].set_visible(False)\n"
        "ax.legend(handles=[Patch(facecolor=\"" COLOR_BASELINE "\", edgecolor=\"#333333\", "
        "label=\"baseline\"),\n"
        "                   Patch(facecolor=\"" COLOR_OTHER "\", edgecolor=\"#333333\", "
        "label=\"contender\")],\n"
        "          loc=\"upper right\")\n"
        "fig.tight_layout()\n"
        "fig.savefig(OUT)\n"
        "plt.close(fig)\n",
        f->rotate ? "True" : "False");
    pkb_buf_free(&title_text);
    pkb_buf_free(&ylabel);
    pkb_buf_free(&what);
}

/* One figure per scenario with a measured series: the data and both scripts. */
static int add_figure(const pkb_results *r, const pkb_results_scenario *sc, pkb_figures *figs)
{
    pkb_figure *fig = pkb_figures_add(figs, r, sc->name);
    if (fig == NULL)
        return -ENOMEM;
    struct figure f = {.r = r, .sc = sc, .stem = fig->stem};
    double top = 0;
    size_t label_chars = 0;
    for (size_t k = 0; k < sc->count; k++) {
        const pkb_results_series *s = &r->series[sc->members[k]];
        if (!s->measured)
            continue;
        top = fmax(top, s->sum.mean);
        label_chars += strlen(s->contender) + 2;
        f.bars++;
    }
    f.unit = pkb_time_unit(top, &f.scale);
    f.rotate = label_chars > 64;
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
    return 0;
}
