/*
 * The report's verdicts, worded from results/verdict.h — the statistics `pkbench compare FILE
 * --baseline-contender posix_spawn` decides with, so the report and compare cannot disagree:
 *
 *   - the conclusions: for every contender but the baseline, per scenario, the pair's verdict at
 *     the seed's 10% negligible-overhead threshold (PKB_VERDICT_NEGLIGIBLE): negligible (no
 *     difference beyond the bar: compare's "~" with |Δ| within it), not distinguishable (compare's
 *     "~" with a larger |Δ| the samples do not support), slower ("regressed"), faster
 *     ("improved"), undecidable (too few samples or too noisy, with the reason), processkit first;
 *   - the project's targets, decided on the 95% bootstrap CI of the ratio of medians: met only
 *     when the whole CI meets the target, not met when the whole CI misses it, undecidable when
 *     it straddles the target or the samples fail the noise check.
 *
 * Part of report.c's Markdown.
 */
#include "suites/scenarios/report.h"

#include "common/md.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ----------------------------------------------------------------------------------
 */

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

pkb__bucket pkb__bucket_of(const pkb_verdict *v)
{
    switch (v->d.verdict) {
    case PKS_REGRESSED:
        return PKB__SLOWER;
    case PKS_IMPROVED:
        return PKB__FASTER;
    case PKS_UNDECIDABLE:
        return PKB__UNDECIDABLE;
    case PKS_NO_CHANGE:
        break;
    }
    return fabs(v->s.delta) <= v->d.bar ? PKB__NEGLIGIBLE : PKB__NOT_DISTINGUISHABLE;
}

const char *pkb__bucket_word(pkb__bucket k)
{
    static const char *const words[PKB__NBUCKETS] = {
        [PKB__NEGLIGIBLE] = "negligible",   [PKB__NOT_DISTINGUISHABLE] = "not distinguishable",
        [PKB__SLOWER] = "slower",           [PKB__FASTER] = "faster",
        [PKB__UNDECIDABLE] = "undecidable", [PKB__UNTIMED] = "not timed",
        [PKB__NO_BASELINE] = "no baseline",
    };
    return (unsigned)k < PKB__NBUCKETS ? words[k] : "?";
}

/* "[+1.2%, +3.4%]" */
static void md_ci(pkb_buf *b, const pks_interval *ci)
{
    pkb_buf_puts(b, "[");
    pkb_fmt_delta(b, ci->lo - 1);
    pkb_buf_puts(b, ", ");
    pkb_fmt_delta(b, ci->hi - 1);
    pkb_buf_puts(b, "]");
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
        md_ci(b, &v->s.ratio);
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
        const pkb_results_series *s = find_series(r, sc->name, who);
        md_why(s, pkb_verdict_set_find(vs, s), k, b);
        done++;
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
        const pkb_results_series *s = find_series(r, sc->name, who);
        of[i] = PKB__NBUCKETS;
        if (s == NULL || (sc->baseline >= 0 && s == &r->series[sc->baseline]))
            continue;
        const pkb_verdict *v = pkb_verdict_set_find(vs, s);
        of[i] = !s->measured ? PKB__UNTIMED : v == NULL ? PKB__NO_BASELINE : pkb__bucket_of(v);
        count[of[i]]++;
        rows++;
    }
    static const char *const lead[PKB__NBUCKETS] = {
        [PKB__NEGLIGIBLE] = "negligible in ",
        [PKB__NOT_DISTINGUISHABLE] = "not distinguishable from the baseline in ",
        [PKB__SLOWER] = "slower than the baseline in ",
        [PKB__FASTER] = "faster than the baseline in ",
        [PKB__UNDECIDABLE] = "undecidable in ",
        [PKB__UNTIMED] = "not timed in ",
        [PKB__NO_BASELINE] = "no baseline to compare with in ",
    };
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
                pkb_buf_puts(b, lead[k]);
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
    pkb_buf_printf(b,
                   ") in this run, with a %.0f%% delta of the medians as the practical "
                   "negligible-overhead threshold. Each verdict is the one `pkbench compare "
                   "FILE --baseline-contender NAME` gives on this file (medians, 95%% bootstrap "
                   "CI, Mann-Whitney p after Holm's correction over the %zu comparisons, the noise "
                   "check): *slower* or *faster* only when the difference is significant and "
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
    bool as_percent; /* "≤ +3% vs" rather than "within 1.10× of" */
} targets[] = {
    {"spawn_capture_small", "posix_spawn", 1.03, true},
    {"stream_large_stdout", "posix_spawn", 1.05, true},
    {"concurrent_fan_out", "posix_spawn", 1.05, true},
    {"spawn_only", "vfork_exec", 1.10, false},
};

static const char *const rivals[] = {"libuv", "glib"};

/* processkit against `other` in `scenario`: a family of one pair (its CI is what targets read). */
static bool
decide_pair(const pkb_results *r, const char *scenario, const char *other, pkb_verdict *v)
{
    const pkb_results_series *pk = find_measured(r, scenario, PROCESSKIT);
    const pkb_results_series *o = find_measured(r, scenario, other);
    if (pk == NULL || o == NULL)
        return false;
    *v = (pkb_verdict){
        .name = pk->name, .base = o->samples, .nbase = o->n, .cand = pk->samples, .ncand = pk->n};
    return pkb_verdict_family(v, 1, &(pkb_verdict_options){.threshold = PKB_VERDICT_NEGLIGIBLE}) ==
           0;
}

static void md_ratio(pkb_buf *b, const pkb_verdict *v, bool as_percent)
{
    if (as_percent) {
        pkb_fmt_delta(b, v->s.delta);
        pkb_buf_puts(b, " ");
        md_ci(b, &v->s.ratio);
    } else {
        pkb_buf_printf(b, "%.3f× [%.3f×, %.3f×]", v->s.ratio.estimate, v->s.ratio.lo,
                       v->s.ratio.hi);
    }
}

