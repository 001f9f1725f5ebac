/*
 * drift — the machine's drift between two results files from their control series, and the
 * round-by-round correction of the other series (drift.h has the model and the rules).
 *
 * What it reads of a file: the series marked `control`, their samples_ns and `round`, and every
 * attempt of a re-measured control (`attempts[].samples_ns` and `.round`, validated by the
 * loader), because a re-measured series must be paired with the controls measured in its own
 * later rounds. Nothing here decides a verdict: compare.c hands the corrected samples to
 * results/verdict.h like any others.
 *
 * Costs: the group CIs resample rounds (10,000 resamples × the controls of each group × a median
 * of their samples): a few tens of milliseconds for the scenarios suite's 13 controls.
 */
#define _GNU_SOURCE
#include "regress/drift.h"

#include "results/verdict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pkb_drift_state_name(pkb_drift_state s)
{
    switch (s) {
    case PKB_DRIFT_OK:
        return "corrected";
    case PKB_DRIFT_TOO_LARGE:
        return "too large";
    case PKB_DRIFT_INCONSISTENT:
        return "controls disagree";
    case PKB_DRIFT_UNEVEN:
        return "uneven";
    }
    return "?";
}

void pkb_drift_free(pkb_drift *d)
{
    if (d == NULL)
        return;
    for (size_t i = 0; i < d->ncontrols; i++) {
        free(d->controls[i].name);
        free(d->controls[i].scenario);
        free(d->controls[i].by_round[0]);
        free(d->controls[i].by_round[1]);
    }
    for (size_t i = 0; i < d->ngroups; i++) {
        free(d->groups[i].name);
        free(d->groups[i].members);
    }
    free(d->controls);
    free(d->groups);
    memset(d, 0, sizeof *d);
}

/* ==== Why a pair of files has no usable drift ================================================ */

static bool interleaved(const pkb_results *r)
{
    return json_is_true(pkb_results_field(r, "settings", "interleave"));
}

/* The first reason the files cannot be paired round by round with controls, or NULL. */
static const char *
unavailable(const pkb_results *base, const pkb_results *cand, char *buf, size_t len)
{
    const pkb_results *f[2] = {base, cand};
    static const char *const side[2] = {"base", "new"};
    for (int i = 0; i < 2; i++) {
        size_t controls = 0, rounds = 0;
        for (size_t k = 0; k < f[i]->nseries; k++) {
            controls += f[i]->series[k].control && f[i]->series[k].measured;
            rounds += f[i]->series[k].control && f[i]->series[k].round != NULL;
        }
        if (controls == 0)
            snprintf(buf, len,
                     "%s has no measured control series (a file written before pkbench marked "
                     "them, a suite without controls, or a --filter that left them out)",
                     side[i]);
        else if (!interleaved(f[i]))
            snprintf(buf, len,
                     "%s was measured one series after another (--sequential): no rounds to pair "
                     "with the controls",
                     side[i]);
        else if (rounds == 0)
            snprintf(buf, len, "%s records no rounds (written before pkbench recorded them)",
                     side[i]);
        else
            continue;
        return buf;
    }
    return NULL;
}

/* ==== Controls ================================================================================ */

/* Sets by_round[f] from one array of samples and their rounds (already validated). */
static void put_rounds(pkb_drift_control *c, int f, const json_t *samples, const json_t *round)
{
    size_t i;
    const json_t *v;
    json_array_foreach(round, i, v)
    {
        size_t r = (size_t)json_integer_value(v);
        if (r < c->nrounds[f])
            c->by_round[f][r] = json_number_value(json_array_get(samples, i)) / c->scale;
    }
}

/* The largest round any attempt of s records, + 1. */
static size_t rounds_needed(const pkb_results_series *s)
{
    size_t top = 0;
    for (size_t i = 0; s->round != NULL && i < s->n; i++)
        top = (size_t)s->round[i] > top ? (size_t)s->round[i] : top;
    size_t k;
    const json_t *a, *v;
    json_array_foreach(json_object_get(s->json, "attempts"), k, a)
    {
        size_t i;
        json_array_foreach(json_object_get(a, "round"), i, v)
        {
            size_t r = (size_t)json_integer_value(v);
            top = r > top ? r : top;
        }
    }
    return top + 1;
}

/* Control c's samples of file f by round: every attempt (the file keeps them all), else the
 * series' own samples. */
