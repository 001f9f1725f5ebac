/*
 * terminal — the report for a terminal (report.h, "The terminal rendering"): what `pkbench run`
 * prints at its end and `pkbench report --print` prints, and the line `pkbench run` prints for
 * every finished series.
 *
 * The engine owns the frame (a title line, the incomplete-run warning, the notes on disturbed
 * repetitions); a suite's `terminal` supplies its key tables and its `series_line` the per-series
 * line, both from the same code as its Markdown. A suite without them (a new one, say) still gets
 * a useful view here: per scenario, every series' median, mean ± sd and repetition count, which
 * the loader computed for every series of every file alike.
 */
#include "report/report.h"

#include "common/md.h"
#include "common/term.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* "347.2 µs": a time in the unit it reads best in, to 4 significant figures (common/md.h). */
static void time_text(pkb_buf *b, double ns)
{
    pkb_fmt_time(b, ns);
}

/* "358.8 ± 80.1 µs" in the unit of the mean; "358.8 µs, n = 1" for a single sample. */
static void mean_sd_text(pkb_buf *b, const pkb_results_series *s)
{
    pkb_fmt_time_sd(b, s->sum.mean, s->n >= 2 ? s->sum.sd : NAN);
    if (s->n < 2)
        pkb_buf_puts(b, ", n = 1");
}

static void title(const pkb_results *r, bool color, pkb_buf *out)
{
    pkb_term_line(out, color, PKB_TONE_BOLD, "%s: %s profile, %s", r->suite,
                  json_string_value(pkb_results_field(r, NULL, "profile")),
                  json_string_value(pkb_results_field(r, NULL, "created")));
    if (!json_is_true(pkb_results_field(r, NULL, "complete")))
        pkb_term_line(out, color, PKB_TONE_WARN,
                      "incomplete run: it was interrupted; only what finished is shown");
    pkb_buf_puts(out, "\n");
}

/* The Markdown's footnotes, a line each: disturbed repetitions (by the rule the file records or,
 * in an older file, runnable tasks beyond the CPUs), series calibrated again, re-measured series.
 */
static void disturbed_note(const pkb_results *r, bool color, pkb_buf *out)
{
    size_t noisy = 0, reps = 0, remeasured = 0, recalibrated = 0, sized_disturbed = 0;
    bool measured = false;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        if (s->measured) {
            noisy += s->noisy;
            reps += s->n;
            remeasured += s->attempts > 1;
            measured |= s->disturbance_measured;
            recalibrated += s->calibration_passes == 2;
            sized_disturbed += s->calibration_disturbed;
        }
    }
    const json_t *rule = pkb_results_field(r, "settings", "disturbance");
    if (noisy > 0 && measured) {
        pkb_term_line(out, color, PKB_TONE_WARN,
                      "disturbed: %zu of %zu repetitions ran while other processes used more than "
                      "%.0f%% of the CPUs or the hypervisor stole more than %.0f%% (kept in every "
                      "number)",
                      noisy, reps,
                      100 * json_number_value(json_object_get(rule, "others_cpu_above")),
                      100 * json_number_value(json_object_get(rule, "steal_above")));
    } else if (noisy > 0) {
        pkb_term_line(out, color, PKB_TONE_WARN,
                      "disturbed: %zu of %zu repetitions ended with more runnable tasks than the "
                      "machine's %lld logical CPUs (kept in every number)",
                      noisy, reps, r->logical_cpus);
    }
    if (recalibrated > 0) {
        pkb_term_line(out, color, PKB_TONE_WARN,
                      "calibrated again: %zu series, other load ran during their first "
                      "calibration; %zu sized from a disturbed call all the same (the file's "
                      "`calibration`)",
                      recalibrated, sized_disturbed);
    }
    if (remeasured > 0) {
        pkb_term_line(out, color, PKB_TONE_WARN,
                      "re-measured: %zu series, too disturbed the first time (both attempts are "
                      "in the file; the less disturbed one is shown)",
                      remeasured);
    }
}

