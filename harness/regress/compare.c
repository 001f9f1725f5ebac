/*
 * compare — matching, statistics and verdicts of `pkbench compare` (see compare.h for the rules;
 * render.c prints the result).
 *
 * The files are read by the report's loader (results/load.c: the same validation and the same
 * one-line messages), so compare accepts exactly what `pkbench report` accepts, and every row is
 * decided by results/verdict.h, the verdict the report's conclusions use. verdict.c also reads
 * the optional `noise_floor` object a `pkbench run --aa` file carries:
 *
 *     "noise_floor": {"alpha": 0.05, "series": {"<name>": {"mde": 0.031, "samples_b_ns": [...]}}}
 *
 * The MDE is used as stored when it was measured at the comparison's alpha; otherwise, when the
 * file keeps the B half of the A/A run, it is recomputed at the comparison's alpha from the
 * series' samples (the A half) and samples_b_ns, with the same pks_mde.
 *
 * Bootstrap seeds are the option's seed mixed with a hash of the row's name, so every row has
 * its own stream and the whole output is reproducible from the two files and the options.
 *
 * Fail-safe matching: a series the base measured and the new file lacks, or holds failed or
 * refused by its check, is a note that makes the status 2; refused or failed there for a reason
 * of the host (the series' `environmental` flag) makes it 3. The run settings of the two files
 * (profile, repetitions, time per sample, warm-up, interleaving) are compared and every
 * difference named.
 */
#define _GNU_SOURCE
#include "regress/compare.h"