static int fill_rounds(pkb_drift_control *c, int f, const pkb_results_series *s)
{
    c->nrounds[f] = rounds_needed(s);
    c->by_round[f] = malloc(c->nrounds[f] * sizeof *c->by_round[f]);
    if (c->by_round[f] == NULL)
        return -ENOMEM;
    for (size_t r = 0; r < c->nrounds[f]; r++)
        c->by_round[f][r] = NAN;
    const json_t *attempts = json_object_get(s->json, "attempts");
    if (json_array_size(attempts) > 0) {
        size_t k;
        const json_t *a;
        json_array_foreach(attempts, k, a)
        {
            put_rounds(c, f, json_object_get(a, "samples_ns"), json_object_get(a, "round"));
        }
    } else {
        put_rounds(c, f, json_object_get(s->json, "samples_ns"), json_object_get(s->json, "round"));
    }
    return 0;
}

static int add_control(pkb_drift *d,
                       const pkb_results_series *b,
                       const pkb_results_series *n,
                       char *err,
                       size_t err_len)
{
    pkb_drift_control *c = &d->controls[d->ncontrols++];
    *c = (pkb_drift_control){
        .name = strdup(b->name), .scenario = strdup(b->scenario), .scale = b->sum.median};
    if (c->name == NULL || c->scenario == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "out of memory");
    int rc =
        pks_bootstrap_ratio(b->samples, b->n, n->samples, n->n,
                            &(pks_bootstrap){.iterations = d->opts.iterations,
                                             .seed = d->opts.seed ^ pkb_verdict_name_hash(b->name)},
                            NULL, &c->ratio);
    if (rc == 0)
        rc = fill_rounds(c, 0, b);
    if (rc == 0)
        rc = fill_rounds(c, 1, n);
    if (rc == -ENOMEM)
        return pkb_fail(err, err_len, rc, "out of memory");
    if (rc != 0)
        return pkb_fail(err, err_len, -EINVAL, "the drift of control %s could not be computed",
                        b->name);
    return 0;
}

/* ==== Groups ================================================================================== */

static int add_group(pkb_drift *d, const char *name)
{
    pkb_drift_group *g = &d->groups[d->ngroups];
    *g = (pkb_drift_group){.name = strdup(name)};
    g->members = calloc(d->ncontrols, sizeof *g->members);
    if (g->name == NULL || g->members == NULL) {
        free(g->name);
        free(g->members);
        return -ENOMEM;
    }
    for (size_t k = 0; k < d->ncontrols; k++)
        if (strcmp(name, PKB_DRIFT_ALL) == 0 || strcmp(d->controls[k].scenario, name) == 0)
            g->members[g->n++] = k;
    d->ngroups++;
    return 0;
}

/* The samples of control k in file f (its used attempt: what its ratio compares). */
struct sides {
    const pkb_results_series **b, **n; /* parallel to d->controls */
};

/* Median of x[pos[i] mod n] over i < npos, into scratch. */
static double
resampled_median(const double *x, size_t n, const size_t *pos, size_t npos, double *scratch)
{
    for (size_t i = 0; i < npos; i++)
        scratch[i] = x[pos[i] % n];
    double m = NAN;
    return pks_median(scratch, npos, scratch + npos, &m) == 0 ? m : NAN;
}

/* The group's drift and its CI: rounds resampled at the same positions for every member, so a
 * round that slowed every control stays one draw. */
