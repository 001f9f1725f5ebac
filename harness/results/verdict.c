/*
 * verdict — the statistical verdict every reader of a results file shares (verdict.h): a family
 * of pairs decided with stats.h's medians, bootstrap CI, Mann-Whitney, Holm and noise check (or,
 * for two series of one interleaved run, paired.h's per-round ratios and signed-rank test); the
 * CI reading of a target; the noise floor an A/A run stored; and the family of one file's
 * contenders against a baseline per scenario, which the report and `pkbench compare
 * --baseline-contender` both decide.
 */
#define _GNU_SOURCE
#include "results/verdict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t pkb_verdict_name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */
    for (; s != NULL && *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h;
}

static pkb_verdict_options resolved(const pkb_verdict_options *in)
{
    pkb_verdict_options o = in != NULL ? *in : (pkb_verdict_options){0};
    if (o.alpha == 0)
        o.alpha = PKS_DEFAULT_ALPHA;
    if (o.iterations == 0)
        o.iterations = PKS_BOOTSTRAP_DEFAULT_ITERATIONS;
    if (o.seed == 0)
        o.seed = PKB_VERDICT_SEED;
    if (o.threshold < 0)
        o.threshold = 0;
    return o;
}

static double finite_or_0(double x)
{
    return isfinite(x) ? x : 0;
}

double pkb_robust_cv(const pks_summary *s)
{
    return s->n >= 2 && s->median > 0 ? PKS_MAD_NORMAL_SCALE * s->mad / s->median : NAN;
}

/* The samples of x taken in the same round, as pairs (pb[k], pc[k]); their count. A round
 * below 1 is no round. Each base round pairs with the first candidate sample of that round. */
static size_t match_rounds(const pkb_verdict *x, double *pb, double *pc)
{
    size_t k = 0;
    for (size_t i = 0; i < x->nbase; i++) {
        if (x->base_round[i] < 1)
            continue;
        for (size_t j = 0; j < x->ncand; j++) {
            if (x->cand_round[j] == x->base_round[i]) {
                pb[k] = x->base[i];
                pc[k++] = x->cand[j];
                break;
            }
        }
    }
    return k;
}

/* Decides x on its per-round ratios when it has enough rounds in common: the ratio, its CI and
 * delta become the paired ones; *p the signed-rank p. Returns 0 (paired or not) or an error. */
static int pair_by_round(pkb_verdict *x, const pks_bootstrap *boot, double *p)
{
    x->paired = false;
    if (x->base_round == NULL || x->cand_round == NULL)
        return 0;
    size_t cap = x->nbase < x->ncand ? x->nbase : x->ncand;
    double *pb = malloc((cap > 0 ? cap : 1) * 2 * sizeof *pb);
    if (pb == NULL)
        return -ENOMEM;
    double *pc = pb + (cap > 0 ? cap : 1);
    size_t k = match_rounds(x, pb, pc);
    int rc = 0;
    if (k >= PKS_MIN_SAMPLES) {
        rc = pks_paired_compare(pb, pc, k, boot, NULL, &x->pair);
        if (rc == 0) {
            x->paired = true;
            x->s.ratio = x->pair.ratio;
            x->s.delta = x->pair.ratio.estimate - 1;
            *p = x->pair.test.p;
        }
    }
    free(pb);
    return rc;
}