#include "common/md.h"
#include "results/results.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *xstrdup(const char *s)
{
    return strdup(s != NULL ? s : "");
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* ==== Options ================================================================================ */

static int
resolve_options(const pkb_compare_options *in, pkb_compare_options *o, char *err, size_t err_len)
{
    *o = in != NULL ? *in : (pkb_compare_options){0};
    if (o->alpha == 0)
        o->alpha = PKS_DEFAULT_ALPHA;
    if (!(o->alpha > 0 && o->alpha < 1))
        return pkb_fail(err, err_len, -EINVAL, "--alpha must be in (0, 1), got %g", o->alpha);
    if (o->threshold == 0)
        o->threshold = o->baseline_contender != NULL ? PKB_COMPARE_DEFAULT_CONTENDERS_THRESHOLD
                                                     : PKB_COMPARE_DEFAULT_THRESHOLD;
    else if (o->threshold < 0)
        o->threshold = 0; /* none */
    if (!(isfinite(o->threshold) && o->threshold < 10))
        return pkb_fail(err, err_len, -EINVAL, "--threshold must be a percentage below 1000%%");
    if (o->cv_limit == 0)
        o->cv_limit = PKS_DEFAULT_CV_LIMIT;
    else if (o->cv_limit < 0)
        o->cv_limit = -1; /* no limit */
    if (!isfinite(o->cv_limit))
        return pkb_fail(err, err_len, -EINVAL, "--cv-limit must be a finite percentage");
    if (o->iterations == 0)
        o->iterations = PKS_BOOTSTRAP_DEFAULT_ITERATIONS;
    if (o->seed == 0)
        o->seed = PKB_COMPARE_DEFAULT_SEED;
    if (o->env_keys == NULL)
        o->env_keys = PKB_COMPARE_ENV_KEYS;
    if (o->drift_limit == 0)
        o->drift_limit = PKB_DRIFT_DEFAULT_LIMIT;
    if (!(o->drift_limit > 0 && o->drift_limit < 10))
        return pkb_fail(err, err_len, -EINVAL,
                        "--drift-limit must be a percentage above 0 and below 1000%%");
    return 0;
}

/* ==== Matching =============================================================================== */

struct ctx {
    pkb_compare *c;
    const pkb_results *base, *cand;
    pkb_noise_floor floor;
    regex_t re;
    bool have_re;
    size_t cap_rows, cap_notes;
    /* parallel to c->rows: the samples of each row (borrowed from the loaded files) */
    const pkb_results_series **row_base, **row_cand;
};

static bool selected(const struct ctx *x, const char *name)
{
    return !x->have_re || regexec(&x->re, name, 0, NULL, 0) == 0;
}

static int push_str(char ***arr, size_t *n, const char *s)
{
    char **bigger = realloc(*arr, (*n + 1) * sizeof **arr);
    if (bigger == NULL)
        return -ENOMEM;
    *arr = bigger;
    if ((bigger[*n] = xstrdup(s)) == NULL)
        return -ENOMEM;
    (*n)++;
    return 0;
}

static int push_note(struct ctx *x, const char *name, char *why, pkb_compare_note_kind kind)
{
    pkb_compare *c = x->c;
    if (why == NULL)
        return -ENOMEM;
    pkb_compare_note *bigger = realloc(c->skipped, (c->nskipped + 1) * sizeof *bigger);
    if (bigger == NULL) {
        free(why);
        return -ENOMEM;
    }
    c->skipped = bigger;
    bigger[c->nskipped] = (pkb_compare_note){.name = xstrdup(name), .why = why, .kind = kind};
    if (bigger[c->nskipped].name == NULL) {
        free(why);
        return -ENOMEM;
    }
    c->nskipped++;
    c->missing += kind == PKB_NOTE_MISSING;
    c->environmental += kind == PKB_NOTE_ENVIRONMENT;
    return 0;
}

/* Why a series present in a file cannot be compared: "refused in new: <reason>". */
static char *unmeasured(const pkb_results_series *s, const char *side)
{
    if (s->n == 0 && strcmp(s->status, "measured") == 0)
        return xasprintf("no samples in %s", side);
    return xasprintf("%s in %s%s%s", s->status, side, s->reason ? ": " : "",
                     s->reason ? s->reason : "");
}

static int
push_row(struct ctx *x, const char *name, const pkb_results_series *b, const pkb_results_series *n)
{
    pkb_compare *c = x->c;
    if (!b->measured)
        return push_note(x, name, unmeasured(b, "base"), PKB_NOTE_INFO);
    if (!n->measured) /* the base measured it: the gate fails safe */
        return push_note(x, name, unmeasured(n, "new"),
                         n->environmental && strcmp(n->status, "measured") != 0
                             ? PKB_NOTE_ENVIRONMENT
                             : PKB_NOTE_MISSING);
    if (c->nrows == x->cap_rows) {
        size_t cap = x->cap_rows ? x->cap_rows * 2 : 16;
        pkb_compare_row *rows = realloc(c->rows, cap * sizeof *rows);
        if (rows != NULL)
            c->rows = rows;
        const pkb_results_series **rb = realloc(x->row_base, cap * sizeof *rb);
        if (rb != NULL)
            x->row_base = rb;
        const pkb_results_series **rc = realloc(x->row_cand, cap * sizeof *rc);
        if (rc != NULL)
            x->row_cand = rc;
        if (rows == NULL || rb == NULL || rc == NULL)
            return -ENOMEM;
        x->cap_rows = cap;
    }
    pkb_compare_row *r = &c->rows[c->nrows];
    *r = (pkb_compare_row){.name = xstrdup(name), .base_name = xstrdup(b->name)};
    x->row_base[c->nrows] = b;
    x->row_cand[c->nrows] = n;
    c->nrows++;
    return r->name != NULL && r->base_name != NULL ? 0 : -ENOMEM;
}

static int match_files(struct ctx *x)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < x->base->nseries; i++) {
        const pkb_results_series *b = &x->base->series[i];
        if (!selected(x, b->name))
            continue;
        const pkb_results_series *n = pkb_results_find(x->cand, b->name);
        rc = n == NULL ? push_str(&x->c->only_base, &x->c->nonly_base, b->name)
                       : push_row(x, b->name, b, n);
        if (rc == 0 && n == NULL && b->measured) { /* measured in base, absent in new */
            rc = push_str(&x->c->absent, &x->c->nabsent, b->name);
            x->c->missing++;
        }
    }
    for (size_t i = 0; rc == 0 && i < x->cand->nseries; i++) {
        const pkb_results_series *n = &x->cand->series[i];
        if (selected(x, n->name) && pkb_results_find(x->base, n->name) == NULL)
            rc = push_str(&x->c->only_cand, &x->c->nonly_cand, n->name);
    }
    return rc;
}