static int group_ratio(pkb_drift *d, pkb_drift_group *g, const struct sides *s)
{
    double lsum = 0;
    size_t nb = 0, nn = 0;
    for (size_t i = 0; i < g->n; i++) {
        size_t k = g->members[i];
        lsum += log(d->controls[k].ratio.estimate);
        nb = s->b[k]->n > nb ? s->b[k]->n : nb;
        nn = s->n[k]->n > nn ? s->n[k]->n : nn;
    }
    g->ratio.estimate = exp(lsum / (double)g->n);
    g->spread = 0;
    for (size_t i = 0; i < g->n; i++)
        g->spread = fmax(g->spread,
                         fabs(d->controls[g->members[i]].ratio.estimate / g->ratio.estimate - 1));
    size_t iters = d->opts.iterations, most = nb > nn ? nb : nn;
    double *logs = malloc(iters * sizeof *logs), *scratch = malloc(3 * most * sizeof *scratch);
    size_t *pb = malloc(nb * sizeof *pb), *pn = malloc(nn * sizeof *pn);
    int rc = logs && scratch && pb && pn ? 0 : -ENOMEM;
    pks_rng rng;
    pks_rng_seed(&rng, d->opts.seed ^ pkb_verdict_name_hash(g->name));
    for (size_t it = 0; rc == 0 && it < iters; it++) {
        for (size_t i = 0; i < nb; i++)
            pb[i] = (size_t)pks_rng_below(&rng, nb);
        for (size_t i = 0; i < nn; i++)
            pn[i] = (size_t)pks_rng_below(&rng, nn);
        double l = 0;
        for (size_t i = 0; i < g->n; i++) {
            size_t k = g->members[i];
            double mb = resampled_median(s->b[k]->samples, s->b[k]->n, pb, nb, scratch);
            double mn = resampled_median(s->n[k]->samples, s->n[k]->n, pn, nn, scratch);
            l += log(mn / mb);
        }
        logs[it] = l / (double)g->n;
    }
    double lo = NAN, hi = NAN;
    if (rc == 0 &&
        pks_quantile(logs, iters, (1 - PKS_BOOTSTRAP_DEFAULT_LEVEL) / 2, NULL, &lo) == 0 &&
        pks_quantile(logs, iters, (1 + PKS_BOOTSTRAP_DEFAULT_LEVEL) / 2, NULL, &hi) == 0) {
        g->ratio.lo = exp(lo);
        g->ratio.hi = exp(hi);
    } else if (rc == 0) {
        rc = -EINVAL;
    }
    free(logs);
    free(scratch);
    free(pb);
    free(pn);
    return rc;
}

/* Too large, or two members that disagree beyond their CIs and the threshold (the pair farthest
 * apart is named). */
static void judge(pkb_drift *d, pkb_drift_group *g)
{
    g->state = PKB_DRIFT_OK;
    if (fabs(g->ratio.estimate - 1) > d->opts.limit) {
        g->state = PKB_DRIFT_TOO_LARGE;
        return;
    }
    double widest = 0;
    for (size_t i = 0; i < g->n; i++) {
        for (size_t j = i + 1; j < g->n; j++) {
            const pks_interval *a = &d->controls[g->members[i]].ratio;
            const pks_interval *b = &d->controls[g->members[j]].ratio;
            double gap = fabs(log(a->estimate / b->estimate));
            bool apart = a->hi < b->lo || b->hi < a->lo;
            if (apart && gap > log1p(d->opts.threshold) && gap > widest) {
                widest = gap;
                g->state = PKB_DRIFT_INCONSISTENT;
                g->disagree[0] = g->members[a->estimate >= b->estimate ? i : j];
                g->disagree[1] = g->members[a->estimate >= b->estimate ? j : i];
            }
        }
    }
}

/* ==== The estimate ============================================================================ */

/* Whether group g's drift is more than PKB_DRIFT_UNEVEN_ABOVE from that of every control. */
static bool apart_from_all(const pkb_drift *d, const pkb_drift_group *g)
{
    return fabs(g->ratio.estimate / d->groups[0].ratio.estimate - 1) > PKB_DRIFT_UNEVEN_ABOVE;
}

/* Whether scenario `name` of r holds a series the drift corrects (not only controls). */
static bool judges_series(const pkb_results *r, const char *name)
{
    for (size_t i = 0; i < r->nseries; i++)
        if (!r->series[i].control && strcmp(r->series[i].scenario, name) == 0)
            return true;
    return false;
}

