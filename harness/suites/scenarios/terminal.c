/*
 * The scenarios suite for a terminal: what `pkbench run --suite scenarios` prints at its end and
 * `pkbench report --print` prints for its files, and the line it prints as each series finishes.
 *
 * Per scenario, one aligned table with the Markdown's columns in the Markdown's units — contender,
 * median, mean ± sd, throughput at the median, Δ of the medians against the scenario's baseline
 * with its 95% bootstrap CI, the verdict `pkbench compare --baseline-contender` gives — and the
 * marks (disturbed repetitions, a re-measured series); then the series that were not timed and
 * why, then the project's targets. Every number and word comes from table.c and verdict.c, the
 * code the Markdown report uses, over the same verdicts, so both show the same.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"
#include "common/term.h"
#include "contenders/contender.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static pkb_tone bucket_tone(const pkb__row *row)
{
    if (row->v == NULL)
        return PKB_TONE_PLAIN;
    return row->bucket == PKB__SLOWER        ? PKB_TONE_BAD
           : row->bucket == PKB__FASTER      ? PKB_TONE_GOOD
           : row->bucket == PKB__UNDECIDABLE ? PKB_TONE_WARN
                                             : PKB_TONE_PLAIN;
}

/* Adds c's text as the next cell and empties c for the next one. */
static void take(pkb_table *t, pkb_tone tone, pkb_buf *c, pkb_buf *out)
{
    pkb_table_add(t, tone, "%s", c->failed || c->data == NULL ? "" : c->data);
    out->failed |= c->failed;
    pkb_buf_free(c);
}

static void scenario_title(const pkb_results_scenario *sc, bool color, pkb_buf *out)
{
    pkb_term_puts(out, color, PKB_TONE_BOLD, sc->name);
    int children = 0, known = pkb_scenario_parse(sc->name, &children);
    if (known == PKB_FAN_OUT_SCALE)
        pkb_buf_printf(out, "  (N = %d: the fan-out at scale)", children);
    else if (known >= 0)
        pkb_buf_printf(out, "  (%s)", pkb_scenario_description((pkb_scenario)known));
    pkb_buf_puts(out, "\n");
}

/* The Markdown's header, and a column for the marks when a row has any. */
static pkb_table *table_head(const pkb_results *r, const pkb__table *tab, bool marks)
{
    pkb_table *t = pkb_table_new(marks ? "lrrrrrll" : "lrrrrrl");
    pkb_table_add(t, 0, "contender");
    pkb_table_add(t, 0, "median (%s)", tab->unit);
    pkb_table_add(t, 0, "mean ± sd (%s)", tab->unit);
    pkb_table_add(t, 0, "throughput (%s)", r->series[tab->sc->members[0]].unit);
    pkb_table_add(t, 0, "Δ median vs %s", tab->base != NULL ? tab->base->contender : "baseline");
    pkb_table_add(t, 0, "95%% CI");
    pkb_table_add(t, 0, "verdict");
    if (marks)
        pkb_table_add(t, 0, "marks");
    return t;
}

static void table_row(pkb_table *t,
                      const pkb__table *tab,
                      const pkb_verdict_set *vs,
                      const pkb_results_series *s,
                      pkb_buf *out)
{
    pkb__row row;
    pkb__scenario_row(tab, vs, s, &row);
    pkb_table_add(t, row.is_base ? PKB_TONE_BOLD : 0, "%s%s%s%s", s->contender,
                  s->side != NULL ? " [" : "", s->side != NULL ? s->side : "",
                  s->side != NULL ? "]" : ""); /* a file of pkbench ab: which build */
    pkb_buf c = {0};
    pkb__cell_median(&c, tab, s);
    take(t, 0, &c, out);
    pkb__cell_mean_sd(&c, tab, s, NULL);
    take(t, 0, &c, out);
    pkb__cell_throughput(&c, s);
    take(t, 0, &c, out);
    pkb__cell_delta(&c, &row);
    take(t, bucket_tone(&row), &c, out);
    pkb__cell_ci(&c, &row);
    take(t, 0, &c, out);
    pkb__cell_verdict(&c, &row, false);
    take(t, bucket_tone(&row), &c, out);
    pkb__cell_marks(&c, s, false);
    if (c.len > 0)
        take(t, PKB_TONE_WARN, &c, out);
    pkb_buf_free(&c);
    pkb_table_end_row(t);
}

static void scenario_table(const pkb_results *r,
                           const pkb_results_scenario *sc,
                           const pkb_verdict_set *vs,
                           bool color,
                           pkb_buf *out)
{
    pkb__table tab;
    pkb__scenario_table(r, sc, &tab);
    bool marks = false;
    for (size_t k = 0; k < sc->count; k++) {
        const pkb_results_series *s = &r->series[sc->members[k]];
        marks |= s->measured && (s->noisy > 0 || s->attempts > 1);
    }
    pkb_table *t = table_head(r, &tab, marks);
    for (size_t k = 0; k < sc->count; k++)
        if (r->series[sc->members[k]].measured)
            table_row(t, &tab, vs, &r->series[sc->members[k]], out);
    pkb_table_render(t, "  ", color, out);
    pkb_table_free(t);
}