static int match_contenders(struct ctx *x, const char *path, char *err, size_t err_len)
{
    const char *name = x->c->opts.baseline_contender;
    const pkb_results *r = x->base;
    bool any = false;
    for (size_t i = 0; i < r->nseries; i++)
        any |= strcmp(r->series[i].contender, name) == 0;
    if (!any)
        return pkb_fail(err, err_len, -EINVAL,
                        "%s: no series of contender '%.60s' (--baseline-contender)", path, name);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        if (strcmp(s->contender, name) == 0 || !selected(x, s->name))
            continue;
        const pkb_results_series *b = NULL;
        for (size_t k = 0; k < r->nseries && b == NULL; k++)
            if (strcmp(r->series[k].scenario, s->scenario) == 0 &&
                strcmp(r->series[k].contender, name) == 0)
                b = &r->series[k];
        if (b == NULL)
            rc = push_note(x, s->name, xasprintf("no %s series in scenario %s", name, s->scenario),
                           PKB_NOTE_INFO);
        else if (!b->measured)
            rc = push_note(x, s->name, xasprintf("its base %s is %s", b->name, b->status),
                           PKB_NOTE_INFO);
        else if (!s->measured)
            rc = push_note(x, s->name, unmeasured(s, "the file"), PKB_NOTE_INFO);
        else
            rc = push_row(x, s->name, b, s);
    }
    return rc;
}

/* ==== Statistics and verdicts ================================================================ */

/* The rows idx[0..n) as one family of results/verdict.h (the report's statistics, here), on the
 * files' samples or, when yb is not NULL, on yb[i] / yn[i]; the noise floor at least floor[i]
 * when floor is not NULL; decided into v[i], whose inputs are then cleared (the samples are the
 * files' or yb's, freed after). */
static int decide_family(struct ctx *x,
                         const size_t *idx,
                         size_t n,
                         double *const *yb,
                         double *const *yn,
                         const double *floor,
                         pkb_verdict *v)
{
    pkb_compare *c = x->c;
    const pkb_compare_options *o = &c->opts;
    pkb_verdict_options vo = {.alpha = o->alpha,
                              .threshold = o->threshold,
                              .cv_limit = o->cv_limit,
                              .iterations = o->iterations,
                              .seed = o->seed};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const pkb_compare_row *r = &c->rows[idx[i]];
        const pkb_results_series *b = x->row_base[idx[i]], *s = x->row_cand[idx[i]];
        double fb = 0, fc = 0;
        rc = pkb_noise_floor_of(&x->floor, x->base, r->base_name, &vo, &fb);
        if (rc == 0 && o->baseline_contender != NULL)
            rc = pkb_noise_floor_of(&x->floor, x->base, r->name, &vo, &fc);
        v[i] = pkb_verdict_of(b, s);
        v[i].noise_floor = fmax(fmax(fb, fc), floor != NULL ? floor[i] : 0);
        if (yb != NULL) { /* drift-corrected */
            v[i].base = yb[i];
            v[i].cand = yn[i];
        }
        /* Two series of one file took their samples round by round: pair them (verdict.h).
         * Between two files the rounds are different runs' and the controls correct instead. */
        if (o->baseline_contender == NULL || yb != NULL)
            v[i].base_round = v[i].cand_round = NULL;
    }
    if (rc == 0 && n > 0)
        rc = pkb_verdict_family(v, n, &vo);
    for (size_t i = 0; i < n; i++) {
        v[i].name = NULL;
        v[i].base = v[i].cand = NULL;
        v[i].base_round = v[i].cand_round = NULL;
    }
    return rc;
}

