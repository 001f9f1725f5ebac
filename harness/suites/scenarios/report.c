/*
 * The scenarios suite's report: the seed document's "Measured results" table per scenario and
 * its "Conclusions", worded from the numbers:
 *
 *   - mean ± sd and the median are stats.h's pks_summarize of the series' samples_ns (one value
 *     per repetition: the mean wall time of one iteration), in the unit the mean reads best in;
 *   - throughput = work_per_iteration / mean time, in the series' unit (runs/s, MiB/s, ...);
 *   - delta = (mean − baseline mean) / baseline mean, against the measured baseline series of the
 *     same scenario in the same file, printed as +x.x%;
 *   - a contender's overhead is negligible when |delta| ≤ PKB_REPORT_NEGLIGIBLE (10%);
 *   - the targets are ratios of means processkit / other, checked only where both were measured.
 *
 * Nothing is typed in: change the file and every number and verdict follows. A row's numbers and
 * cells come from table.c (shared with the terminal view), the conclusions and targets are worded
 * in verdict.c, the figures drawn from figures.c's data.
 */
#include "suites/scenarios/report.h"

#include "common/md.h"
#include "suites/scenarios/contender.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void md_how_to_read(const pkb_results *r, pkb_buf *b)
{
    size_t lo = SIZE_MAX, hi = 0;
    for (size_t i = 0; i < r->nseries; i++) {
        if (r->series[i].measured) {
            lo = r->series[i].n < lo ? r->series[i].n : lo;
            hi = r->series[i].n > hi ? r->series[i].n : hi;
        }
    }
    pkb_buf_puts(b, "## How to read it\n\n");
    if (hi == 0)
        pkb_buf_puts(b, "No series was measured. ");
    else if (lo == hi)
        pkb_buf_printf(b, "Each measured series has %zu repetitions. ", lo);
    else
        pkb_buf_printf(b, "Each measured series has %zu to %zu repetitions. ", lo, hi);
    pkb_buf_puts(b, "A repetition's value is the mean wall time of one iteration: start the "
                    "child (or children), feed stdin, consume the output, reap. The table gives "
                    "the mean ± sample standard deviation of those values, as the seed document "
                    "does, and their median, which one disturbed repetition cannot move much. "
                    "Throughput is the work of one iteration divided by the mean time. The delta "
                    "is (mean − baseline mean) / baseline mean against the baseline contender of "
                    "the same scenario in this same run: negative is faster than the baseline. "
                    "Absolute times depend on the machine and its load; compare contenders only "
                    "within one run.\n\n");
}

/* Each contender's one-line description (the first series that gives one), in file order. */
static void md_contenders(const pkb_results *r, pkb_buf *b)
{
    bool any = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = strcmp(r->series[k].contender, s->contender) == 0 &&
                   r->series[k].description != NULL;
        if (seen || s->description == NULL)
            continue;
        if (!any)
            pkb_buf_puts(b, "Contenders:\n\n");
        any = true;
        pkb_buf_puts(b, "- ");
        pkb_md_code(b, s->contender);
        pkb_buf_puts(b, ": ");
        pkb_md_text(b, s->description);
        pkb_buf_puts(b, "\n");
    }
    if (any)
        pkb_buf_puts(b, "\n");
}

static void md_not_timed(const pkb_results *r, const pkb_results_scenario *sc, pkb_buf *b)
{
    bool any = false;
    for (size_t k = 0; k < sc->count; k++) {
        const pkb_results_series *s = &r->series[sc->members[k]];
        if (s->measured)
            continue;
        if (!any)
            pkb_buf_puts(b, "Not timed:\n\n");
        any = true;
        pkb_buf_puts(b, "- ");
        pkb_md_code(b, s->contender);
        if (strcmp(s->status, "measured") == 0) {
            pkb_buf_puts(b, ": measured, but the file holds no samples\n");
            continue;
        }
        pkb_buf_printf(b, ": %s — ", s->status);
        pkb_md_text(b, s->reason ? s->reason : "no reason given");
        pkb_buf_puts(b, "\n");
    }
    if (any)
        pkb_buf_puts(b, "\n");
}

static void md_plot_links(const pkb_results *r, const pkb_results_scenario *sc, pkb_buf *b)
{
    char stem[256];
    pkb_figure_stem(r, sc->name, stem, sizeof stem);
    pkb_buf alt = {0};
    pkb_md_code(&alt, sc->name);
    pkb_buf_puts(&alt, ": mean time per iteration by contender, ± sd");
    pkb_md_figure(b, stem, alt.failed ? "" : alt.data);
    b->failed |= alt.failed;
    pkb_buf_free(&alt);
}

static void
md_scenario(const pkb_results *r, const pkb_results_scenario *sc, bool plots, pkb_buf *b)
{
    pkb_buf_puts(b, "### ");
    pkb_md_code(b, sc->name);
    pkb_buf_puts(b, "\n\n");
    int known = pkb_scenario_from_name(sc->name);
    if (known >= 0) {
        pkb_buf_puts(b, "Workload: ");
        pkb_md_text(b, pkb_scenario_description((pkb_scenario)known));
        pkb_buf_puts(b, ". ");
    }
    pkb_buf_puts(b, "Throughput in ");
    pkb_md_text(b, r->series[sc->members[0]].unit);
    pkb_buf_puts(b, ".\n\n");

    if (sc->measured > 0) {
        pkb_buf_puts(b, "| contender | mean ± sd | median | throughput | delta vs baseline |\n"
                        "|---|---:|---:|---:|---:|\n");
    }
    for (size_t k = 0; k < sc->count; k++) {
        const pkb_results_series *s = &r->series[sc->members[k]];
        if (!s->measured)
            continue;
        pkb__row row;
        pkb__scenario_row(r, sc, s, &row);
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, s->contender);
        if (s->noisy > 0)
            pkb_buf_printf(b, " (%zu of %zu repetition%s noisy[^noisy])", s->noisy, s->n,
                           s->n == 1 ? "" : "s");
        pkb_buf_puts(b, " | ");
        pkb__cell_mean_sd(b, s);
        pkb_buf_puts(b, " | ");
        pkb__cell_median(b, s);
        pkb_buf_puts(b, " | ");
        pkb__cell_throughput(b, &row, true);
        pkb_buf_puts(b, " | ");
        pkb__cell_delta(b, &row);
        pkb_buf_puts(b, " |\n");
    }
    if (sc->measured > 0)
        pkb_buf_puts(b, "\n");
    if (sc->measured > 0 && sc->baseline < 0)
        pkb_buf_puts(b, "No measured baseline in this scenario: no deltas.\n\n");
    md_not_timed(r, sc, b);
    if (plots && sc->measured > 0)
        md_plot_links(r, sc, b);
}

int pkb__scenarios_markdown(const pkb_results *r, bool plots, pkb_buf *b, char *err, size_t err_len)
{
    pkb_md_title(r, b);
    md_how_to_read(r, b);
    pkb_buf_puts(b, "## Measured results\n\n");
    md_contenders(r, b);
    if (r->nscenarios == 0)
        pkb_buf_puts(b, "The file holds no series.\n\n");
    for (size_t i = 0; i < r->nscenarios; i++)
        md_scenario(r, &r->scenarios[i], plots, b);
    pkb__md_conclusions(r, b);
    pkb__md_targets(r, b);
    pkb_md_appendix(r, b);
    return b->failed ? pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file) : 0;
}
