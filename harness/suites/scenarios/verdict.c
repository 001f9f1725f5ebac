/*
 * The report's verdicts, worded from results/verdict.h — the statistics `pkbench compare FILE
 * --baseline-contender posix_spawn` decides with, so the report and compare cannot disagree:
 *
 *   - the conclusions: for every contender but the baseline, per scenario, the pair's verdict at
 *     the seed's 10% negligible-overhead threshold (PKB_VERDICT_NEGLIGIBLE): negligible (no
 *     difference beyond the bar: compare's "~" with |Δ| within it), not distinguishable (compare's
 *     "~" with a larger |Δ| the samples do not support), slower ("regressed"), faster
 *     ("improved"), undecidable (too few samples or too noisy, with the reason), processkit first;
 *   - the project's targets, decided on the 95% bootstrap CI of the ratio (paired by round as the
 *     verdicts are; spawn_only's limit is tighter in a run pinned to one CPU): met only
 *     when the whole CI meets the target, not met when the whole CI misses it, undecidable when
 *     it straddles the target or the samples fail the noise check.
 *
 * Part of report.c's Markdown; the targets are also tables of the terminal view
 * (pkb__term_targets), decided and worded by the same functions.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"
#include "common/term.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------------------------------
 */

static const pkb_results_series *
find_measured(const pkb_results *r, const char *scenario, const char *who)
{
    const pkb_results_series *s = pkb_results_find_in(r, scenario, who);
    return s != NULL && s->measured ? s : NULL;
}

/* 0 for "processkit", 1 for "processkit_<variant>", 2 for everyone else: the report's order. */
static int rank(const char *contender)
{
    if (strcmp(contender, "processkit") == 0)
        return 0;
    return strncmp(contender, "processkit_", 11) == 0 ? 1 : 2;
}

/* ---- conclusions ------------------------------------------------------------------------------
 */

/* The parenthesis after a scenario in a conclusion: the numbers behind the verdict. */
static void md_why(const pkb_results_series *s, const pkb_verdict *v, pkb__bucket k, pkb_buf *b)
{
    if (k == PKB__UNTIMED) {
        pkb_buf_printf(b, " (%s)", s->status);
        return;
    }
    if (k == PKB__NO_BASELINE)
        return;
    pkb_buf_puts(b, " (");
    pkb_fmt_delta(b, v->s.delta);
    if (k == PKB__UNDECIDABLE) {
        char why[200];
        pkb_verdict_why(v, 0, "the baseline", "the contender", why, sizeof why);
        pkb_buf_printf(b, "; %s", why);
    } else if (k == PKB__NOT_DISTINGUISHABLE) {
        pkb_buf_printf(b, ", p = %.3f after Holm", v->p_holm);
    } else if (k != PKB__NEGLIGIBLE) {
        pkb_buf_puts(b, ", 95% CI ");
        pkb__fmt_ci(b, &v->s.ratio);
    }
    pkb_buf_puts(b, ")");
}

/* "`a` (+1.0%), `b` (+2.0%) and `c` (+3.0%)" for the scenarios of one bucket. */
static void md_scenario_list(const pkb_results *r,
                             const pkb_verdict_set *vs,
                             const char *who,
                             pkb__bucket k,
                             const pkb__bucket *of,
                             pkb_buf *b)
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
        const pkb_results_series *s = pkb_results_find_in(r, sc->name, who);
        md_why(s, pkb_verdict_set_find(vs, s), k, b);
        done++;
    }
}

/* What a bucket's word is said against, before the scenarios it names: "slower" than the
 * baseline, "not distinguishable" from it, "no baseline" to compare with. */
static const char *relation(pkb__bucket k)
{
    switch (k) {
    case PKB__SLOWER:
    case PKB__FASTER:
        return " than the baseline";
    case PKB__NOT_DISTINGUISHABLE:
        return " from the baseline";
    case PKB__NO_BASELINE:
        return " to compare with";
    default:
        return "";
    }
}