void pkb__compare_set_stats(pkb_compare_row *r, const pkb_verdict *st)
{
    r->s = st->s;
    r->cv_base = st->cv_base;
    r->cv_cand = st->cv_cand;
    r->p_holm = st->p_holm;
    r->noise_floor = st->noise_floor;
    r->d = st->d;
    r->paired = st->paired;
    r->pair = st->pair;
}

/* The raw verdicts: the non-control rows as one family, the controls as another (their ratios
 * are shown; they are never counted). Every row's gate fields start as its raw ones. */
static int decide_raw(struct ctx *x)
{
    pkb_compare *c = x->c;
    size_t *idx = malloc((c->nrows + 1) * sizeof *idx);
    pkb_verdict *st = calloc(c->nrows + 1, sizeof *st);
    int rc = idx != NULL && st != NULL ? 0 : -ENOMEM;
    for (int controls = 0; rc == 0 && controls < 2; controls++) {
        size_t n = 0;
        for (size_t i = 0; i < c->nrows; i++)
            if (c->rows[i].control == (controls == 1))
                idx[n++] = i;
        rc = decide_family(x, idx, n, NULL, NULL, NULL, st);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            c->rows[idx[i]].raw = st[i];
            pkb__compare_set_stats(&c->rows[idx[i]], &st[i]);
        }
    }
    free(idx);
    free(st);
    return rc;
}

/* The gate's verdicts on drift-corrected samples: every non-control row whose control group
 * could correct it, as one family; the others undecidable, "machine changed". */
static int decide_corrected(struct ctx *x)
{
    pkb_compare *c = x->c;
    size_t *idx = malloc((c->nrows + 1) * sizeof *idx), n = 0;
    double **yb = calloc(c->nrows + 1, sizeof *yb), **yn = calloc(c->nrows + 1, sizeof *yn);
    bool *by_round = calloc(c->nrows + 1, sizeof *by_round);
    double *spread = calloc(c->nrows + 1, sizeof *spread);
    pkb_verdict *st = calloc(c->nrows + 1, sizeof *st);
    int rc = idx && yb && yn && by_round && spread && st ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i < c->nrows; i++) {
        pkb_compare_row *r = &c->rows[i];
        const pkb_results_series *b = x->row_base[i], *s = x->row_cand[i];
        r->group = pkb_drift_group_for(&c->drift, b->scenario);
        if (r->control)
            continue;
        yb[n] = malloc(b->n * sizeof **yb);
        yn[n] = malloc(s->n * sizeof **yn);
        if (yb[n] == NULL || yn[n] == NULL) {
            free(yb[n]);
            free(yn[n]);
            rc = -ENOMEM;
            break;
        }
        if (r->group->state != PKB_DRIFT_OK ||
            pkb_drift_correct(&c->drift, r->group, b, s, yb[n], yn[n], &by_round[n]) != 0) {
            /* Its controls cannot vouch for the machine: no verdict either way. */
            r->machine_changed = true;
            r->d = (pks_decision){
                .verdict = PKS_UNDECIDABLE, .reason = PKS_DECIDABLE, .bar = r->raw.d.bar};
            free(yb[n]);
            free(yn[n]);
            continue;
        }
        spread[n] = r->group->spread; /* its controls' disagreement: part of its bar */
        idx[n++] = i;
    }
    if (rc == 0)
        rc = decide_family(x, idx, n, yb, yn, spread, st);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        pkb_compare_row *r = &c->rows[idx[i]];
        pkb__compare_set_stats(r, &st[i]);
        r->corrected = true;
        r->by_round = by_round[i];
        r->control_spread = spread[i];
    }
    for (size_t i = 0; yb != NULL && yn != NULL && i < n; i++) {
        free(yb[i]);
        free(yn[i]);
    }
    free(idx);
    free(yb);
    free(yn);
    free(by_round);
    free(spread);
    free(st);
    return rc;
}

