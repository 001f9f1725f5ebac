/*
 * The phases report's targets: ratios between two phase series that the project holds itself to,
 * decided as the scenarios report decides its own (results/verdict.h): the two series paired by
 * round when they share at least 6 rounds (the median per-round ratio, its 95% bootstrap CI over
 * the rounds), apart otherwise; met only when the whole CI meets the limit, not met only when the
 * whole CI misses it. One table, worded once, rendered as Markdown (report.c's "## Targets") and
 * for a terminal (the end of `pkbench run --suite phases`).
 */
#include "suites/phases/view.h"

#include "common/md.h"
#include "common/term.h"
#include "results/verdict.h"

#include <stdio.h>
#include <string.h>

static const struct phase_target {
    const char *series, *base; /* phase series: contenders of group "phase" */
    double max_ratio;
} targets[] = {
    /* Issue 14: the capture path as disciplined as the spawn, against a hand-written loop doing
     * the same work (two pipes, the kept /dev/null on stdin, poll, read, waitpid). */
    {"processkit_defaults", "vfork_pipes_poll", 1.10},
};

#define NTARGETS (sizeof targets / sizeof targets[0])

/* Whether the file has a series of any target: a run filtered to others is not told about them. */
static bool any_target(const pkb_results *r)
{
    for (size_t i = 0; i < NTARGETS; i++)
        if (pkb_results_find_in(r, "phase", targets[i].series) != NULL ||
            pkb_results_find_in(r, "phase", targets[i].base) != NULL)
            return true;
    return false;
}

static void name(pkb_buf *b, const char *s, bool md)
{
    if (md)
        pkb_md_code(b, s);
    else
        pkb_buf_puts(b, s);
}

/* One target, worded: its label, what was measured, the result (with why when undecidable).
 * Returns the result, or -1 when it was not checked. */
static int evaluate(const pkb_results *r,
                    const struct phase_target *t,
                    bool md,
                    pkb_buf *label,
                    pkb_buf *measured,
                    pkb_buf *result)
{
    name(label, t->series, md);
    pkb_buf_printf(label, " within %.2f× of ", t->max_ratio);
    name(label, t->base, md);
    const pkb_results_series *s = pkb_results_find_in(r, "phase", t->series),
                             *o = pkb_results_find_in(r, "phase", t->base);
    if (s == NULL || o == NULL || !s->measured || !o->measured) {
        bool own = s == NULL || !s->measured;
        const pkb_results_series *gone = own ? s : o;
        pkb_buf_puts(measured, "no measured ");
        name(measured, own ? t->series : t->base, md);
        pkb_buf_printf(measured, " series%s%s", gone != NULL ? ": " : "",
                       gone != NULL ? gone->status : "");
        pkb_buf_puts(result, "not checked");
        return -1;
    }
    pkb_verdict v;
    if (pkb_verdict_pair(o, s, &v) != 0) {
        pkb_buf_puts(measured, "the statistics could not be computed");
        pkb_buf_puts(result, "not checked");
        return -1;
    }
    pkb_target_result res = pkb_target_check(&v, t->max_ratio, false);
    pkb_buf_printf(measured, "%.3f× [%.3f×, %.3f×]%s", v.s.ratio.estimate, v.s.ratio.lo,
                   v.s.ratio.hi, v.paired ? "" : " (apart)");
    pkb_buf_puts(result, pkb_target_result_name(res));
    if (res == PKB_TARGET_UNDECIDABLE) {
        char why[200] = "";
        pkb_verdict_why(&v, 0, t->base, t->series, why, sizeof why);
        pkb_buf_printf(result, " (%s)", why[0] != '\0' ? why : "the CI straddles the target");
    }
    return (int)res;
}

static const char *text(const pkb_buf *b)
{
    return b->failed || b->data == NULL ? "" : b->data;
}

void pkb__phases_md_targets(const pkb_results *r, pkb_buf *b)
{
    if (!any_target(r))
        return;
    pkb_buf_puts(b, "## Targets\n\n"
                    "The project's targets among the phase series, as ratios of two series in "
                    "this run (paired by round: the median of the per-round ratios, with its 95% "
                    "bootstrap CI over the rounds; apart when fewer than 6 rounds are shared), "
                    "decided as the scenarios report decides its own: *met* only when the whole "
                    "CI meets the target, *not met* only when the whole CI misses it, "
                    "*undecidable* otherwise or when the samples are too few or too noisy.\n\n"
                    "| target | measured [95% CI] | result |\n|---|---|---|\n");
    for (size_t i = 0; i < NTARGETS; i++) {
        pkb_buf label = {0}, measured = {0}, result = {0};
        evaluate(r, &targets[i], true, &label, &measured, &result);
        pkb_buf_printf(b, "| %s | %s | %s |\n", text(&label), text(&measured), text(&result));
        b->failed |= label.failed || measured.failed || result.failed;
        pkb_buf_free(&label);
        pkb_buf_free(&measured);
        pkb_buf_free(&result);
    }
    pkb_buf_puts(b, "\n");
}

void pkb__phases_term_targets(const pkb_results *r, bool color, pkb_buf *out)
{
    if (!any_target(r))
        return;
    pkb_table *t = pkb_table_new("lrl");
    pkb_table_heads(t, "target", "measured [95% CI]", "result", NULL);
    for (size_t i = 0; i < NTARGETS; i++) {
        pkb_buf label = {0}, measured = {0}, result = {0};
        int res = evaluate(r, &targets[i], false, &label, &measured, &result);
        pkb_tone tone = res == PKB_TARGET_MET       ? PKB_TONE_GOOD
                        : res == PKB_TARGET_NOT_MET ? PKB_TONE_BAD
                        : res < 0                   ? PKB_TONE_DIM
                                                    : PKB_TONE_WARN;
        pkb_table_add(t, 0, "%s", text(&label));
        pkb_table_add(t, 0, "%s", text(&measured));
        pkb_table_add(t, tone, "%s", text(&result));
        out->failed |= label.failed || measured.failed || result.failed;
        pkb_buf_free(&label);
        pkb_buf_free(&measured);
        pkb_buf_free(&result);
    }
    pkb_term_puts(out, color, PKB_TONE_BOLD, "targets");
    pkb_buf_puts(out, "  (paired by round, 95% bootstrap CI: met or not met only when the whole "
                      "CI says so)\n");
    pkb_table_finish(t, color, out);
}
