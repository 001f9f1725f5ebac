/*
 * The report's verdicts, worded from the numbers: the conclusions (for every contender but the
 * baseline, in which scenarios its delta is within the seed document's 10% negligible-overhead
 * threshold, processkit first) and the project's targets (ratios of means, processkit / other,
 * checked only where both series were measured). Part of report.c's Markdown; the targets are
 * also a table of the terminal view (pkb__term_targets), evaluated by the same functions.
 */
#include "suites/scenarios/report.h"

#include "common/md.h"
#include "common/term.h"

#include <stdlib.h>
#include <string.h>

/* ---- conclusions ---------------------------------------------------------------------------- */

static const pkb_results_series *
find_series(const pkb_results *r, const char *scenario, const char *who)
{
    for (size_t i = 0; i < r->nseries; i++)
        if (strcmp(r->series[i].scenario, scenario) == 0 &&
            strcmp(r->series[i].contender, who) == 0)
            return &r->series[i];
    return NULL;
}

static const pkb_results_series *
find_measured(const pkb_results *r, const char *scenario, const char *who)
{
    const pkb_results_series *s = find_series(r, scenario, who);
    return s != NULL && s->measured ? s : NULL;
}

/* 0 for "processkit", 1 for "processkit_<variant>", 2 for everyone else: the report's order. */
static int rank(const char *contender)
{
    if (strcmp(contender, "processkit") == 0)
        return 0;
    return strncmp(contender, "processkit_", 11) == 0 ? 1 : 2;
}

enum bucket { NEGLIGIBLE, SLOWER, FASTER, UNTIMED, NO_BASELINE, NBUCKETS };

/* "`a` (+1.0%), `b` (+2.0%) and `c` (+3.0%)" for the scenarios of one bucket. */
static void md_scenario_list(
    const pkb_results *r, const char *who, enum bucket k, const enum bucket *of, pkb_buf *b)
{
    size_t total = 0, done = 0;
    for (size_t i = 0; i < r->nscenarios; i++)
        total += of[i] == k;
    for (size_t i = 0; i < r->nscenarios; i++) {
        if (of[i] != k)
            continue;
        const pkb_results_scenario *sc = &r->scenarios[i];
        pkb_buf_puts(b, done == 0 ? "" : done + 1 == total ? " and " : ", ");
        pkb_md_code(b, sc->name);
        const pkb_results_series *s = find_series(r, sc->name, who);
        if (k == UNTIMED) {
            pkb_buf_printf(b, " (%s)", s->status);
        } else if (k != NO_BASELINE) {
            pkb_buf_puts(b, " (");
            pkb_fmt_delta(b, pkb__delta(s, &r->series[sc->baseline]));
            pkb_buf_puts(b, ")");
        }
        done++;
    }
}

/* One bullet: where `who`'s overhead against the baseline is negligible and where it is not. */
static void md_contender_verdict(const pkb_results *r, const char *who, pkb_buf *b)
{
    enum bucket *of = calloc(r->nscenarios, sizeof *of);
    if (of == NULL) {
        b->failed = true;
        return;
    }
    size_t count[NBUCKETS] = {0}, rows = 0;
    for (size_t i = 0; i < r->nscenarios; i++) {
        const pkb_results_scenario *sc = &r->scenarios[i];
        const pkb_results_series *s = find_series(r, sc->name, who);
        of[i] = NBUCKETS;
        if (s == NULL || (sc->baseline >= 0 && s == &r->series[sc->baseline]))
            continue;
        if (!s->measured) {
            of[i] = UNTIMED;
        } else if (sc->baseline < 0) {
            of[i] = NO_BASELINE;
        } else {
            pkb__verdict v = pkb__delta_verdict(pkb__delta(s, &r->series[sc->baseline]));
            of[i] = v == PKB__NEGLIGIBLE ? NEGLIGIBLE : v == PKB__SLOWER ? SLOWER : FASTER;
        }
        count[of[i]]++;
        rows++;
    }
    if (rows > 0) {
        static const char *const lead[NBUCKETS] = {
            [NEGLIGIBLE] = "negligible in ",
            [SLOWER] = "not negligible in ",
            [FASTER] = "faster than the baseline by more than the threshold in ",
            [UNTIMED] = "not timed in ",
            [NO_BASELINE] = "no baseline to compare with in ",
        };
        pkb_buf_puts(b, rank(who) == 0 ? "- **" : "- ");
        pkb_md_code(b, who);
        pkb_buf_puts(b, rank(who) == 0 ? "**: " : ": ");
        bool first = true;
        for (int k = 0; k < NBUCKETS; k++) {
            if (count[k] == 0)
                continue;
            pkb_buf_puts(b, first ? "" : "; ");
            if (k == NEGLIGIBLE && count[k] == rows && rows >= 2)
                pkb_buf_printf(b, "negligible in all %zu scenarios: ", rows);
            else
                pkb_buf_puts(b, lead[k]);
            md_scenario_list(r, who, (enum bucket)k, of, b);
            first = false;
        }
        pkb_buf_puts(b, ".\n");
    }
    free(of);
}