/* The drift between the two files, from the rows' controls; the rows judged on it when it can
 * be applied. A pair of files without controls taken in rounds is judged raw, and says why. */
static int decide_rows(struct ctx *x, char *err, size_t err_len)
{
    pkb_compare *c = x->c;
    bool files = c->opts.baseline_contender == NULL;
    for (size_t i = 0; files && i < c->nrows; i++)
        c->rows[i].control = x->row_base[i]->control && x->row_cand[i]->control;
    int rc = decide_raw(x);
    if (rc != 0 || !files)
        return rc;
    pkb_drift_options dopts = {.limit = c->opts.drift_limit,
                               .threshold = c->opts.threshold,
                               .iterations = c->opts.iterations,
                               .seed = c->opts.seed};
    rc = pkb_drift_estimate(x->base, x->cand, &dopts, &c->drift, err, err_len);
    if (rc != 0 || !c->drift.available || c->opts.no_drift_correction)
        return rc;
    c->drift_applied = true;
    return decide_corrected(x);
}

static void tally_raw(pkb_compare *c)
{
    for (size_t i = 0; i < c->nrows; i++) {
        const pkb_compare_row *r = &c->rows[i];
        if (r->control)
            continue;
        c->raw_regressed += r->raw.d.verdict == PKS_REGRESSED;
        c->raw_improved += r->raw.d.verdict == PKS_IMPROVED;
        c->raw_unchanged += r->raw.d.verdict == PKS_NO_CHANGE;
        c->raw_undecidable += r->raw.d.verdict == PKS_UNDECIDABLE;
    }
}

void pkb__compare_tally(pkb_compare *c)
{
    double lb = 0, lc = 0, lr = 0;
    tally_raw(c);
    for (size_t i = 0; i < c->nrows; i++) {
        const pkb_compare_row *r = &c->rows[i];
        if (r->control) { /* the machine, not the code: never a verdict */
            c->controls++;
            continue;
        }
        c->machine_changed += r->machine_changed;
        switch (r->d.verdict) {
        case PKS_REGRESSED:
            c->regressed++;
            break;
        case PKS_IMPROVED:
            c->improved++;
            break;
        case PKS_NO_CHANGE:
            c->unchanged++;
            break;
        case PKS_UNDECIDABLE:
            c->undecidable++;
            continue; /* not in the geomean */
        }
        lb += log(r->s.base.median);
        lc += log(r->s.cand.median);
        lr += log(r->s.ratio.estimate);
        c->geomean_n++;
    }
    double n = (double)c->geomean_n;
    c->geomean_base = c->geomean_n ? exp(lb / n) : NAN;
    c->geomean_cand = c->geomean_n ? exp(lc / n) : NAN;
    c->geomean = c->geomean_n ? exp(lr / n) : NAN;
    c->status = c->regressed > 0 || c->missing > 0           ? 2
                : c->undecidable > 0 || c->environmental > 0 ? 3
                                                             : 0;
}

/* ==== Environment ============================================================================ */

static char *env_text(const json_t *v)
{
    if (v == NULL)
        return xstrdup("(absent)");
    if (json_is_string(v))
        return xstrdup(json_string_value(v));
    if (json_is_real(v)) /* 0.03, not jansson's 0.029999999999999999 */
        return xasprintf("%.15g", json_real_value(v));
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    return s != NULL ? s : xstrdup("?");
}