/* Where `who`'s overhead against the baseline falls, per bucket. */
static void
md_contender_verdict(const pkb_results *r, const pkb_verdict_set *vs, const char *who, pkb_buf *b)
{
    pkb__bucket *of = calloc(r->nscenarios + 1, sizeof *of);
    if (of == NULL) {
        b->failed = true;
        return;
    }
    size_t count[PKB__NBUCKETS] = {0}, rows = 0;
    for (size_t i = 0; i < r->nscenarios; i++) {
        const pkb_results_scenario *sc = &r->scenarios[i];
        const pkb_results_series *s = pkb_results_find_in(r, sc->name, who);
        of[i] = PKB__NBUCKETS;
        if (s == NULL || (sc->baseline >= 0 && s == &r->series[sc->baseline]))
            continue;
        if (s->control && sc->baseline < 0 && !s->baseline)
            continue; /* the calibration: a control with nothing to compare it with here */
        of[i] = pkb__series_bucket(s, pkb_verdict_set_find(vs, s));
        count[of[i]]++;
        rows++;
    }
    if (rows > 0) {
        pkb_buf_puts(b, rank(who) == 0 ? "- **" : "- ");
        pkb_md_code(b, who);
        pkb_buf_puts(b, rank(who) == 0 ? "**: " : ": ");
        bool first = true;
        for (int k = 0; k < PKB__NBUCKETS; k++) {
            if (count[k] == 0)
                continue;
            pkb_buf_puts(b, first ? "" : "; ");
            if (k == PKB__NEGLIGIBLE && count[k] == rows && rows >= 2)
                pkb_buf_printf(b, "negligible in all %zu scenarios: ", rows);
            else
                pkb_buf_printf(b, "%s%s in ", pkb__bucket_word((pkb__bucket)k),
                               relation((pkb__bucket)k));
            md_scenario_list(r, vs, who, (pkb__bucket)k, of, b);
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

/* The baselines named once: `posix_spawn`, or `a` / `b` when scenarios differ. */
static void md_baselines(const pkb_results *r, pkb_buf *b)
{
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
        pkb_buf_puts(b, nbase == 0 ? "" : " / ");
        pkb_md_code(b, r->series[bi].contender);
        nbase++;
    }
    if (nbase == 0)
        pkb_buf_puts(b, "the scenario's baseline, of which this file has none");
}

void pkb__md_conclusions(const pkb_results *r, const pkb_verdict_set *vs, pkb_buf *b)
{
    pkb_buf_puts(b, "## Conclusions\n\n");
    pkb_buf_printf(b, "Against each scenario's baseline (");
    md_baselines(r, b);
    pkb_buf_printf(
        b,
        ") in this run, with a %.0f%% delta as the practical "
        "negligible-overhead threshold. Each verdict is the one `pkbench compare "
        "FILE --baseline-contender NAME` gives on this file (paired by round where "
        "the rounds allow it: the per-round ratios' median, its 95%% bootstrap CI and "
        "Wilcoxon's signed-rank p; otherwise the medians, the 95%% bootstrap CI of "
        "their ratio and Mann-Whitney's p; Holm's correction over the %zu comparisons; "
        "the noise check): *slower* or *faster* only when the difference is significant and "
        "beyond the threshold, *not distinguishable* when a larger delta is not "
        "significant, *undecidable* when the samples are too few or too noisy.\n\n",
        PKB_VERDICT_NEGLIGIBLE * 100, vs->n);
    size_t n = 0;
    const char **names = contenders_in_order(r, &n);
    if (names == NULL) {
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        md_contender_verdict(r, vs, names[i], b);
    free(names);

    size_t noisy = 0, reps = 0, remeasured = 0;
    for (size_t i = 0; i < r->nseries; i++) {
        if (r->series[i].measured) {
            noisy += r->series[i].noisy;
            reps += r->series[i].n;
            remeasured += r->series[i].attempts > 1;
        }
    }
    pkb_buf_puts(b, "\n");
    if (noisy > 0)
        pkb_buf_printf(b,
                       "%zu of %zu measured repetitions were disturbed[^noisy]; they are included "
                       "in every number above. ",
                       noisy, reps);
    if (remeasured > 0)
        pkb_buf_printf(b, "%zu series %s re-measured[^remeasured]. ", remeasured,
                       remeasured == 1 ? "was" : "were");
    pkb_buf_puts(b, "These are single-machine measurements of one run: they describe this "
                    "workload and environment, not a universal ranking.\n\n");
}

/* ---- targets ----------------------------------------------------------------------------------
 */

#define PROCESSKIT "processkit"

static const struct target {
    const char *scenario, *other;
    double max_ratio;
    bool as_percent;         /* "≤ +3% vs" rather than "within 1.10× of" */
    double pinned_max_ratio; /* the target of a run pinned to one CPU; 0: max_ratio */
} targets[] = {
    {"spawn_capture_small", "posix_spawn", 1.03, true, 0},
    {"stream_large_stdout", "posix_spawn", 1.05, true, 0},
    {"concurrent_fan_out", "posix_spawn", 1.05, true, 0},
    /* Issue 14: a contained spawn at the machine's floor. Unpinned, the scheduler moves some
     * children to the other CPU during execve (METHODOLOGY.md), so the bar is looser there. */
    {"spawn_only", "vfork_exec", 1.10, false, 1.05},
};

/* Whether the run was pinned to one CPU: settings.cpu_affinity names a single CPU ("1"), as
 * `taskset -c 1 pkbench run` records. */
static bool pinned_to_one_cpu(const pkb_results *r)
{
    const json_t *a = json_object_get(json_object_get(r->root, "settings"), "cpu_affinity");
    const char *cpus = json_string_value(a);
    return cpus != NULL && cpus[0] != '\0' && strpbrk(cpus, ",-") == NULL;
}

/* The rivals processkit must be ahead of in every scenario: the C peers always, the contenders
 * in other languages (contenders/README.md) when the file has them. */
static const char *const rivals[] = {"posix_spawn",       "libuv",          "glib",
                                     "rust_std",          "rust_tokio",     "go_exec",
                                     "python_subprocess", "python_asyncio", "node_child_process"};
#define NALWAYS 3 /* the first three are listed even when the file lacks them */

/* posix_spawn, the baseline of every scenario: processkit at or below it (ratio ≤ 1) in every
 * scenario is the target; the other rivals it must be ahead of (ratio < 1). */
static bool at_or_below(const char *rival)
{
    return strcmp(rival, "posix_spawn") == 0;
}

/* " ahead of " or " at or below ". */
static const char *rival_relation(const char *rival)
{
    return at_or_below(rival) ? " at or below " : " ahead of ";
}

#define NRIVALS     (sizeof rivals / sizeof rivals[0])
#define NOT_CHECKED (PKB_TARGET_UNDECIDABLE + 1) /* a pkb_target_result: no pair to decide */

/* processkit against `other` in `scenario`: a family of one pair (its CI is what targets read). */
static bool
decide_pair(const pkb_results *r, const char *scenario, const char *other, pkb_verdict *v)
{
    const pkb_results_series *pk = find_measured(r, scenario, PROCESSKIT);
    const pkb_results_series *o = find_measured(r, scenario, other);
    if (pk == NULL || o == NULL)
        return false;
    return pkb_verdict_pair(o, pk, v) == 0;
}

/* A name as code in Markdown, as it is for a terminal. */
static void name(pkb_buf *b, const char *s, bool md)
{
    if (md)
        pkb_md_code(b, s);
    else
        pkb_buf_puts(b, s);
}

/* "+7.3% [+4.1%, +11.8%]" or "1.073× [1.038×, 1.115×]". */
static void ratio_text(pkb_buf *b, const pkb_verdict *v, bool as_percent)
{
    if (as_percent) {
        pkb_fmt_delta(b, v->s.delta);
        pkb_buf_puts(b, " ");
        pkb__fmt_ci(b, &v->s.ratio);
    } else {
        pkb_buf_printf(b, "%.3f× [%.3f×, %.3f×]", v->s.ratio.estimate, v->s.ratio.lo,
                       v->s.ratio.hi);
    }
}

static pkb_tone result_tone(int result)
{
    return result == PKB_TARGET_MET       ? PKB_TONE_GOOD
           : result == PKB_TARGET_NOT_MET ? PKB_TONE_BAD
           : result == NOT_CHECKED        ? PKB_TONE_DIM
                                          : PKB_TONE_WARN;
}

/* ---- a ratio target: processkit / other in one scenario, against a limit ----------------------
 */

struct target_eval {
    bool decided; /* both series measured, the pair decided */
    pkb_verdict v;
    int result;     /* a pkb_target_result, or NOT_CHECKED */
    double max;     /* the limit this run is held to */
    bool pinned;    /* the run was pinned to one CPU */
    char limit[32]; /* "+3%", "1.10×" */
};

static void eval_target(const pkb_results *r, const struct target *t, struct target_eval *e)
{
    e->pinned = pinned_to_one_cpu(r);
    e->max = e->pinned && t->pinned_max_ratio > 0 ? t->pinned_max_ratio : t->max_ratio;
    if (t->as_percent)
        snprintf(e->limit, sizeof e->limit, "+%.0f%%", (e->max - 1) * 100);
    else
        snprintf(e->limit, sizeof e->limit, "%.2f×", e->max);
    e->decided = decide_pair(r, t->scenario, t->other, &e->v);
    e->result = e->decided ? (int)pkb_target_check(&e->v, e->max, false) : NOT_CHECKED;
}

/* "`processkit` ≤ +3% vs `posix_spawn` in `spawn_capture_small`", and for a target that depends
 * on pinning, which one this run had: "(pinned to one CPU; 1.10× unpinned)". */
static void target_label(pkb_buf *b, const struct target *t, const struct target_eval *e, bool md)
{
    name(b, PROCESSKIT, md);
    pkb_buf_printf(b, t->as_percent ? " ≤ %s vs " : " within %s of ", e->limit);
    name(b, t->other, md);
    pkb_buf_puts(b, " in ");
    name(b, t->scenario, md);
    if (t->pinned_max_ratio > 0)
        pkb_buf_printf(b,
                       e->pinned ? " (pinned to one CPU; %.2f× unpinned)"
                                 : " (unpinned; %.2f× pinned to one CPU)",
                       e->pinned ? t->max_ratio : t->pinned_max_ratio);
}

static void target_measured(
    pkb_buf *b, const pkb_results *r, const struct target *t, const struct target_eval *e, bool md)
{
    if (e->decided) {
        ratio_text(b, &e->v, t->as_percent);
        return;
    }
    pkb_buf_puts(b, "no measured ");
    name(b, find_measured(r, t->scenario, PROCESSKIT) != NULL ? t->other : PROCESSKIT, md);
    pkb_buf_puts(b, " series");
}

/* Why processkit against `other` in `scenario` could not be decided: "processkit failed", "no
 * libuv series in this run", ...; "" when both were measured. */
static void
why_unchecked(pkb_buf *b, const pkb_results *r, const char *scenario, const char *other, bool md)
{
    const char *who[2] = {PROCESSKIT, other};
    for (int k = 0; k < 2; k++) {
        const pkb_results_series *s = pkb_results_find_in(r, scenario, who[k]);
        if (s != NULL && s->measured)
            continue;
        if (s == NULL)
            pkb_buf_puts(b, "no ");
        name(b, who[k], md);
        pkb_buf_printf(b, s == NULL ? " series in this run" : " %s", s ? s->status : "");
        return;
    }
}

/* met / not met / undecidable, with why when undecidable; not checked, with why. */
static void target_result(
    pkb_buf *b, const pkb_results *r, const struct target *t, const struct target_eval *e, bool md)
{
    if (e->result == NOT_CHECKED) {
        pkb_buf_puts(b, "not checked (");
        why_unchecked(b, r, t->scenario, t->other, md);
        pkb_buf_puts(b, ")");
        return;
    }
    pkb_buf_puts(b, pkb_target_result_name((pkb_target_result)e->result));
    if (e->result != PKB_TARGET_UNDECIDABLE)
        return;
    char why[200] = "";
    pkb_verdict_why(&e->v, 0, t->other, "processkit", why, sizeof why);
    if (why[0] != '\0')
        pkb_buf_printf(b, " (%s)", why);
    else
        pkb_buf_printf(b, " (the CI straddles %s)", e->limit);
}

static void md_ratio_target(const pkb_results *r, const struct target *t, pkb_buf *b)
{
    struct target_eval e;
    eval_target(r, t, &e);
    pkb_buf_puts(b, "| ");
    target_label(b, t, &e, true);
    pkb_buf_puts(b, " | ");
    target_measured(b, r, t, &e, true);
    pkb_buf_puts(b, " | ");
    target_result(b, r, t, &e, true);
    pkb_buf_puts(b, " |\n");
}

/* ---- a rival target: processkit ahead of a rival in every scenario -----------------------------
 */

static bool in_file(const pkb_results *r, const char *scenario, const char *contender);

struct rival_eval {
    const char *rival;
    size_t checked, count[NOT_CHECKED];
    int *result;    /* per scenario of the file: a pkb_target_result, or NOT_CHECKED */
    pkb_verdict *v; /* per scenario of the file, where checked */
};

static void rival_free(struct rival_eval *e)
{
    free(e->result);
    free(e->v);
    *e = (struct rival_eval){0};
}

/* Decides processkit / rival < 1 (≤ 1 for posix_spawn) in every scenario of r. Returns 0 or
 * -ENOMEM. */
static int eval_rival(const pkb_results *r, const char *rival, struct rival_eval *e)
{
    *e = (struct rival_eval){.rival = rival,
                             .result = calloc(r->nscenarios + 1, sizeof *e->result),
                             .v = calloc(r->nscenarios + 1, sizeof *e->v)};
    if (e->result == NULL || e->v == NULL) {
        rival_free(e);
        return -ENOMEM;
    }
    for (size_t i = 0; i < r->nscenarios; i++) {
        e->result[i] = NOT_CHECKED;
        if (!decide_pair(r, r->scenarios[i].name, rival, &e->v[i]))
            continue;
        e->result[i] = (int)pkb_target_check(&e->v[i], 1.0, !at_or_below(rival));
        e->count[e->result[i]]++;
        e->checked++;
    }
    return 0;
}

/* "0.864× [0.831×, 0.889×] in `a`, ..." */
static void rival_measured(pkb_buf *b, const pkb_results *r, const struct rival_eval *e, bool md)
{
    if (e->checked == 0) {
        pkb_buf_puts(b, "no scenario with both measured");
        return;
    }
    size_t done = 0;
    for (size_t i = 0; i < r->nscenarios; i++) {
        if (e->result[i] == NOT_CHECKED)
            continue;
        pkb_buf_puts(b, done++ > 0 ? ", " : "");
        ratio_text(b, &e->v[i], false);
        pkb_buf_puts(b, " in ");
        name(b, r->scenarios[i].name, md);
    }
}

/* The whole target's result: not checked, met, or the worst of not met and undecidable. */
static int rival_result_of(const struct rival_eval *e)
{
    return e->checked == 0                        ? NOT_CHECKED
           : e->count[PKB_TARGET_NOT_MET] > 0     ? PKB_TARGET_NOT_MET
           : e->count[PKB_TARGET_UNDECIDABLE] > 0 ? PKB_TARGET_UNDECIDABLE
                                                  : PKB_TARGET_MET;
}

/* "; not checked in `a` (processkit failed)" for every scenario where one of the pair has a
 * series that was not measured: a rival target met where checked is not met everywhere. */
static void rival_unchecked(pkb_buf *b, const pkb_results *r, const struct rival_eval *e, bool md)
{
    for (size_t i = 0; i < r->nscenarios; i++) {
        const char *sc = r->scenarios[i].name;
        const pkb_results_series *pk = pkb_results_find_in(r, sc, PROCESSKIT),
                                 *o = pkb_results_find_in(r, sc, e->rival);
        if (e->result[i] != NOT_CHECKED || pk == NULL || o == NULL)
            continue;
        pkb_buf_puts(b, "; not checked in ");
        name(b, sc, md);
        pkb_buf_puts(b, " (");
        why_unchecked(b, r, sc, e->rival, md);
        pkb_buf_puts(b, ")");
    }
}

/* "met", "not met (behind in `a` and `b`)", "undecidable (not shown ahead in `a`: why)", each
 * followed by the scenarios it could not be checked in, and why. */
static void rival_result(pkb_buf *b, const pkb_results *r, const struct rival_eval *e, bool md)
{
    int worst = rival_result_of(e);
    if (worst == NOT_CHECKED || worst == PKB_TARGET_MET) {
        pkb_buf_puts(b, worst == NOT_CHECKED ? "not checked" : "met");
        rival_unchecked(b, r, e, md);
        return;
    }
    pkb_buf_printf(b, "%s (%s in ", pkb_target_result_name((pkb_target_result)worst),
                   worst == PKB_TARGET_NOT_MET ? "behind"
                   : at_or_below(e->rival)     ? "not shown at or below"
                                               : "not shown ahead");
    size_t done = 0;
    for (size_t i = 0; i < r->nscenarios; i++) {
        if (e->result[i] != worst)
            continue;
        pkb_buf_puts(b, done == 0 ? "" : done + 1 == e->count[worst] ? " and " : ", ");
        name(b, r->scenarios[i].name, md);
        char why[200] = "";
        if (worst == PKB_TARGET_UNDECIDABLE)
            pkb_verdict_why(&e->v[i], 0, e->rival, "processkit", why, sizeof why);
        if (why[0] != '\0')
            pkb_buf_printf(b, ": %s", why);
        done++;
    }
    pkb_buf_puts(b, ")");
    rival_unchecked(b, r, e, md);
}

static void md_rival_target(const pkb_results *r, const char *rival, pkb_buf *b)
{
    struct rival_eval e;
    if (eval_rival(r, rival, &e) != 0) {
        b->failed = true;
        return;
    }
    pkb_buf_puts(b, "| ");
    pkb_md_code(b, PROCESSKIT);
    pkb_buf_puts(b, rival_relation(rival));
    pkb_md_code(b, rival);
    pkb_buf_puts(b, " in every scenario | ");
    rival_measured(b, r, &e, true);
    pkb_buf_puts(b, " | ");
    rival_result(b, r, &e, true);
    pkb_buf_puts(b, " |\n");
    rival_free(&e);
}

void pkb__md_targets(const pkb_results *r, pkb_buf *b)
{
    pkb_buf_puts(b, "### Targets\n\n"
                    "The project's targets, as ratios (`processkit` / the other contender) in "
                    "this run, paired by round as Δ is, with their 95% bootstrap CI. A target is "
                    "*met* only "
                    "when the whole CI meets it and *not met* only when the whole CI misses it; "
                    "otherwise, or when the samples are too few or too noisy, it is "
                    "*undecidable*. A target is checked only where both series were measured.\n\n"
                    "| target | measured [95% CI] | result |\n|---|---|---|\n");
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        md_ratio_target(r, &targets[i], b);
    for (size_t i = 0; i < NRIVALS; i++)
        if (i < NALWAYS || in_file(r, NULL, rivals[i]))
            md_rival_target(r, rivals[i], b);
    pkb_buf_puts(b, "\n");
}

/* ---- the targets for a terminal ----------------------------------------------------------------
 */

/* Whether the file has a series of `scenario`, or of `contender` in any scenario: a run filtered
 * to some scenarios is not told about the others (the Markdown lists them all, not checked). */
static bool in_file(const pkb_results *r, const char *scenario, const char *contender)
{
    for (size_t i = 0; i < r->nseries; i++)
        if ((scenario != NULL && strcmp(r->series[i].scenario, scenario) == 0) ||
            (contender != NULL && strcmp(r->series[i].contender, contender) == 0))
            return true;
    return false;
}

/* Adds c's text as the next cell of t and empties c. */
static void take(pkb_table *t, pkb_tone tone, pkb_buf *c, pkb_buf *out)
{
    pkb_table_add(t, tone, "%s", c->failed || c->data == NULL ? "" : c->data);
    out->failed |= c->failed;
    pkb_buf_free(c);
}

/* The Markdown's targets table: the ratio targets, then each rival's result (its ratios are the
 * next table). */
static void
term_target_table(const pkb_results *r, const struct rival_eval *ev, bool color, pkb_buf *b)
{
    pkb_table *t = pkb_table_new("lll");
    pkb_table_heads(t, "target", "measured [95% CI]", "result", NULL);
    pkb_buf c = {0};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        if (!in_file(r, targets[i].scenario, NULL))
            continue;
        struct target_eval e;
        eval_target(r, &targets[i], &e);
        target_label(&c, &targets[i], &e, false);
        take(t, 0, &c, b);
        target_measured(&c, r, &targets[i], &e, false);
        take(t, 0, &c, b);
        target_result(&c, r, &targets[i], &e, false);
        take(t, result_tone(e.result), &c, b);
    }
    for (size_t k = 0; k < NRIVALS; k++) {
        if (ev[k].rival == NULL)
            continue;
        pkb_table_add(t, 0, "%s%s%s in every scenario", PROCESSKIT, rival_relation(ev[k].rival),
                      ev[k].rival);
        if (at_or_below(ev[k].rival) || ev[k].checked == 0) {
            rival_measured(&c, r, &ev[k], false); /* the baseline: not in the rivals' table */
            take(t, 0, &c, b);
        } else {
            pkb_table_add(t, 0, "below");
        }
        rival_result(&c, r, &ev[k], false);
        take(t, result_tone(rival_result_of(&ev[k])), &c, b);
    }
    if (pkb_table_rows(t) > 1) {
        pkb_term_puts(b, color, PKB_TONE_BOLD, "targets");
        pkb_buf_puts(b, "  (ratios processkit / the other contender, paired by round as Δ, with "
                        "their 95% bootstrap CI:\n  met or not met only when the whole CI says "
                        "so)\n");
        pkb_table_render(t, "  ", color, b);
        pkb_buf_puts(b, "\n");
    }
    pkb_table_free(t);
}

/* processkit / rival per scenario (rows) and rival (columns), each coloured by its result. */
/* A rival with a column in the terminal's rivals table: posix_spawn, the baseline, has its own
 * column in every scenario's table already (and its row in the targets table). */
static bool in_rival_table(const struct rival_eval *e)
{
    return e->rival != NULL && e->checked > 0 && !at_or_below(e->rival);
}

static void
term_rival_table(const pkb_results *r, const struct rival_eval *ev, bool color, pkb_buf *b)
{
    char align[NRIVALS + 2] = "l";
    size_t ncols = 0;
    for (size_t k = 0; k < NRIVALS; k++)
        if (in_rival_table(&ev[k]))
            align[++ncols] = 'r';
    if (ncols == 0)
        return;
    pkb_table *t = pkb_table_new(align);
    pkb_table_add(t, 0, "scenario");
    for (size_t k = 0; k < NRIVALS; k++)
        if (in_rival_table(&ev[k]))
            pkb_table_add(t, 0, "%s", ev[k].rival);
    pkb_buf c = {0};
    for (size_t i = 0; i < r->nscenarios; i++) {
        pkb_table_add(t, 0, "%s", r->scenarios[i].name);
        for (size_t k = 0; k < NRIVALS; k++) {
            if (!in_rival_table(&ev[k]))
                continue;
            if (ev[k].result[i] == NOT_CHECKED) {
                pkb_table_add(t, PKB_TONE_DIM, "–");
                continue;
            }
            ratio_text(&c, &ev[k].v[i], false);
            take(t, result_tone(ev[k].result[i]), &c, b);
        }
    }
    pkb_term_puts(b, color, PKB_TONE_BOLD, "processkit against its rivals");
    pkb_buf_puts(b, "  (processkit / rival, ratio paired by round as Δ [95% CI]; the target: "
                    "below 1 in\n  every scenario)\n");
    pkb_table_render(t, "  ", color, b);
    pkb_buf_puts(b, "\n");
    pkb_table_free(t);
}

void pkb__term_targets(const pkb_results *r, bool color, pkb_buf *b)
{
    struct rival_eval ev[NRIVALS] = {{0}};
    for (size_t k = 0; k < NRIVALS; k++)
        if (in_file(r, NULL, rivals[k]) && eval_rival(r, rivals[k], &ev[k]) != 0)
            b->failed = true;
    term_target_table(r, ev, color, b);
    term_rival_table(r, ev, color, b);
    for (size_t k = 0; k < NRIVALS; k++)
        rival_free(&ev[k]);
}