int pkb_verdict_family(pkb_verdict *v, size_t n, const pkb_verdict_options *opts)
{
    if (n == 0)
        return 0;
    pkb_verdict_options o = resolved(opts);
    double *p = calloc(n, sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        pks_bootstrap boot = {.iterations = o.iterations,
                              .level = o.level,
                              .seed = o.seed ^ pkb_verdict_name_hash(v[i].name)};
        rc = pks_series_compare(v[i].base, v[i].nbase, v[i].cand, v[i].ncand, &boot, NULL, &v[i].s);
        p[i] = v[i].s.mwu.p;
        if (rc == 0)
            rc = pair_by_round(&v[i], &boot, &p[i]);
    }
    if (rc == 0)
        rc = pks_holm(p, n, p, NULL);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        pkb_verdict *x = &v[i];
        x->p_holm = p[i];
        x->level = o.level > 0 ? o.level : PKS_BOOTSTRAP_DEFAULT_LEVEL;
        x->cv_base = pkb_robust_cv(&x->s.base);
        x->cv_cand = pkb_robust_cv(&x->s.cand);
        /* Paired, the noise that matters is what the rounds did not share, and the question is
         * whether the rounds pin the ratio down: the CI's relative half-width, which more rounds
         * narrow, against the limit (a cv of the ratios would not shrink with more rounds). */
        double spread = x->paired ? pks_paired_half_width(&x->pair) : NAN;
        pks_undecidable samples =
            x->paired
                ? pks_check_samples(x->pair.n, x->pair.n, spread, spread, o.cv_limit)
                : pks_check_samples(x->s.base.n, x->s.cand.n, x->cv_base, x->cv_cand, o.cv_limit);
        /* A series too noisy for its point estimate is still decided when its whole CI lies
         * beyond the bar (pks_decide): apart, the bar is widened by the noisier sample's cv (a
         * sample whose bulk is spread over modes moves its median by about that much);
         * paired, the CI over the rounds already carries the rounds' noise. */
        x->d = pks_decide(&(pks_decision_in){
            .p = x->p_holm,
            .alpha = o.alpha,
            .delta = x->s.delta,
            .threshold = o.threshold,
            .noise_floor = x->noise_floor,
            .samples = samples,
            .ci_known = isfinite(x->s.ratio.lo) && isfinite(x->s.ratio.hi),
            .ci_lo = x->s.ratio.lo - 1,
            .ci_hi = x->s.ratio.hi - 1,
            .widen = x->paired ? 0 : fmax(finite_or_0(x->cv_base), finite_or_0(x->cv_cand)),
        });
    }
    free(p);
    return rc == -ENOMEM ? rc : rc != 0 ? -EINVAL : 0;
}

void pkb_verdict_why(const pkb_verdict *v,
                     double cv_limit,
                     const char *base_word,
                     const char *cand_word,
                     char *buf,
                     size_t len)
{
    if (len == 0)
        return;
    buf[0] = '\0';
    if (cv_limit == 0)
        cv_limit = PKS_DEFAULT_CV_LIMIT;
    if (v->paired && v->d.reason == PKS_TOO_NOISY) {
        snprintf(buf, len,
                 "too noisy: the %.4g%% CI of the %zu per-round ratios spans ±%.1f%% > %.1f%%",
                 100 * (v->level > 0 ? v->level : PKS_BOOTSTRAP_DEFAULT_LEVEL), v->pair.n,
                 100 * pks_paired_half_width(&v->pair), 100 * cv_limit);
    } else if (v->d.reason == PKS_TOO_FEW_SAMPLES) {
        snprintf(buf, len, "too few samples: %zu in %s, %zu in %s, need %d", v->s.base.n, base_word,
                 v->s.cand.n, cand_word, PKS_MIN_SAMPLES);
    } else if (v->d.reason == PKS_TOO_NOISY) {
        bool bad_b = !(v->cv_base <= cv_limit), bad_n = !(v->cv_cand <= cv_limit);
        if (bad_b && bad_n)
            snprintf(buf, len, "too noisy: cv %.1f%% in %s and %.1f%% in %s > %.1f%%",
                     100 * v->cv_base, base_word, 100 * v->cv_cand, cand_word, 100 * cv_limit);
        else
            snprintf(buf, len, "too noisy: cv %.1f%% in %s > %.1f%%",
                     100 * (bad_b ? v->cv_base : v->cv_cand), bad_b ? base_word : cand_word,
                     100 * cv_limit);
    }
}

pkb_verdict_word pkb_verdict_word_of(const pkb_verdict *v)
{
    switch (v->d.verdict) {
    case PKS_REGRESSED:
        return PKB_WORD_SLOWER;
    case PKS_IMPROVED:
        return PKB_WORD_FASTER;
    case PKS_UNDECIDABLE:
        return PKB_WORD_UNDECIDABLE;
    case PKS_NO_CHANGE:
        break;
    }
    return fabs(v->s.delta) <= v->d.bar ? PKB_WORD_NEGLIGIBLE : PKB_WORD_NOT_DISTINGUISHABLE;
}

const char *pkb_verdict_word_name(pkb_verdict_word w)
{
    static const char *const words[PKB_NWORDS] = {
        [PKB_WORD_NEGLIGIBLE] = "negligible",
        [PKB_WORD_NOT_DISTINGUISHABLE] = "not distinguishable",
        [PKB_WORD_SLOWER] = "slower",
        [PKB_WORD_FASTER] = "faster",
        [PKB_WORD_UNDECIDABLE] = "undecidable",
    };
    return (unsigned)w < PKB_NWORDS ? words[w] : "?";
}

/* ---- targets --------------------------------------------------------------------------------- */