static int push_diff(
    pkb_compare_env_diff **arr, size_t *n, const char *key, const json_t *vb, const json_t *vc)
{
    pkb_compare_env_diff *bigger = realloc(*arr, (*n + 1) * sizeof *bigger);
    if (bigger == NULL)
        return -ENOMEM;
    *arr = bigger;
    bigger[*n] =
        (pkb_compare_env_diff){.key = xstrdup(key), .base = env_text(vb), .cand = env_text(vc)};
    (*n)++;
    pkb_compare_env_diff *d = &bigger[*n - 1];
    return d->key == NULL || d->base == NULL || d->cand == NULL ? -ENOMEM : 0;
}

/* With --strict-env, any difference is an error naming every key. */
static int strict_fail(const pkb_compare_env_diff *d,
                       size_t n,
                       bool strict,
                       const char *what,
                       char *err,
                       size_t err_len)
{
    if (n == 0 || !strict)
        return 0;
    pkb_buf b = {0};
    for (size_t i = 0; i < n; i++)
        pkb_buf_printf(&b, "%s%s '%.80s' vs '%.80s'", i ? ", " : "", d[i].key, d[i].base,
                       d[i].cand);
    int rc =
        pkb_fail(err, err_len, -EPROTO, "%s (--strict-env): %s", what, b.failed ? "?" : b.data);
    pkb_buf_free(&b);
    return rc;
}

static int check_env(struct ctx *x, char *err, size_t err_len)
{
    pkb_compare *c = x->c;
    const json_t *eb = json_object_get(x->base->root, "environment");
    const json_t *ec = json_object_get(x->cand->root, "environment");
    const json_t *sb = json_object_get(x->base->root, "settings");
    const json_t *sc = json_object_get(x->cand->root, "settings");
    const char *p = c->opts.env_keys;
    while (*p) {
        size_t len = strcspn(p, ",");
        char key[64];
        size_t k = 0;
        for (size_t i = 0; i < len; i++)
            if (p[i] != ' ' && k + 1 < sizeof key)
                key[k++] = p[i];
        key[k] = '\0';
        p += len + (p[len] == ',');
        if (k == 0)
            continue;
        for (size_t i = 0; i < k; i++)
            if (!((key[i] >= 'a' && key[i] <= 'z') || (key[i] >= '0' && key[i] <= '9') ||
                  key[i] == '_'))
                return pkb_fail(err, err_len, -EINVAL, "--env-keys: '%s' is not a key name", key);
        const json_t *vb = json_object_get(eb, key), *vc = json_object_get(ec, key);
        if (vb == NULL && vc == NULL) { /* not an environment key: a setting (cpu_affinity) */
            vb = json_object_get(sb, key);
            vc = json_object_get(sc, key);
        }
        if ((vb == NULL && vc == NULL) || (vb != NULL && vc != NULL && json_equal(vb, vc)))
            continue;
        if (push_diff(&c->env, &c->nenv, key, vb, vc) != 0)
            return -ENOMEM;
    }
    return strict_fail(c->env, c->nenv, c->opts.strict_env, "the environments differ", err,
                       err_len);
}

/* The run settings that change what a sample is: a difference is named, never silently
 * compared (a quick file's samples are shorter and noisier than a full one's, a sequential
 * run's series met drift a rounds run spreads, an unsettled sample carries the series before
 * it). An absent `interleave` is a sequential run; an absent `settle_s`, no settling (older
 * files, and sequential runs). */