static int
estimate(pkb_drift *d, const pkb_results *base, const pkb_results *cand, char *err, size_t err_len)
{
    struct sides s = {calloc(base->nseries + 1, sizeof *s.b),
                      calloc(base->nseries + 1, sizeof *s.n)};
    d->controls = calloc(base->nseries + 1, sizeof *d->controls);
    d->groups = calloc(base->nseries + 2, sizeof *d->groups);
    int rc = s.b && s.n && d->controls && d->groups ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < base->nseries; i++) {
        const pkb_results_series *b = &base->series[i];
        const pkb_results_series *n = pkb_results_find(cand, b->name);
        if (!b->control || !b->measured || b->round == NULL || n == NULL || !n->control ||
            !n->measured || n->round == NULL)
            continue;
        s.b[d->ncontrols] = b;
        s.n[d->ncontrols] = n;
        rc = add_control(d, b, n, err, err_len);
        if (rc != 0) {
            free(s.b);
            free(s.n);
            return rc;
        }
    }
    if (rc == 0 && d->ncontrols == 0) {
        snprintf(d->why_not, sizeof d->why_not,
                 "no control series is measured, with its rounds, in both files");
        free(s.b);
        free(s.n);
        return 0;
    }
    if (rc == 0)
        rc = add_group(d, PKB_DRIFT_ALL);
    for (size_t k = 0; rc == 0 && k < d->ncontrols; k++) {
        bool seen = false;
        for (size_t i = 1; i < d->ngroups && !seen; i++)
            seen = strcmp(d->groups[i].name, d->controls[k].scenario) == 0;
        if (!seen)
            rc = add_group(d, d->controls[k].scenario);
    }
    for (size_t i = 0; rc == 0 && i < d->ngroups; i++) {
        rc = group_ratio(d, &d->groups[i], &s);
        judge(d, &d->groups[i]);
    }
    /* A scenario whose controls moved otherwise than the machine as a whole (groups[0]). */
    for (size_t i = 1; rc == 0 && i < d->ngroups; i++) {
        pkb_drift_group *g = &d->groups[i];
        if (!apart_from_all(d, g))
            continue;
        if (g->state == PKB_DRIFT_OK)
            g->state = PKB_DRIFT_UNEVEN;
        /* One scenario that series are judged by (the pure-CPU loop's, alone in its scenario,
         * never moves with spawns) is evidence enough that this pair of runs breaks the shared
         * drift the model assumes (drift.h: beside a CPU hog the other scenarios' controls barely
         * moved while their event-loop series did, and corrected that read as changes). */
        if (judges_series(base, g->name) && d->uneven == NULL)
            d->uneven = g;
    }
    for (size_t i = 1; rc == 0 && d->uneven != NULL && i < d->ngroups; i++)
        if (d->groups[i].state == PKB_DRIFT_OK)
            d->groups[i].state = PKB_DRIFT_UNEVEN;
    free(s.b);
    free(s.n);
    if (rc == -ENOMEM)
        return pkb_fail(err, err_len, rc, "out of memory");
    if (rc != 0)
        return pkb_fail(err, err_len, -EINVAL, "the drift could not be computed");
    d->available = true;
    return 0;
}

int pkb_drift_estimate(const pkb_results *base,
                       const pkb_results *cand,
                       const pkb_drift_options *opts,
                       pkb_drift *out,
                       char *err,
                       size_t err_len)
{
    pkb_drift d = {.opts = opts != NULL ? *opts : (pkb_drift_options){0}};
    if (d.opts.limit <= 0)
        d.opts.limit = PKB_DRIFT_DEFAULT_LIMIT;
    if (d.opts.threshold < 0)
        d.opts.threshold = 0;
    if (d.opts.iterations == 0)
        d.opts.iterations = PKS_BOOTSTRAP_DEFAULT_ITERATIONS;
    if (d.opts.seed == 0)
        d.opts.seed = PKB_VERDICT_SEED;
    const char *why = unavailable(base, cand, d.why_not, sizeof d.why_not);
    int rc = why != NULL ? 0 : estimate(&d, base, cand, err, err_len);
    if (rc != 0) {
        pkb_drift_free(&d);
        return rc;
    }
    *out = d;
    return 0;
}

/* ==== Correcting a series ===================================================================== */

const pkb_drift_group *pkb_drift_group_for(const pkb_drift *d, const char *scenario)
{
    if (!d->available || d->ngroups == 0)
        return NULL;
    for (size_t i = 1; i < d->ngroups; i++)
        if (strcmp(d->groups[i].name, scenario) == 0)
            return &d->groups[i];
    return &d->groups[0];
}

/* The group's index in round r of file f: the geomean of its members present there; NaN when
 * none is. */
static double round_index(const pkb_drift *d, const pkb_drift_group *g, int f, size_t r)
{
    double l = 0;
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        const pkb_drift_control *c = &d->controls[g->members[i]];
        if (r < c->nrounds[f] && !isnan(c->by_round[f][r])) {
            l += log(c->by_round[f][r]);
            k++;
        }
    }
    return k > 0 ? exp(l / (double)k) : NAN;
}

/* The run's index: the median over its rounds of the round index. NaN when no round has one. */
static double run_index(const pkb_drift *d, const pkb_drift_group *g, int f)
{
    size_t top = 0;
    for (size_t i = 0; i < g->n; i++)
        top = d->controls[g->members[i]].nrounds[f] > top ? d->controls[g->members[i]].nrounds[f]
                                                          : top;
    double *v = malloc((top + 1) * sizeof *v), m = NAN;
    size_t n = 0;
    for (size_t r = 1; v != NULL && r < top; r++) {
        double x = round_index(d, g, f, r);
        if (!isnan(x))
            v[n++] = x;
    }
    if (n > 0 && pks_median(v, n, NULL, &m) != 0)
        m = NAN;
    free(v);
    return m;
}

