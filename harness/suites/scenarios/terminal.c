/*
 * The scenarios suite for a terminal: what `pkbench run --suite scenarios` prints at its end and
 * `pkbench report --print` prints for its files, and the line it prints as each series finishes.
 *
 * Per scenario, one aligned table — contender, median, mean ± sd (the spread), throughput, delta
 * against the scenario's baseline, verdict (|delta| within the report's 10% negligible-overhead
 * threshold, or slower, or faster), and how many repetitions were noisy — then the series that
 * were not timed and why, then the project's targets. Every cell comes from table.c and
 * verdict.c, the code the Markdown report uses, so both show the same numbers.
 */
#include "suites/scenarios/report.h"

#include "common/md.h"
#include "common/term.h"
#include "suites/scenarios/contender.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static pkb_tone verdict_tone(pkb__verdict v)
{
    return v == PKB__SLOWER ? PKB_TONE_BAD : v == PKB__FASTER ? PKB_TONE_GOOD : PKB_TONE_PLAIN;
}

/* Adds c's text as the next cell and empties c for the next one. */
static void take(pkb_table *t, pkb_tone tone, pkb_buf *c, pkb_buf *out)
{
    pkb_table_add(t, tone, "%s", c->failed || c->data == NULL ? "" : c->data);
    out->failed |= c->failed;
    pkb_buf_free(c);
}

static void
scenario_title(const pkb_results *r, const pkb_results_scenario *sc, bool color, pkb_buf *out)
{
    pkb_term_puts(out, color, PKB_TONE_BOLD, sc->name);
    int known = pkb_scenario_from_name(sc->name);
    pkb_buf_printf(out, "  (%s%sthroughput in %s)\n",
                   known >= 0 ? pkb_scenario_description((pkb_scenario)known) : "",
                   known >= 0 ? "; " : "", r->series[sc->members[0]].unit);
}

static void
scenario_table(const pkb_results *r, const pkb_results_scenario *sc, bool color, pkb_buf *out)
{
    bool noisy = false;
    for (size_t k = 0; k < sc->count; k++)
        noisy |= r->series[sc->members[k]].measured && r->series[sc->members[k]].noisy > 0;
    pkb_table *t = pkb_table_new(noisy ? "lrrrrlr" : "lrrrrl");
    pkb_table_add(t, 0, "contender");
    pkb_table_add(t, 0, "median");
    pkb_table_add(t, 0, "mean ± sd");
    pkb_table_add(t, 0, "throughput");
    if (sc->baseline >= 0)
        pkb_table_add(t, 0, "vs %s", r->series[sc->baseline].contender);
    else
        pkb_table_add(t, 0, "delta");
    pkb_table_add(t, 0, "verdict");
    if (noisy)
        pkb_table_add(t, 0, "noisy");
    for (size_t k = 0; k < sc->count; k++) {
        const pkb_results_series *s = &r->series[sc->members[k]];
        if (!s->measured)
            continue;
        pkb__row row;
        pkb__scenario_row(r, sc, s, &row);
        pkb_table_add(t, row.verdict == PKB__IS_BASELINE ? PKB_TONE_BOLD : 0, "%s", s->contender);
        pkb_buf c = {0};
        pkb__cell_median(&c, s);
        take(t, 0, &c, out);
        pkb__cell_mean_sd(&c, s);
        take(t, 0, &c, out);
        pkb__cell_throughput(&c, &row, false);
        take(t, 0, &c, out);
        pkb__cell_delta(&c, &row);
        take(t, verdict_tone(row.verdict), &c, out);
        pkb_table_add(t, verdict_tone(row.verdict), "%s",
                      row.verdict == PKB__IS_BASELINE ? "" : pkb__verdict_name(row.verdict));
        if (s->noisy > 0)
            pkb_table_add(t, PKB_TONE_WARN, "%zu/%zu", s->noisy, s->n);
        pkb_table_end_row(t);
    }
    pkb_table_render(t, "  ", color, out);
    pkb_table_free(t);
}

int pkb__scenarios_terminal(
    const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len)
{
    for (size_t i = 0; i < r->nscenarios; i++) {
        const pkb_results_scenario *sc = &r->scenarios[i];
        scenario_title(r, sc, color, out);
        if (sc->measured > 0)
            scenario_table(r, sc, color, out);
        if (sc->measured > 0 && sc->baseline < 0)
            pkb_buf_puts(out, "  no measured baseline in this scenario: no deltas\n");
        pkb_term_not_timed(r, sc, color, out);
        pkb_buf_puts(out, "\n");
    }
    if (r->nscenarios == 0)
        pkb_buf_puts(out, "The file holds no series.\n\n");
    else
        pkb_buf_printf(out,
                       "delta: (mean − baseline mean) / baseline mean, in this run; verdict: "
                       "negligible within ±%.0f%%, else slower or faster\n\n",
                       PKB_REPORT_NEGLIGIBLE * 100);
    pkb__term_targets(r, color, out);
    if (r->nscenarios > 0)
        pkb__term_rivals(r, color, out);
    if (out->failed)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    return 0;
}

static const pkb_results_scenario *scenario_of(const pkb_results *r, const pkb_results_series *s)
{
    for (size_t i = 0; i < r->nscenarios; i++)
        if (strcmp(r->scenarios[i].name, s->scenario) == 0)
            return &r->scenarios[i];
    return NULL;
}

void pkb__scenarios_series_line(const pkb_results *r, size_t index, pkb_buf *out)
{
    const pkb_results_series *s = &r->series[index];
    const pkb_results_scenario *sc = scenario_of(r, s);
    if (sc == NULL) /* the loader groups every series into its scenario: cannot happen */
        return;
    pkb__row row;
    pkb__scenario_row(r, sc, s, &row);
    pkb_buf_puts(out, "median ");
    pkb__cell_median(out, s);
    pkb_buf_puts(out, "  mean ");
    pkb__cell_mean_sd(out, s);
    pkb_buf_puts(out, "  ");
    pkb__cell_throughput(out, &row, false);
    if (row.verdict == PKB__IS_BASELINE) {
        pkb_buf_puts(out, "  baseline");
    } else if (row.base != NULL) {
        pkb_buf_puts(out, "  ");
        pkb__cell_delta(out, &row);
        pkb_buf_printf(out, " vs %s (%s)", row.base->contender, pkb__verdict_name(row.verdict));
    }
    if (s->noisy > 0)
        pkb_buf_printf(out, "  %zu/%zu noisy", s->noisy, s->n);
}