static int check_settings(struct ctx *x, char *err, size_t err_len)
{
    pkb_compare *c = x->c;
    static const char *const keys[] = {"repetitions", "min_time_s", "warmup_s", "interleave",
                                       "settle_s"};
    json_t *zero = json_real(0);
    if (zero == NULL)
        return -ENOMEM;
    const json_t *pb = json_object_get(x->base->root, "profile");
    const json_t *pc = json_object_get(x->cand->root, "profile");
    if (!json_equal(pb, pc) && push_diff(&c->settings, &c->nsettings, "profile", pb, pc) != 0)
        return -ENOMEM;
    const json_t *sb = json_object_get(x->base->root, "settings");
    const json_t *sc = json_object_get(x->cand->root, "settings");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *vb = json_object_get(sb, keys[i]), *vc = json_object_get(sc, keys[i]);
        bool interleave = strcmp(keys[i], "interleave") == 0;
        if (interleave && vb == NULL)
            vb = json_false();
        if (interleave && vc == NULL)
            vc = json_false();
        bool settle = strcmp(keys[i], "settle_s") == 0;
        if (settle && vb == NULL)
            vb = zero;
        if (settle && vc == NULL)
            vc = zero;
        bool same = vb != NULL && vc != NULL &&
                    (json_equal(vb, vc) || (json_is_number(vb) && json_is_number(vc) &&
                                            json_number_value(vb) == json_number_value(vc)));
        if (!same && (vb != NULL || vc != NULL) &&
            push_diff(&c->settings, &c->nsettings, keys[i], vb, vc) != 0) {
            json_decref(zero);
            return -ENOMEM;
        }
    }
    json_decref(zero);
    return strict_fail(c->settings, c->nsettings, c->opts.strict_env, "the run settings differ",
                       err, err_len);
}

/* ==== The comparison ========================================================================= */

/* Frees n names and the array that holds them. */
static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void free_diffs(pkb_compare_env_diff *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(d[i].key);
        free(d[i].base);
        free(d[i].cand);
    }
    free(d);
}

void pkb_compare_free(pkb_compare *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->nrows; i++) {
        free(c->rows[i].name);
        free(c->rows[i].base_name);
    }
    free(c->rows);
    free_names(c->only_base, c->nonly_base);
    free_names(c->only_cand, c->nonly_cand);
    free_names(c->absent, c->nabsent);
    for (size_t i = 0; i < c->nskipped; i++) {
        free(c->skipped[i].name);
        free(c->skipped[i].why);
    }
    free(c->skipped);
    free_diffs(c->env, c->nenv);
    free_diffs(c->settings, c->nsettings);
    free(c->base_path);
    free(c->cand_path);
    free(c->ab_base);
    free(c->ab_head);
    free(c->ab_stopped);
    pkb_drift_free(&c->drift);
    memset(c, 0, sizeof *c);
}

/* Two files of different suites have no series in common worth matching: their names may even
 * coincide (a scenario of one, a phase of the other) and mean different things. The scenarios
 * suite was called "compare" in older files. */
static int check_same_suite(const pkb_results *b,
                            const pkb_results *n,
                            const char *base_path,
                            const char *cand_path,
                            char *err,
                            size_t err_len)
{
    const char *bs = strcmp(b->suite, "compare") == 0 ? "scenarios" : b->suite;
    const char *ns = strcmp(n->suite, "compare") == 0 ? "scenarios" : n->suite;
    if (strcmp(bs, ns) == 0)
        return 0;
    return pkb_fail(err, err_len, -EINVAL,
                    "%s is a results file of the %.60s suite and %s of the %.60s suite: compare "
                    "matches the series of two runs of one suite",
                    base_path, b->suite, cand_path, n->suite);
}

/* Why no series could be compared: -ENODATA with the reason. */
static int nothing_to_compare(const pkb_compare *c, bool contenders, char *err, size_t err_len)
{
    if (c->opts.filter != NULL)
        return pkb_fail(err, err_len, -ENODATA,
                        "no series matching --filter '%.100s' can be compared", c->opts.filter);
    if (c->nskipped > 0)
        return pkb_fail(err, err_len, -ENODATA,
                        "no series can be compared: %zu not measured in both", c->nskipped);
    return pkb_fail(err, err_len, -ENODATA, "no series can be compared: %s",
                    contenders ? "the file has no other contender" : "none in common");
}