void pkb_term_not_timed(const pkb_results *r,
                        const pkb_results_scenario *sc,
                        bool color,
                        pkb_buf *out)
{
    for (size_t k = 0; k < sc->count; k++) {
        const pkb_results_series *s = &r->series[sc->members[k]];
        if (s->measured)
            continue;
        if (strcmp(s->status, "measured") == 0)
            pkb_term_line(out, color, PKB_TONE_DIM,
                          "  not timed: %s — measured, but the file holds no samples",
                          s->contender);
        else
            pkb_term_line(out, color, PKB_TONE_DIM, "  not timed: %s — %s: %s", s->contender,
                          s->status, s->reason != NULL ? s->reason : "no reason given");
    }
}

/* The generic view: per scenario, a table of its measured series. */
static int generic_tables(const pkb_results *r, bool color, pkb_buf *out)
{
    for (size_t i = 0; i < r->nscenarios; i++) {
        const pkb_results_scenario *sc = &r->scenarios[i];
        pkb_term_puts(out, color, PKB_TONE_BOLD, sc->name);
        pkb_buf_puts(out, "\n");
        pkb_table *t = pkb_table_new("lrrrr");
        if (sc->measured > 0)
            pkb_table_heads(t, "series", "median", "mean ± sd", "n", "disturbed", NULL);
        for (size_t k = 0; k < sc->count; k++) {
            const pkb_results_series *s = &r->series[sc->members[k]];
            if (!s->measured)
                continue;
            pkb_buf m = {0}, ms = {0};
            time_text(&m, s->sum.median);
            mean_sd_text(&ms, s);
            pkb_table_add(t, s->baseline ? PKB_TONE_BOLD : 0, "%s", s->contender);
            pkb_table_add(t, 0, "%s", m.failed ? "" : m.data);
            pkb_table_add(t, 0, "%s", ms.failed ? "" : ms.data);
            pkb_table_add(t, 0, "%zu", s->n);
            if (s->noisy > 0)
                pkb_table_add(t, PKB_TONE_WARN, "%zu/%zu", s->noisy, s->n);
            else
                pkb_table_add(t, 0, "%s", "");
            out->failed |= m.failed || ms.failed;
            pkb_buf_free(&m);
            pkb_buf_free(&ms);
        }
        if (sc->measured > 0)
            pkb_table_render(t, "  ", color, out);
        pkb_table_free(t);
        pkb_term_not_timed(r, sc, color, out);
        pkb_buf_puts(out, "\n");
    }
    if (r->nscenarios == 0)
        pkb_buf_puts(out, "The file holds no series.\n\n");
    return 0;
}

int pkb_term_report(const pkb_results *r,
                    const pkb_report_kind *kind,
                    bool color,
                    pkb_buf *out,
                    char *err,
                    size_t err_len)
{
    title(r, color, out);
    int rc = kind != NULL && kind->terminal != NULL ? kind->terminal(r, color, out, err, err_len)
                                                    : generic_tables(r, color, out);
    if (rc != 0)
        return rc;
    disturbed_note(r, color, out);
    if (out->failed)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    return 0;
}

void pkb_term_series(const pkb_results *r, const pkb_report_kind *kind, size_t index, pkb_buf *out)
{
    const pkb_results_series *s = &r->series[index];
    if (!s->measured) {
        pkb_buf_printf(out, "%s: %s", s->status,
                       s->reason != NULL ? s->reason : "no samples in the file");
        return;
    }
    if (kind != NULL && kind->series_line != NULL) {
        kind->series_line(r, index, out);
        return;
    }
    pkb_buf_puts(out, "median ");
    time_text(out, s->sum.median);
    pkb_buf_puts(out, "  mean ");
    mean_sd_text(out, s);
    pkb_buf_printf(out, "  n %zu", s->n);
}