/* A target is decided by where the ratio's whole CI lies against its limit. Too few samples decide
 * nothing. Too noisy, the rule is pks_decide's for a verdict (issue 35: noise may widen the bar,
 * never veto what the data settle): a CI wholly beyond the limit still decides it, apart with the
 * limit widened by the noisier sample's cv, paired as it is (the CI over the rounds already
 * carries the rounds' noise). */
pkb_target_result pkb_target_check(const pkb_verdict *v, double limit, bool strict)
{
    if (!isfinite(v->s.ratio.lo) || !isfinite(v->s.ratio.hi))
        return PKB_TARGET_UNDECIDABLE;
    double widen = 0;
    if (v->d.verdict == PKS_UNDECIDABLE) {
        if (v->d.reason != PKS_TOO_NOISY)
            return PKB_TARGET_UNDECIDABLE;
        widen = v->paired ? 0 : fmax(finite_or_0(v->cv_base), finite_or_0(v->cv_cand));
    }
    double below = limit - widen, above = limit + widen;
    bool hi_ok = strict || widen > 0 ? v->s.ratio.hi < below : v->s.ratio.hi <= below;
    bool lo_ok = strict ? v->s.ratio.lo < above : v->s.ratio.lo <= above;
    if (hi_ok)
        return PKB_TARGET_MET;
    if (!lo_ok)
        return PKB_TARGET_NOT_MET;
    return PKB_TARGET_UNDECIDABLE;
}

const char *pkb_target_result_name(pkb_target_result r)
{
    switch (r) {
    case PKB_TARGET_MET:
        return "met";
    case PKB_TARGET_NOT_MET:
        return "not met";
    case PKB_TARGET_UNDECIDABLE:
        break;
    }
    return "undecidable";
}

/* ---- the noise floor ------------------------------------------------------------------------- */

int pkb_results_section(const pkb_results *r,
                        const char *path,
                        const char *key,
                        const json_t **obj,
                        char *err,
                        size_t err_len)
{
    *obj = json_object_get(r->root, key);
    if (json_is_null(*obj))
        *obj = NULL;
    if (*obj != NULL && !json_is_object(*obj))
        return pkb_fail(err, err_len, -EBADMSG, "%s: field %s is not an object", path, key);
    return 0;
}

int pkb_noise_floor_read(
    const pkb_results *r, const char *path, pkb_noise_floor *f, char *err, size_t err_len)
{
    *f = (pkb_noise_floor){0};
    const json_t *nf;
    int rc = pkb_results_section(r, path, "noise_floor", &nf, err, err_len);
    if (rc != 0 || nf == NULL)
        return rc;
    const json_t *alpha = json_object_get(nf, "alpha"), *series = json_object_get(nf, "series");
    if (!json_is_number(alpha) || !(json_number_value(alpha) > 0 && json_number_value(alpha) < 1))
        return pkb_fail(err, err_len, -EBADMSG, "%s: noise_floor.alpha is not a number in (0, 1)",
                        path);
    if (!json_is_object(series))
        return pkb_fail(err, err_len, -EBADMSG, "%s: noise_floor.series is not an object", path);
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)series, name, v)
    {
        const json_t *mde = json_object_get(v, "mde"), *b = json_object_get(v, "samples_b_ns");
        if (!json_is_object(v) || !json_is_number(mde) || !(json_number_value(mde) >= 0) ||
            !(json_number_value(mde) <= PKB_RESULTS_MAX_MDE))
            return pkb_fail(err, err_len, -EBADMSG,
                            "%s: noise_floor.series.%.80s.mde is not a fraction from 0 to %g", path,
                            name, PKB_RESULTS_MAX_MDE);
        size_t i;
        const json_t *x;
        if (b != NULL && !json_is_array(b))
            return pkb_fail(err, err_len, -EBADMSG,
                            "%s: noise_floor.series.%.80s.samples_b_ns is not an array", path,
                            name);
        json_array_foreach(b, i, x)
        {
            if (!json_is_number(x) || !pkb_results_sample_ok(json_number_value(x)))
                return pkb_fail(err, err_len, -EBADMSG,
                                "%s: noise_floor.series.%.80s.samples_b_ns[%zu] is not %s", path,
                                name, i, PKB_RESULTS_SAMPLE_WORDS);
        }
    }
    f->series = series;
    f->alpha = json_number_value(alpha);
    return 0;
}