static void how_to_read(const pkb_verdict_set *vs, pkb_buf *out)
{
    size_t paired = 0;
    for (size_t i = 0; i < vs->n; i++)
        paired += vs->v[i].paired;
    if (paired > 0 && paired == vs->n)
        pkb_buf_puts(out, "Δ: the median of the per-round ratios to the baseline − 1 (paired by "
                          "round: each round took\none repetition of both), with its 95% "
                          "bootstrap CI over the rounds. ");
    else if (paired > 0)
        pkb_buf_printf(out,
                       "Δ: the median of the per-round ratios to the baseline − 1 for the %zu of "
                       "%zu pairs\npaired by round, else median / baseline median − 1; with its "
                       "95%% bootstrap CI. ",
                       paired, vs->n);
    else
        pkb_buf_puts(out, "Δ: median / baseline median − 1 in this run, with its 95% bootstrap "
                          "CI. ");
    pkb_buf_printf(out,
                   "verdict (pkbench compare's):\nslower or faster when significant (%s, Holm) "
                   "and beyond %.0f%%, negligible within %.0f%%, not\ndistinguishable when a "
                   "larger Δ is not significant, undecidable with too few or too noisy samples."
                   "\n\n",
                   paired > 0 ? "signed-rank" : "Mann-Whitney", PKB_VERDICT_NEGLIGIBLE * 100,
                   PKB_VERDICT_NEGLIGIBLE * 100);
}

int pkb__scenarios_terminal(
    const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len)
{
    pkb_verdict_set vs;
    int rc = pkb__scenarios_verdicts(r, &vs, err, err_len);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < r->nscenarios; i++) {
        const pkb_results_scenario *sc = &r->scenarios[i];
        scenario_title(sc, color, out);
        if (sc->measured > 0)
            scenario_table(r, sc, &vs, color, out);
        if (sc->measured > 0 && sc->baseline < 0)
            pkb_buf_puts(out, "  no measured baseline in this scenario: no deltas\n");
        pkb_term_not_timed(r, sc, color, out);
        pkb_buf_puts(out, "\n");
    }
    if (r->nscenarios == 0)
        pkb_buf_puts(out, "The file holds no series.\n\n");
    else
        how_to_read(&vs, out);
    pkb_verdict_set_free(&vs);
    pkb__term_seed(r, color, out);
    pkb__term_scale(r, color, out);
    pkb__term_targets(r, color, out);
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

/* "  +1.4% [-2.2%, +4.5%] vs posix_spawn: negligible", "  baseline", or nothing before the
 * baseline has run. */
static void
line_verdict(const pkb_results *r, const pkb__table *tab, const pkb_results_series *s, pkb_buf *out)
{
    char err[256] = "";
    pkb_verdict_set vs;
    if (pkb__scenarios_verdicts(r, &vs, err, sizeof err) != 0) {
        pkb_buf_printf(out, "  (no verdict: %s)", err);
        return;
    }
    pkb__row row;
    pkb__scenario_row(tab, &vs, s, &row);
    if (row.is_base) {
        pkb_buf_puts(out, "  baseline");
    } else if (row.v != NULL) {
        pkb_buf_puts(out, "  ");
        pkb__cell_delta(out, &row);
        pkb_buf_puts(out, " ");
        pkb__cell_ci(out, &row);
        pkb_buf_printf(out, " vs %s: ", tab->base->contender);
        pkb__cell_verdict(out, &row, false);
    }
    pkb_verdict_set_free(&vs);
}

/* "median 611.2 µs  mean 608.5 ± 16.56 µs  1,636 runs/s  +1.4% [-2.2%, +4.5%] vs posix_spawn:
 * negligible  1/8 disturbed": the series' row of its scenario's table, in the table's unit. */
void pkb__scenarios_series_line(const pkb_results *r, size_t index, pkb_buf *out)
{
    const pkb_results_series *s = &r->series[index];
    const pkb_results_scenario *sc = scenario_of(r, s);
    if (sc == NULL) /* the loader groups every series into its scenario: cannot happen */
        return;
    pkb__table tab;
    pkb__scenario_table(r, sc, &tab);
    pkb_buf_puts(out, "median ");
    pkb__cell_median(out, &tab, s);
    pkb_buf_printf(out, " %s  mean ", tab.unit);
    pkb__cell_mean_sd(out, &tab, s, tab.unit);
    if (s->work > 0) {
        pkb_buf_puts(out, "  ");
        pkb__cell_throughput(out, s);
        pkb_buf_printf(out, " %s", s->unit);
    }
    line_verdict(r, &tab, s, out);
    if (s->noisy > 0 || s->attempts > 1) {
        pkb_buf_puts(out, "  ");
        pkb__cell_marks(out, s, false);
    }
}