/* Distinct contender names in report order: processkit, its variants, then the rest. */
static const char **contenders_in_order(const pkb_results *r, size_t *n)
{
    const char **names = calloc(r->nseries + 1, sizeof *names);
    if (names == NULL)
        return NULL;
    *n = 0;
    for (int want = 0; want <= 2; want++) {
        for (size_t i = 0; i < r->nseries; i++) {
            const char *c = r->series[i].contender;
            bool seen = false;
            for (size_t k = 0; k < *n && !seen; k++)
                seen = strcmp(names[k], c) == 0;
            if (!seen && rank(c) == want)
                names[(*n)++] = c;
        }
    }
    return names;
}

void pkb__md_conclusions(const pkb_results *r, pkb_buf *b)
{
    pkb_buf_puts(b, "## Conclusions\n\n");
    /* The baselines named once: `posix_spawn`, or `a` / `b` when scenarios differ. */
    pkb_buf_printf(b,
                   "Using a %.0f%% delta as a practical negligible-overhead threshold (the "
                   "delta of the mean against ",
                   PKB_REPORT_NEGLIGIBLE * 100);
    size_t nbase = 0;
    for (size_t i = 0; i < r->nscenarios; i++) {
        long bi = r->scenarios[i].baseline;
        bool repeat = false;
        for (size_t k = 0; k < i && !repeat && bi >= 0; k++)
            repeat =
                r->scenarios[k].baseline >= 0 &&
                strcmp(r->series[r->scenarios[k].baseline].contender, r->series[bi].contender) == 0;
        if (bi < 0 || repeat)
            continue;
        pkb_buf_puts(b, nbase == 0 ? "the scenario's baseline, " : " / ");
        pkb_md_code(b, r->series[bi].contender);
        nbase++;
    }
    if (nbase == 0)
        pkb_buf_puts(b, "the scenario's baseline, of which this file has none");
    pkb_buf_puts(b, ", in this run):\n\n");

    size_t n = 0;
    const char **names = contenders_in_order(r, &n);
    if (names == NULL) {
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        md_contender_verdict(r, names[i], b);
    free(names);

    size_t noisy = 0, reps = 0;
    for (size_t i = 0; i < r->nseries; i++) {
        if (r->series[i].measured) {
            noisy += r->series[i].noisy;
            reps += r->series[i].n;
        }
    }
    pkb_buf_puts(b, "\n");
    if (noisy > 0)
        pkb_buf_printf(b,
                       "%zu of %zu measured repetitions were noisy[^noisy]; they are included "
                       "in every number above. ",
                       noisy, reps);
    pkb_buf_puts(b, "These are single-machine measurements of one run: they describe this "
                    "workload and environment, not a universal ranking.\n\n");
}

/* ---- targets ----------------------------------------------------------------------------------
 */

#define PROCESSKIT "processkit"

static const struct target {
    const char *scenario, *other;
    double max_ratio;
    bool as_percent; /* "≤ +3% vs" rather than "within 1.10× of" */
} targets[] = {
    {"spawn_capture_small", "posix_spawn", 1.03, true},
    {"stream_large_stdout", "posix_spawn", 1.05, true},
    {"concurrent_fan_out", "posix_spawn", 1.05, true},
    {"spawn_only", "vfork_exec", 1.10, false},
};

static const char *const rivals[] = {"libuv", "glib"};

/* A target, evaluated: the ratio of means processkit / other, or the contender that has no
 * measured series (then it is not checked). */
struct target_eval {
    const char *missing;
    double ratio;
    bool met;
};

static void eval_target(const pkb_results *r, const struct target *t, struct target_eval *e)
{
    const pkb_results_series *pk = find_measured(r, t->scenario, PROCESSKIT);
    const pkb_results_series *other = find_measured(r, t->scenario, t->other);
    *e = (struct target_eval){.missing = pk == NULL ? PROCESSKIT : other == NULL ? t->other : NULL};
    if (e->missing != NULL)
        return;
    e->ratio = pk->sum.mean / other->sum.mean;
    e->met = e->ratio <= t->max_ratio;
}

/* "`processkit` ≤ +3% vs `posix_spawn` in `spawn_capture_small`" (names as code when `md`). */
static void name(pkb_buf *b, const char *s, bool md)
{
    if (md)
        pkb_md_code(b, s);
    else
        pkb_buf_puts(b, s);
}

static void target_label(pkb_buf *b, const struct target *t, bool md)
{
    name(b, PROCESSKIT, md);
    if (t->as_percent)
        pkb_buf_printf(b, " ≤ +%.0f%% vs ", (t->max_ratio - 1) * 100);
    else
        pkb_buf_printf(b, " within %.2f× of ", t->max_ratio);
    name(b, t->other, md);
    pkb_buf_puts(b, " in ");
    name(b, t->scenario, md);
}

static void
target_measured(pkb_buf *b, const struct target *t, const struct target_eval *e, bool md)
{
    if (e->missing != NULL) {
        pkb_buf_puts(b, "no measured ");
        name(b, e->missing, md);
        pkb_buf_puts(b, " series");
        return;
    }
    pkb_buf_printf(b, "%.3f×", e->ratio);
    if (t->as_percent) {
        pkb_buf_puts(b, " (");
        pkb_fmt_delta(b, e->ratio - 1);
        pkb_buf_puts(b, ")");
    }
}

static const char *target_result(const struct target_eval *e)
{
    return e->missing != NULL ? "not checked" : e->met ? "met" : "not met";
}

static void md_ratio_target(const pkb_results *r, const struct target *t, pkb_buf *b)
{
    struct target_eval e;
    eval_target(r, t, &e);
    pkb_buf_puts(b, "| ");
    target_label(b, t, true);
    pkb_buf_puts(b, " | ");
    target_measured(b, t, &e, true);
    pkb_buf_printf(b, " | %s |\n", target_result(&e));
}

/* processkit / rival in `scenario`, when both were measured there. */
static bool
rival_ratio(const pkb_results *r, const char *scenario, const char *rival, double *ratio)
{
    const pkb_results_series *pk = find_measured(r, scenario, PROCESSKIT);
    const pkb_results_series *other = find_measured(r, scenario, rival);
    if (pk == NULL || other == NULL)
        return false;
    *ratio = pk->sum.mean / other->sum.mean;
    return true;
}

/* The rival target's measured cell and its result ("met", "not met (behind in `a` and `b`)"). */
static void
rival_cells(const pkb_results *r, const char *rival, bool md, pkb_buf *measured, pkb_buf *result)
{
    size_t checked = 0, behind = 0;
    double ratio;
    for (size_t i = 0; i < r->nscenarios; i++) {
        if (!rival_ratio(r, r->scenarios[i].name, rival, &ratio))
            continue;
        pkb_buf_printf(measured, "%s%.3f× in ", checked > 0 ? ", " : "", ratio);
        name(measured, r->scenarios[i].name, md);
        checked++;
        behind += !(ratio < 1);
    }
    if (checked == 0) {
        pkb_buf_puts(measured, "no scenario with both measured");
        pkb_buf_puts(result, "not checked");
        return;
    }
    if (behind == 0) {
        pkb_buf_puts(result, "met");
        return;
    }
    pkb_buf_puts(result, "not met (behind in ");
    size_t done = 0;
    for (size_t i = 0; i < r->nscenarios; i++) {
        if (!rival_ratio(r, r->scenarios[i].name, rival, &ratio) || ratio < 1)
            continue;
        pkb_buf_puts(result, done == 0 ? "" : done + 1 == behind ? " and " : ", ");
        name(result, r->scenarios[i].name, md);
        done++;
    }
    pkb_buf_puts(result, ")");
}

static void md_rival_target(const pkb_results *r, const char *rival, pkb_buf *b)
{
    pkb_buf measured = {0}, result = {0};
    rival_cells(r, rival, true, &measured, &result);
    pkb_buf_puts(b, "| ");
    pkb_md_code(b, PROCESSKIT);
    pkb_buf_puts(b, " ahead of ");
    pkb_md_code(b, rival);
    pkb_buf_printf(b, " in every scenario | %s | %s |\n", measured.failed ? "" : measured.data,
                   result.failed ? "" : result.data);
    b->failed |= measured.failed || result.failed;
    pkb_buf_free(&measured);
    pkb_buf_free(&result);
}

void pkb__md_targets(const pkb_results *r, pkb_buf *b)
{
    pkb_buf_puts(b, "### Targets\n\n"
                    "The project's targets, as ratios of mean times (`processkit` / the other "
                    "contender) in this run; a target is checked only where both series were "
                    "measured.\n\n"
                    "| target | measured | result |\n|---|---|---|\n");
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        md_ratio_target(r, &targets[i], b);
    for (size_t i = 0; i < sizeof rivals / sizeof rivals[0]; i++)
        md_rival_target(r, rivals[i], b);
    pkb_buf_puts(b, "\n");
}

static pkb_tone result_tone(const char *result)
{
    return strcmp(result, "met") == 0           ? PKB_TONE_GOOD
           : strncmp(result, "not met", 7) == 0 ? PKB_TONE_BAD
                                                : PKB_TONE_DIM;
}

/* Whether the file has a series of `scenario`, or of `contender` in any scenario. */
static bool in_file(const pkb_results *r, const char *scenario, const char *contender)
{
    for (size_t i = 0; i < r->nseries; i++)
        if ((scenario != NULL && strcmp(r->series[i].scenario, scenario) == 0) ||
            (contender != NULL && strcmp(r->series[i].contender, contender) == 0))
            return true;
    return false;
}

/* The ratio targets of the scenarios this file has (a run filtered to one scenario is not told
 * about the others; the Markdown lists them all as not checked). */
void pkb__term_targets(const pkb_results *r, bool color, pkb_buf *b)
{
    pkb_table *t = pkb_table_new("lll");
    pkb_table_add(t, 0, "target");
    pkb_table_add(t, 0, "measured");
    pkb_table_add(t, 0, "result");
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        if (!in_file(r, targets[i].scenario, NULL))
            continue;
        struct target_eval e;
        eval_target(r, &targets[i], &e);
        pkb_buf label = {0}, measured = {0};
        target_label(&label, &targets[i], false);
        target_measured(&measured, &targets[i], &e, false);
        pkb_table_add(t, 0, "%s", label.failed ? "" : label.data);
        pkb_table_add(t, 0, "%s", measured.failed ? "" : measured.data);
        pkb_table_add(t, result_tone(target_result(&e)), "%s", target_result(&e));
        b->failed |= label.failed || measured.failed;
        pkb_buf_free(&label);
        pkb_buf_free(&measured);
    }
    if (pkb_table_rows(t) > 1) {
        pkb_term_puts(b, color, PKB_TONE_BOLD, "targets");
        pkb_buf_puts(b, " (ratios of mean times, processkit / the other contender)\n");
        pkb_table_render(t, "  ", color, b);
        pkb_buf_puts(b, "\n");
    }
    pkb_table_free(t);
}