int pkb_noise_floor_of(const pkb_noise_floor *f,
                       const pkb_results *r,
                       const char *name,
                       const pkb_verdict_options *opts,
                       double *out)
{
    *out = 0;
    const json_t *e = f->series != NULL ? json_object_get(f->series, name) : NULL;
    if (e == NULL)
        return 0;
    pkb_verdict_options o = resolved(opts);
    *out = json_number_value(json_object_get(e, "mde"));
    const json_t *b = json_object_get(e, "samples_b_ns");
    const pkb_results_series *a = pkb_results_find(r, name);
    if (fabs(f->alpha - o.alpha) < 1e-12 || json_array_size(b) == 0 || a == NULL || !a->measured)
        return 0;
    size_t nb = json_array_size(b);
    double *xb = malloc(nb * sizeof *xb);
    if (xb == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < nb; i++)
        xb[i] = json_number_value(json_array_get(b, i));
    int rc = pks_mde(
        a->samples, a->n, xb, nb, o.alpha,
        &(pks_bootstrap){.iterations = o.iterations, .seed = o.seed ^ pkb_verdict_name_hash(name)},
        NULL, out, NULL);
    free(xb);
    return rc == -ENOMEM ? rc : 0;
}

/* ---- the contenders of one file ---------------------------------------------------------------
 */

/* The base of s: the series of `baseline` (or marked baseline) in s's scenario, or NULL. */
static const pkb_results_series *
base_of(const pkb_results *r, const pkb_results_series *s, const char *baseline)
{
    for (size_t k = 0; k < r->nseries; k++) {
        const pkb_results_series *b = &r->series[k];
        if (strcmp(b->scenario, s->scenario) != 0)
            continue;
        if (baseline != NULL ? strcmp(b->contender, baseline) == 0 : b->baseline && b->measured)
            return b;
    }
    return NULL;
}

void pkb_verdict_set_free(pkb_verdict_set *set)
{
    free(set->v);
    free(set->base);
    free(set->cand);
    memset(set, 0, sizeof *set);
}

int pkb_verdict_contenders(const pkb_results *r,
                           const char *baseline,
                           const pkb_verdict_options *opts,
                           pkb_verdict_set *out,
                           char *err,
                           size_t err_len)
{
    memset(out, 0, sizeof *out);
    pkb_noise_floor floor;
    int rc = pkb_noise_floor_read(r, r->file, &floor, err, err_len);
    if (rc != 0)
        return rc;
    size_t cap = r->nseries > 0 ? r->nseries : 1;
    out->v = calloc(cap, sizeof *out->v);
    out->base = calloc(cap, sizeof *out->base);
    out->cand = calloc(cap, sizeof *out->cand);
    if (out->v == NULL || out->base == NULL || out->cand == NULL) {
        pkb_verdict_set_free(out);
        return pkb_fail(err, err_len, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; rc == 0 && i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        const pkb_results_series *b = base_of(r, s, baseline);
        if (b == NULL || b == s || (baseline != NULL && strcmp(s->contender, baseline) == 0) ||
            !b->measured || !s->measured)
            continue;
        double fb = 0, fc = 0;
        rc = pkb_noise_floor_of(&floor, r, b->name, opts, &fb);
        if (rc == 0)
            rc = pkb_noise_floor_of(&floor, r, s->name, opts, &fc);
        out->v[out->n] = pkb_verdict_of(b, s);
        out->v[out->n].noise_floor = fmax(fb, fc);
        out->base[out->n] = b;
        out->cand[out->n] = s;
        out->n++;
    }
    if (rc == 0)
        rc = pkb_verdict_family(out->v, out->n, opts);
    if (rc != 0) {
        pkb_verdict_set_free(out);
        return pkb_fail(err, err_len, rc, "%s: %s", r->file,
                        rc == -ENOMEM ? "out of memory" : "the statistics could not be computed");
    }
    return 0;
}

pkb_verdict pkb_verdict_of(const pkb_results_series *base, const pkb_results_series *cand)
{
    return (pkb_verdict){.name = cand->name,
                         .base = base->samples,
                         .nbase = base->n,
                         .cand = cand->samples,
                         .ncand = cand->n,
                         .base_round = base->round,
                         .cand_round = cand->round};
}

int pkb_verdict_pair(const pkb_results_series *base, const pkb_results_series *cand, pkb_verdict *v)
{
    *v = pkb_verdict_of(base, cand);
    return pkb_verdict_family(v, 1, &(pkb_verdict_options){.threshold = PKB_VERDICT_NEGLIGIBLE});
}

const pkb_verdict *pkb_verdict_set_find(const pkb_verdict_set *set, const pkb_results_series *cand)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->cand[i] == cand)
            return &set->v[i];
    return NULL;
}