/* The result cell: met / not met / undecidable, with why when undecidable. */
static void md_result(
    pkb_buf *b, const pkb_verdict *v, pkb_target_result t, const char *other, const char *limit)
{
    pkb_buf_puts(b, pkb_target_result_name(t));
    if (t != PKB_TARGET_UNDECIDABLE)
        return;
    char why[200] = "";
    pkb_verdict_why(v, 0, other, "processkit", why, sizeof why);
    if (why[0] != '\0')
        pkb_buf_printf(b, " (%s)", why);
    else
        pkb_buf_printf(b, " (the CI straddles %s)", limit);
}

static void md_ratio_target(const pkb_results *r, const struct target *t, pkb_buf *b)
{
    pkb_buf_puts(b, "| ");
    pkb_md_code(b, PROCESSKIT);
    char limit[32];
    if (t->as_percent)
        snprintf(limit, sizeof limit, "+%.0f%%", (t->max_ratio - 1) * 100);
    else
        snprintf(limit, sizeof limit, "%.2f×", t->max_ratio);
    pkb_buf_printf(b, t->as_percent ? " ≤ %s vs " : " within %s of ", limit);
    pkb_md_code(b, t->other);
    pkb_buf_puts(b, " in ");
    pkb_md_code(b, t->scenario);
    pkb_buf_puts(b, " | ");
    pkb_verdict v;
    if (!decide_pair(r, t->scenario, t->other, &v)) {
        bool pk = find_measured(r, t->scenario, PROCESSKIT) != NULL;
        pkb_buf_puts(b, "no measured ");
        pkb_md_code(b, pk ? t->other : PROCESSKIT);
        pkb_buf_puts(b, " series | not checked |\n");
        return;
    }
    md_ratio(b, &v, t->as_percent);
    pkb_buf_puts(b, " | ");
    md_result(b, &v, pkb_target_check(&v, t->max_ratio, false), t->other, limit);
    pkb_buf_puts(b, " |\n");
}

static void md_rival_target(const pkb_results *r, const char *rival, pkb_buf *b)
{
    pkb_buf_puts(b, "| ");
    pkb_md_code(b, PROCESSKIT);
    pkb_buf_puts(b, " ahead of ");
    pkb_md_code(b, rival);
    pkb_buf_puts(b, " in every scenario | ");
    size_t checked = 0, count[3] = {0};
    pkb_target_result *res = calloc(r->nscenarios + 1, sizeof *res);
    if (res == NULL) {
        b->failed = true;
        return;
    }
    pkb_verdict *v = calloc(r->nscenarios + 1, sizeof *v);
    if (v == NULL) {
        free(res);
        b->failed = true;
        return;
    }
    for (size_t i = 0; i < r->nscenarios; i++) {
        res[i] = PKB_TARGET_UNDECIDABLE + 1; /* not checked */
        if (!decide_pair(r, r->scenarios[i].name, rival, &v[i]))
            continue;
        res[i] = pkb_target_check(&v[i], 1.0, true);
        count[res[i]]++;
        pkb_buf_printf(b, "%s%.3f× [%.3f×, %.3f×] in ", checked > 0 ? ", " : "",
                       v[i].s.ratio.estimate, v[i].s.ratio.lo, v[i].s.ratio.hi);
        pkb_md_code(b, r->scenarios[i].name);
        checked++;
    }
    if (checked == 0) {
        pkb_buf_puts(b, "no scenario with both measured | not checked |\n");
    } else if (count[PKB_TARGET_NOT_MET] == 0 && count[PKB_TARGET_UNDECIDABLE] == 0) {
        pkb_buf_puts(b, " | met |\n");
    } else {
        pkb_target_result worst =
            count[PKB_TARGET_NOT_MET] > 0 ? PKB_TARGET_NOT_MET : PKB_TARGET_UNDECIDABLE;
        pkb_buf_printf(b, " | %s (%s in ", pkb_target_result_name(worst),
                       worst == PKB_TARGET_NOT_MET ? "behind" : "not shown ahead");
        size_t done = 0;
        for (size_t i = 0; i < r->nscenarios; i++) {
            if (res[i] != worst)
                continue;
            pkb_buf_puts(b, done == 0 ? "" : done + 1 == count[worst] ? " and " : ", ");
            pkb_md_code(b, r->scenarios[i].name);
            char why[200] = "";
            if (worst == PKB_TARGET_UNDECIDABLE)
                pkb_verdict_why(&v[i], 0, rival, "processkit", why, sizeof why);
            if (why[0] != '\0')
                pkb_buf_printf(b, ": %s", why);
            done++;
        }
        pkb_buf_puts(b, ") |\n");
    }
    free(v);
    free(res);
}

void pkb__md_targets(const pkb_results *r, pkb_buf *b)
{
    pkb_buf_puts(b, "### Targets\n\n"
                    "The project's targets, as ratios of medians (`processkit` / the other "
                    "contender) in this run, with their 95% bootstrap CI. A target is *met* only "
                    "when the whole CI meets it and *not met* only when the whole CI misses it; "
                    "otherwise, or when the samples are too few or too noisy, it is "
                    "*undecidable*. A target is checked only where both series were measured.\n\n"
                    "| target | measured [95% CI] | result |\n|---|---|---|\n");
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        md_ratio_target(r, &targets[i], b);
    for (size_t i = 0; i < sizeof rivals / sizeof rivals[0]; i++)
        md_rival_target(r, rivals[i], b);
    pkb_buf_puts(b, "\n");
}