/* Every sample of s divided by its round's index; false (y untouched past the first miss) when
 * a sample has no round or its round no control. */
static bool by_rounds(
    const pkb_drift *d, const pkb_drift_group *g, int f, const pkb_results_series *s, double *y)
{
    for (size_t i = 0; i < s->n; i++) {
        double x = s->round != NULL ? round_index(d, g, f, (size_t)s->round[i]) : NAN;
        if (isnan(x))
            return false;
        y[i] = s->samples[i] / x;
    }
    return true;
}

/* The robust spread of x[0..n): MAD / median; +inf when it cannot be computed. */
static double spread_of(const double *x, size_t n)
{
    double med, mad;
    if (n < 2 || pks_median(x, n, NULL, &med) != 0 || pks_mad(x, n, NULL, &mad) != 0 || !(med > 0))
        return INFINITY;
    return mad / med;
}

int pkb_drift_correct(const pkb_drift *d,
                      const pkb_drift_group *g,
                      const pkb_results_series *b,
                      const pkb_results_series *n,
                      double *yb,
                      double *yn,
                      bool *by_round)
{
    *by_round = by_rounds(d, g, 0, b, yb) && by_rounds(d, g, 1, n, yn);
    /* Pairing by round divides by the round's controls, their own noise included: worth it only
     * when the series moves with them. When it leaves the samples more spread than they were
     * (noisy controls, a series that does not share their rounds' state), the run's index
     * corrects the drift without adding that noise. */
    if (*by_round && spread_of(yb, b->n) + spread_of(yn, n->n) <=
                         spread_of(b->samples, b->n) + spread_of(n->samples, n->n))
        return 0;
    *by_round = false;
    /* Both sides take the run's index (also when not every sample met its round's controls), so
     * the two are corrected alike. */
    double ib = run_index(d, g, 0), in = run_index(d, g, 1);
    if (isnan(ib) || isnan(in))
        return -EDOM;
    for (size_t i = 0; i < b->n; i++)
        yb[i] = b->samples[i] / ib;
    for (size_t i = 0; i < n->n; i++)
        yn[i] = n->samples[i] / in;
    return 0;
}

static void pct(char *out, size_t len, double ratio)
{
    snprintf(out, len, "%+.1f%%", 100 * (ratio - 1));
}

void pkb_drift_why(const pkb_drift *d, const pkb_drift_group *g, char *buf, size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    char a[32], lo[32], hi[32];
    if (g->state == PKB_DRIFT_TOO_LARGE) {
        pct(a, sizeof a, g->ratio.estimate);
        snprintf(buf, len, "drift %s beyond the %.1f%% a correction is trusted for", a,
                 100 * d->opts.limit);
    } else if (g->state == PKB_DRIFT_UNEVEN) {
        /* Uneven itself, or because another scenario is. */
        const pkb_drift_group *u = d->uneven != NULL && !apart_from_all(d, g) ? d->uneven : g;
        pct(a, sizeof a, u->ratio.estimate);
        pct(lo, sizeof lo, d->groups[0].ratio.estimate);
        if (u == g)
            snprintf(buf, len,
                     "uneven: drift %s here, %s over every control (more than %.0f%% apart: the "
                     "machine did not slow everything alike)",
                     a, lo, 100 * PKB_DRIFT_UNEVEN_ABOVE);
        else
            snprintf(buf, len,
                     "uneven: drift %s in %s, %s over every control (more than %.0f%% apart: the "
                     "machine did not slow everything alike)",
                     a, u->name, lo, 100 * PKB_DRIFT_UNEVEN_ABOVE);
    } else if (g->state == PKB_DRIFT_INCONSISTENT) {
        size_t used = 0;
        for (int i = 0; i < 2 && used < len; i++) {
            const pkb_drift_control *c = &d->controls[g->disagree[i]];
            pct(a, sizeof a, c->ratio.estimate);
            pct(lo, sizeof lo, c->ratio.lo);
            pct(hi, sizeof hi, c->ratio.hi);
            int w = snprintf(buf + used, len - used, "%s%s %s [%s, %s]",
                             i == 0 ? "controls disagree: " : " vs ", c->name, a, lo, hi);
            used += w > 0 ? (size_t)w : 0;
        }
    }
}