int pkb_compare_files(const char *base_path,
                      const char *cand_path,
                      const pkb_compare_options *opts,
                      pkb_compare *out,
                      char *err,
                      size_t err_len)
{
    pkb_compare c = {0};
    int rc = resolve_options(opts, &c.opts, err, err_len);
    if (rc != 0)
        return rc;
    bool contenders = c.opts.baseline_contender != NULL;
    if (base_path == NULL || (cand_path == NULL) != contenders)
        return pkb_fail(err, err_len, -EINVAL,
                        contenders ? "--baseline-contender compares the contenders of one file"
                                   : "compare needs two results files, BASE and NEW");
    struct ctx x = {.c = &c};
    if (c.opts.filter != NULL) {
        if (regcomp(&x.re, c.opts.filter, REG_EXTENDED | REG_NOSUB) != 0)
            return pkb_fail(err, err_len, -EINVAL,
                            "--filter: '%.100s' is not a valid extended regular expression",
                            c.opts.filter);
        x.have_re = true;
    }
    pkb_results rb = {0}, rn = {0};
    bool have_b = false, have_n = false;
    rc = pkb_results_load(base_path, &rb, err, err_len);
    have_b = rc == 0;
    if (rc == 0 && !contenders) {
        rc = pkb_results_load(cand_path, &rn, err, err_len);
        have_n = rc == 0;
    }
    if (rc == 0 && !contenders)
        rc = check_same_suite(&rb, &rn, base_path, cand_path, err, err_len);
    x.base = &rb;
    x.cand = contenders ? &rb : &rn;
    c.base_path = xstrdup(base_path);
    c.cand_path = contenders ? NULL : xstrdup(cand_path);
    if (rc == 0 && (c.base_path == NULL || (!contenders && c.cand_path == NULL)))
        rc = pkb_fail(err, err_len, -ENOMEM, "out of memory");
    if (rc == 0)
        rc = pkb_noise_floor_read(&rb, base_path, &x.floor, err, err_len);
    c.noise_floor_known = x.floor.series != NULL;
    c.noise_floor_alpha = c.noise_floor_known ? x.floor.alpha : 0;
    if (rc == 0 && !contenders)
        rc = check_env(&x, err, err_len);
    if (rc == 0 && !contenders)
        rc = check_settings(&x, err, err_len);
    if (rc == 0)
        rc = contenders ? match_contenders(&x, base_path, err, err_len) : match_files(&x);
    if (rc == 0 && c.nrows == 0)
        rc = nothing_to_compare(&c, contenders, err, err_len);
    if (rc == 0)
        rc = decide_rows(&x, err, err_len);
    if (rc == -ENOMEM)
        pkb_fail(err, err_len, rc, "out of memory");
    else if (rc == -EINVAL && err != NULL && err[0] == '\0')
        pkb_fail(err, err_len, rc, "the statistics could not be computed");
    if (rc == 0) {
        pkb__compare_tally(&c);
        *out = c;
    } else {
        pkb_compare_free(&c);
    }
    if (x.have_re)
        regfree(&x.re);
    free(x.row_base);
    free(x.row_cand);
    if (have_b)
        pkb_results_free(&rb);
    if (have_n)
        pkb_results_free(&rn);
    return rc;
}

/* What a loaded base file must satisfy beyond the loader's checks: a well-formed noise floor. */
static int check_loaded(pkb_results *r, const char *path, char *err, size_t err_len)
{
    pkb_noise_floor f;
    int rc = pkb_noise_floor_read(r, path, &f, err, err_len);
    pkb_results_free(r);
    return rc;
}

int pkb_compare_check_file(const char *path, char *err, size_t err_len)
{
    pkb_results r;
    int rc = pkb_results_load(path, &r, err, err_len);
    return rc != 0 ? rc : check_loaded(&r, path, err, err_len);
}

int pkb_compare_check_buffer(
    const char *path, const char *data, size_t len, char *err, size_t err_len)
{
    pkb_results r;
    int rc = pkb_results_load_buffer(path, data, len, &r, err, err_len);
    return rc != 0 ? rc : check_loaded(&r, path, err, err_len);
}