/* The rival targets as one table: per rival, processkit / rival in every scenario, and the
 * result (what the Markdown's "ahead of ... in every scenario" rows say). Only the rivals the file
 * has a series of. */
void pkb__term_rivals(const pkb_results *r, bool color, pkb_buf *b)
{
    bool any = false;
    for (size_t k = 0; k < sizeof rivals / sizeof rivals[0]; k++)
        any |= in_file(r, NULL, rivals[k]);
    if (!any)
        return;
    pkb_term_puts(b, color, PKB_TONE_BOLD, "processkit against its rivals");
    pkb_buf_puts(b, " (processkit / rival, ratio of means; the target: below 1 in every "
                    "scenario)\n");
    char align[32] = "l";
    size_t ncols = r->nscenarios < sizeof align - 3 ? r->nscenarios : sizeof align - 3;
    for (size_t i = 0; i < ncols; i++)
        align[i + 1] = 'r';
    align[ncols + 1] = 'l';
    pkb_table *t = pkb_table_new(align);
    pkb_table_add(t, 0, "rival");
    for (size_t i = 0; i < ncols; i++)
        pkb_table_add(t, 0, "%s", r->scenarios[i].name);
    pkb_table_add(t, 0, "result");
    for (size_t k = 0; k < sizeof rivals / sizeof rivals[0]; k++) {
        if (!in_file(r, NULL, rivals[k]))
            continue;
        pkb_table_add(t, 0, "%s", rivals[k]);
        double ratio;
        for (size_t i = 0; i < ncols; i++) {
            if (rival_ratio(r, r->scenarios[i].name, rivals[k], &ratio))
                pkb_table_add(t, ratio < 1 ? PKB_TONE_PLAIN : PKB_TONE_BAD, "%.3f×", ratio);
            else
                pkb_table_add(t, PKB_TONE_DIM, "–");
        }
        pkb_buf measured = {0}, result = {0};
        rival_cells(r, rivals[k], false, &measured, &result);
        const char *text = result.failed ? "" : result.data;
        pkb_table_add(t, result_tone(text), "%s", text);
        b->failed |= measured.failed || result.failed;
        pkb_buf_free(&measured);
        pkb_buf_free(&result);
    }
    pkb_table_render(t, "  ", color, b);
    pkb_table_free(t);
    pkb_buf_puts(b, "\n");
}
