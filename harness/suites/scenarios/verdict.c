/*
 * The report's verdicts, worded from the numbers: the conclusions (for every contender but the
 * baseline, in which scenarios its delta is within the seed document's 10% negligible-overhead
 * threshold, processkit first) and the project's targets (ratios of means, processkit / other,
 * checked only where both series were measured). Part of report.c's Markdown.
 */
#include "suites/scenarios/report.h"

#include "common/md.h"

#include <math.h>
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
            const pkb_results_series *base = &r->series[sc->baseline];
            pkb_buf_puts(b, " (");
            pkb_fmt_delta(b, (s->sum.mean - base->sum.mean) / base->sum.mean);
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
            const pkb_results_series *base = &r->series[sc->baseline];
            double d = (s->sum.mean - base->sum.mean) / base->sum.mean;
            of[i] = fabs(d) <= PKB_REPORT_NEGLIGIBLE ? NEGLIGIBLE : d > 0 ? SLOWER : FASTER;
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

static void md_ratio_target(const pkb_results *r, const struct target *t, pkb_buf *b)
{
    pkb_buf_puts(b, "| ");
    pkb_md_code(b, PROCESSKIT);
    if (t->as_percent)
        pkb_buf_printf(b, " ≤ +%.0f%% vs ", (t->max_ratio - 1) * 100);
    else
        pkb_buf_printf(b, " within %.2f× of ", t->max_ratio);
    pkb_md_code(b, t->other);
    pkb_buf_puts(b, " in ");
    pkb_md_code(b, t->scenario);
    pkb_buf_puts(b, " | ");
    const pkb_results_series *pk = find_measured(r, t->scenario, PROCESSKIT);
    const pkb_results_series *other = find_measured(r, t->scenario, t->other);
    if (pk == NULL || other == NULL) {
        pkb_buf_puts(b, "no measured ");
        pkb_md_code(b, pk == NULL ? PROCESSKIT : t->other);
        pkb_buf_puts(b, " series | not checked |\n");
        return;
    }
    double ratio = pk->sum.mean / other->sum.mean;
    pkb_buf_printf(b, "%.3f×", ratio);
    if (t->as_percent) {
        pkb_buf_puts(b, " (");
        pkb_fmt_delta(b, ratio - 1);
        pkb_buf_puts(b, ")");
    }
    pkb_buf_printf(b, " | %s |\n", ratio <= t->max_ratio ? "met" : "not met");
}

/* processkit ahead of `rival` (ratio < 1) in every scenario both were measured in, or with
 * `or_level` at or below it (ratio <= 1). */
static void md_rival_target(const pkb_results *r, const char *rival, bool or_level, pkb_buf *b)
{
    pkb_buf_puts(b, "| ");
    pkb_md_code(b, PROCESSKIT);
    pkb_buf_puts(b, or_level ? " at or below " : " ahead of ");
    pkb_md_code(b, rival);
    pkb_buf_puts(b, " in every scenario | ");
    size_t checked = 0, behind = 0;
    for (size_t i = 0; i < r->nscenarios; i++) {
        const pkb_results_series *pk = find_measured(r, r->scenarios[i].name, PROCESSKIT);
        const pkb_results_series *other = find_measured(r, r->scenarios[i].name, rival);
        if (pk == NULL || other == NULL)
            continue;
        double ratio = pk->sum.mean / other->sum.mean;
        pkb_buf_printf(b, "%s%.3f× in ", checked > 0 ? ", " : "", ratio);
        pkb_md_code(b, r->scenarios[i].name);
        checked++;
        behind += or_level ? !(ratio <= 1) : !(ratio < 1);
    }
    if (checked == 0) {
        pkb_buf_puts(b, "no scenario with both measured | not checked |\n");
        return;
    }
    if (behind == 0) {
        pkb_buf_puts(b, " | met |\n");
        return;
    }
    pkb_buf_puts(b, " | not met (behind in ");
    size_t done = 0;
    for (size_t i = 0; i < r->nscenarios; i++) {
        const pkb_results_series *pk = find_measured(r, r->scenarios[i].name, PROCESSKIT);
        const pkb_results_series *other = find_measured(r, r->scenarios[i].name, rival);
        double ratio = pk != NULL && other != NULL ? pk->sum.mean / other->sum.mean : 0;
        if (pk == NULL || other == NULL || ratio < 1 || (or_level && ratio <= 1))
            continue;
        pkb_buf_puts(b, done == 0 ? "" : done + 1 == behind ? " and " : ", ");
        pkb_md_code(b, r->scenarios[i].name);
        done++;
    }
    pkb_buf_puts(b, ") |\n");
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
    md_rival_target(r, "posix_spawn", true, b);
    for (size_t i = 0; i < sizeof rivals / sizeof rivals[0]; i++)
        md_rival_target(r, rivals[i], false, b);
    pkb_buf_puts(b, "\n");
}
