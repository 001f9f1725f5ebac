/*
 * ab — the sequential rule of `pkbench ab` over a results file's pairs (ab.h has the rule), the
 * file's "ab" object, and what the run asks after every block of rounds: whether to go on.
 *
 * Every look is replayed from the file each time, so the run and a later `pkbench compare FILE`
 * cannot disagree: a look's verdicts use only the rounds it had (each sample's `round`), its
 * level comes from the recorded fractions, and the bootstrap is seeded per series as everywhere.
 */
#define _GNU_SOURCE
#include "regress/ab.h"

#include "common/cli.h"
#include "common/term.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pkb_ab_rule resolved(const pkb_ab_rule *in, size_t n)
{
    pkb_ab_rule r = in != NULL ? *in : (pkb_ab_rule){0};
    if (r.alpha == 0)
        r.alpha = PKS_DEFAULT_ALPHA;
    if (r.threshold == 0) /* negative: none, kept so that resolving twice keeps it */
        r.threshold = PKB_AB_THRESHOLD;
    if (r.cv_limit == 0)
        r.cv_limit = PKS_DEFAULT_CV_LIMIT;
    if (r.pairs == 0)
        r.pairs = n > 0 ? n : 1;
    if (r.iterations == 0)
        r.iterations = PKS_BOOTSTRAP_DEFAULT_ITERATIONS;
    if (r.seed == 0)
        r.seed = PKB_VERDICT_SEED;
    return r;
}

/* ==== Judging ================================================================================ */

/* The samples of s taken in rounds 1..upto, with their rounds; their count. */
static size_t upto_round(const pkb_results_series *s, int upto, double *x, int *rx)
{
    size_t k = 0;
    for (size_t i = 0; s->round != NULL && i < s->n; i++) {
        if (s->round[i] >= 1 && s->round[i] <= upto) {
            x[k] = s->samples[i];
            rx[k++] = s->round[i];
        }
    }
    return k;
}

/* Pair p at look `look` (`rounds` rounds, nominal level `level`). Returns 0 or an error. */
static int
judge_at(const pkb_ab_rule *rule, pkb_ab_pair *p, int look, int rounds, double level, bool final)
{
    size_t cap = (p->base->n > p->head->n ? p->base->n : p->head->n) + 1;
    double *xb = malloc(2 * cap * sizeof *xb);
    int *rb = malloc(2 * cap * sizeof *rb);
    if (xb == NULL || rb == NULL) {
        free(xb);
        free(rb);
        return -ENOMEM;
    }
    double *xh = xb + cap;
    int *rh = rb + cap;
    size_t nb = upto_round(p->base, rounds, xb, rb), nh = upto_round(p->head, rounds, xh, rh);
    pkb_verdict v = {.name = p->name,
                     .base = xb,
                     .nbase = nb,
                     .cand = xh,
                     .ncand = nh,
                     .base_round = rb,
                     .cand_round = rh};
    /* Nothing spent at a look (its boundary infinite): no p is small enough, no CI narrow. */
    pkb_verdict_options o = {.alpha = level > 0 ? level : 1e-300,
                             .threshold = rule->threshold,
                             .cv_limit = rule->cv_limit,
                             .iterations = rule->iterations,
                             .seed = rule->seed,
                             .level = fmin(1 - level, 1 - 1e-9)};
    int rc = nb > 0 && nh > 0 ? pkb_verdict_family(&v, 1, &o) : 0;
    v.base = v.cand = NULL; /* the samples are this call's */
    v.base_round = v.cand_round = NULL;
    free(xb);
    free(rb);
    if (rc != 0 || !v.paired)
        return rc; /* too few rounds in common: it waits */
    bool beyond = v.d.verdict == PKS_REGRESSED || v.d.verdict == PKS_IMPROVED;
    bool within = rule->threshold > 0 && v.s.ratio.lo > 1 - rule->threshold &&
                  v.s.ratio.hi < 1 + rule->threshold;
    p->v = v;
    p->look = look;
    p->level = level;
    p->final = final;
    if (beyond || within) {
        p->decided = true;
        p->unchanged = !beyond;
        if (!beyond)
            p->v.d = (pks_decision){.verdict = PKS_NO_CHANGE, .bar = v.d.bar};
    }
    return 0;
}

int pkb_ab_judge(
    const pkb_ab_rule *in, const pkb_ab_look *looks, size_t nlooks, pkb_ab_pair *pairs, size_t n)
{
    pkb_ab_rule rule = resolved(in, n);
    for (size_t i = 0; i < n; i++) {
        pairs[i].look = -1;
        pairs[i].decided = pairs[i].unchanged = pairs[i].final = false;
        pairs[i].level = 0;
        memset(&pairs[i].v, 0, sizeof pairs[i].v);
        pairs[i].v.d.verdict = PKS_UNDECIDABLE;
        pairs[i].v.d.reason = PKS_TOO_FEW_SAMPLES;
    }
    pks_seq plan;
    int rc = pks_seq_init(&plan, rule.alpha / (double)rule.pairs);
    for (size_t k = 0; rc == 0 && k < nlooks; k++) {
        double level;
        rc = pks_seq_look(&plan, looks[k].rounds, looks[k].t, looks[k].final, &level);
        for (size_t i = 0; rc == 0 && i < n; i++)
            if (!pairs[i].decided)
                rc = judge_at(&rule, &pairs[i], (int)k, looks[k].rounds, level, looks[k].final);
    }
    pks_seq_free(&plan);
    return rc;
}

/* ==== The file's "ab" object ================================================================= */

static int bad(char *err, size_t err_len, const char *path, const char *what)
{
    return pkb_fail(err, err_len, -EBADMSG, "%s: ab.%s", path, what);
}

static const char *side_words(const json_t *side, bool *dirty)
{
    *dirty = json_is_true(json_object_get(side, "dirty"));
    const json_t *d = json_object_get(side, "describe");
    return json_is_string(d) ? json_string_value(d) : "?";
}

static int
read_rule(const json_t *rule, pkb_ab_info *info, const char *path, char *err, size_t err_len)
{
    const json_t *alpha = json_object_get(rule, "alpha"), *thr = json_object_get(rule, "threshold");
    const json_t *cv = json_object_get(rule, "cv_limit"), *m = json_object_get(rule, "pairs");
    if (!json_is_object(rule) || !json_is_number(alpha) || !json_is_number(thr) ||
        !json_is_number(cv) || !json_is_integer(m))
        return bad(err, err_len, path, "rule needs alpha, threshold, cv_limit and pairs");
    double a = json_number_value(alpha), t = json_number_value(thr), c = json_number_value(cv);
    json_int_t pairs = json_integer_value(m);
    if (!(a > 0 && a < 1) || !(t >= 0 && t < 10) || !(c > 0 || c == -1) || pairs < 0 ||
        pairs > 100000)
        return bad(err, err_len, path, "rule holds a value out of range");
    info->rule = (pkb_ab_rule){
        .alpha = a, .threshold = t > 0 ? t : -1, .cv_limit = c, .pairs = (size_t)pairs};
    return 0;
}

int pkb_ab_read(
    const pkb_results *r, const char *path, pkb_ab_info *info, char *err, size_t err_len)
{
    *info = (pkb_ab_info){0};
    const json_t *ab;
    int rc = pkb_results_section(r, path, "ab", &ab, err, err_len);
    if (rc != 0 || ab == NULL)
        return rc;
    info->present = true;
    info->base = side_words(json_object_get(ab, "base"), &info->base_dirty);
    info->head = side_words(json_object_get(ab, "head"), &info->head_dirty);
    rc = read_rule(json_object_get(ab, "rule"), info, path, err, err_len);
    if (rc != 0)
        return rc;
    const json_t *looks = json_object_get(ab, "looks"), *stopped = json_object_get(ab, "stopped");
    const json_t *max = json_object_get(ab, "max_time_s");
    info->stopped = json_is_string(stopped) ? json_string_value(stopped)
                    : json_is_true(json_object_get(r->root, "interrupted")) ? "interrupted"
                                                                            : NULL;
    info->max_time_s = json_is_number(max) ? json_number_value(max) : 0;
    if (!json_is_array(looks) || json_array_size(looks) > PKS_SEQ_MAX_LOOKS)
        return bad(err, err_len, path, "looks is not an array of at most 64 looks");
    size_t i;
    const json_t *l;
    json_array_foreach(looks, i, l)
    {
        const json_t *rounds = json_object_get(l, "rounds"), *t = json_object_get(l, "t");
        const json_t *final = json_object_get(l, "final");
        json_int_t n = json_integer_value(rounds);
        double tv = json_number_value(t);
        int prev = i > 0 ? info->looks[i - 1].rounds : 0;
        if (!json_is_integer(rounds) || !json_is_number(t) || !json_is_boolean(final) ||
            n <= prev || n > PKB_RESULTS_MAX_ROUND || !(tv > 0 && tv <= 1) ||
            (i > 0 && info->looks[i - 1].final))
            return pkb_fail(err, err_len, -EBADMSG,
                            "%s: ab.looks[%zu] needs rounds (more than the look before), t in "
                            "(0, 1] and final (only the last look is final)",
                            path, i);
        info->looks[i] = (pkb_ab_look){.rounds = (int)n, .t = tv, .final = json_is_true(final)};
    }
    info->nlooks = json_array_size(looks);
    return 0;
}

/* ==== The run ================================================================================ */

json_t *pkb_ab_side_json(const pkb_ab_side *s)
{
    return json_pack("{s:s, s:s, s:s, s:b, s:b, s:s, s:s, s:f}", "spec", s->spec, "commit",
                     s->commit, "describe", s->describe[0] ? s->describe : s->spec, "dirty",
                     s->dirty, "prebuilt", s->prebuilt, "key", s->key, "worker", s->worker,
                     "build_s", s->build_s);
}

int pkb_ab_session_begin(pkb_ab_session *s,
                         const pkb_ab_side *base,
                         const pkb_ab_side *head,
                         const pkb_ab_rule *rule,
                         double max_time_s,
                         bool quiet)
{
    *s = (pkb_ab_session){.rule = resolved(rule, 0), .max_time_s = max_time_s, .quiet = quiet};
    s->rule.pairs = 0; /* known at the first look */
    s->section = json_pack(
        "{s:o, s:o, s:{s:f, s:f, s:f, s:i, s:s, s:s}, s:f, s:i, s:[], s:n}", "base",
        pkb_ab_side_json(base), "head", pkb_ab_side_json(head), "rule", "alpha", s->rule.alpha,
        "threshold", 0.0, "cv_limit", s->rule.cv_limit, "pairs", 0, "spending",
        "Lan-DeMets O'Brien-Fleming-type, alpha/pairs per series (Bonferroni)", "test",
        "Wilcoxon signed-rank on the per-round log ratios; unchanged when the CI at the look's "
        "level lies within the threshold",
        "max_time_s", max_time_s, "first_block", PKB_AB_FIRST_BLOCK, "looks", "stopped");
    json_object_set_new(json_object_get(s->section, "rule"), "threshold",
                        json_real(fmax(0, s->rule.threshold)));
    s->start_s = now_s();
    return s->section != NULL ? 0 : -ENOMEM;
}

void pkb_ab_session_free(pkb_ab_session *s)
{
    json_decref(s->section);
    s->section = NULL;
}

/* The pairs of a file: every base-side series with the head side of its scenario and contender;
 * names "scenario/contender" in names[] (cap each 160). Indexes into r->series in ib/ih. */
static size_t
pairs_of(const pkb_results *r, pkb_ab_pair *pairs, char (*names)[160], size_t *ib, size_t *ih)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *b = &r->series[i];
        if (b->side == NULL || strcmp(b->side, "base") != 0 || !b->measured)
            continue;
        for (size_t j = 0; j < r->nseries; j++) {
            const pkb_results_series *h = &r->series[j];
            if (h->side == NULL || strcmp(h->side, "head") != 0 || !h->measured ||
                strcmp(h->scenario, b->scenario) != 0 || strcmp(h->contender, b->contender) != 0)
                continue;
            snprintf(names[n], 160, "%s/%s", b->scenario, b->contender);
            pairs[n] = (pkb_ab_pair){.name = names[n], .base = b, .head = h};
            ib[n] = i;
            ih[n] = j;
            n++;
            break;
        }
    }
    return n;
}

/* The look's fraction and whether it is the last: the rounds the rest of the budget allows at
 * the pace of the last block, and the block after it. */
static void
plan_next(pkb_ab_session *s, int rounds, double round_s, double *t, bool *final, int *block)
{
    double left_s = s->max_time_s - (now_s() - s->start_s);
    double fit = round_s > 0 ? floor(left_s / round_s) : 0;
    int left = fit > PKB_MAX_REPETITIONS - rounds ? PKB_MAX_REPETITIONS - rounds
               : fit > 0                          ? (int)fit
                                                  : 0;
    int total = rounds + left;
    int b = (total + PKB_AB_LOOKS - 1) / PKB_AB_LOOKS;
    b = b < 3 ? 3 : b;
    *final = left < 2 || s->looks + 1 >= PKS_SEQ_MAX_LOOKS;
    *t = *final ? 1 : (double)rounds / total;
    *block = left - b < (b + 1) / 2 ? left : b; /* a short remainder joins this block */
}

/* "look 3 after 30 rounds (1m12s): 4 of 6 decided (spawn_only/processkit regressed +3.1%, ...);
 * 2 open; 10 more rounds". */
static void
say_look(const pkb_ab_session *s, int rounds, const pkb_ab_pair *p, size_t n, bool final, int more)
{
    if (s->quiet)
        return;
    char el[32];
    pkb_fmt_duration(el, sizeof el, now_s() - s->start_s);
    size_t decided = 0;
    for (size_t i = 0; i < n; i++)
        decided += p[i].decided;
    fprintf(stderr, "pkbench: look %d after %d rounds (%s): %zu of %zu decided", s->looks, rounds,
            el, decided, n);
    const char *sep = " (";
    for (size_t i = 0; i < n; i++) {
        if (!p[i].decided || p[i].unchanged)
            continue;
        fprintf(stderr, "%s%s %s %+.1f%%", sep, p[i].name, pks_verdict_name(p[i].v.d.verdict),
                100 * p[i].v.s.delta);
        sep = ", ";
    }
    fprintf(stderr, "%s", sep[0] == ',' ? ")" : "");
    if (final)
        fprintf(stderr, "; the budget is spent: the last look\n");
    else if (decided == n)
        fprintf(stderr, "; done\n");
    else
        fprintf(stderr, "; %zu open, %d more rounds\n", n - decided, more);
}

int pkb_ab_after_block(pkb_ab_session *s,
                       const char *path,
                       int rounds,
                       double round_s,
                       size_t n,
                       bool *retire,
                       int *more)
{
    *more = 0;
    char err[512] = "";
    pkb_results r;
    int rc = pkb_results_load(path, &r, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "pkbench: ab: %s\n", err);
        return rc;
    }
    size_t cap = r.nseries + 1, np;
    pkb_ab_pair *pairs = calloc(cap, sizeof *pairs);
    char(*names)[160] = calloc(cap, sizeof *names);
    size_t *ib = calloc(cap, sizeof *ib), *ih = calloc(cap, sizeof *ih);
    rc = pairs && names && ib && ih ? 0 : -ENOMEM;
    np = rc == 0 ? pairs_of(&r, pairs, names, ib, ih) : 0;
    json_t *rule = json_object_get(s->section, "rule");
    if (rc == 0 && s->rule.pairs == 0) { /* the family: the pairs the first look found */
        s->rule.pairs = np > 0 ? np : 1;
        json_object_set_new(rule, "pairs", json_integer((json_int_t)s->rule.pairs));
    }
    double t;
    bool final;
    int block;
    plan_next(s, rounds, round_s, &t, &final, &block);
    json_t *looks = json_object_get(s->section, "looks");
    if (rc == 0)
        rc = json_array_append_new(looks, json_pack("{s:i, s:f, s:b, s:f}", "rounds", rounds, "t",
                                                    t, "final", final, "elapsed_s",
                                                    now_s() - s->start_s)) == 0
                 ? 0
                 : -ENOMEM;
    s->looks++;
    pkb_ab_info info;
    json_t *root = json_pack("{s:O}", "ab", s->section); /* the looks as the file will say */
    if (rc == 0)
        rc = root != NULL ? pkb_ab_read(&(pkb_results){.root = root}, path, &info, err, sizeof err)
                          : -ENOMEM;
    if (rc == 0)
        rc = pkb_ab_judge(&s->rule, info.looks, info.nlooks, pairs, np);
    size_t open = 0;
    for (size_t i = 0; rc == 0 && i < np; i++) {
        retire[ib[i]] = retire[ih[i]] = pairs[i].decided && ib[i] < n && ih[i] < n;
        open += !pairs[i].decided;
    }
    if (rc == 0) {
        s->done = final || open == 0;
        *more = s->done ? 0 : block;
        if (s->done) /* the runner's next write is the last: it says why the run stopped */
            json_object_set_new(s->section, "stopped", json_string(final ? "budget" : "decided"));
        say_look(s, rounds, pairs, np, final, *more);
    } else if (err[0] == '\0') {
        fprintf(stderr, "pkbench: ab: the look failed: %s\n", strerror(-rc));
    } else {
        fprintf(stderr, "pkbench: ab: %s\n", err);
    }
    json_decref(root);
    free(pairs);
    free(names);
    free(ib);
    free(ih);
    pkb_results_free(&r);
    return rc;
}

/* ==== pkbench compare FILE =================================================================== */

/* The options of a comparison of an ab file: the file's rule where the caller left a default. */
static pkb_compare_options ab_options(const pkb_compare_options *in, const pkb_ab_info *info)
{
    pkb_compare_options o = in != NULL ? *in : (pkb_compare_options){0};
    if (o.alpha == 0)
        o.alpha = info->rule.alpha;
    if (o.threshold == 0)
        o.threshold = info->rule.threshold;
    if (o.cv_limit == 0)
        o.cv_limit = info->rule.cv_limit;
    if (o.iterations == 0)
        o.iterations = PKS_BOOTSTRAP_DEFAULT_ITERATIONS;
    if (o.seed == 0)
        o.seed = PKB_VERDICT_SEED;
    if (o.env_keys == NULL) /* one run: no environments to tell apart, no drift between them */
        o.env_keys = "";
    if (o.drift_limit == 0)
        o.drift_limit = PKB_DRIFT_DEFAULT_LIMIT;
    return o;
}

static int push_note(pkb_compare *c,
                     const char *name,
                     pkb_compare_note_kind kind,
                     const pkb_results_series *s,
                     const char *side)
{
    pkb_compare_note *bigger = realloc(c->skipped, (c->nskipped + 1) * sizeof *bigger);
    if (bigger == NULL)
        return -ENOMEM;
    c->skipped = bigger;
    const char *what = s->n == 0 && s->measured ? "no samples" : s->status;
    const char *reason = s->reason != NULL ? s->reason : "";
    size_t len = strlen(what) + strlen(side) + strlen(reason) + 8;
    char *why = malloc(len);
    if (why == NULL)
        return -ENOMEM;
    snprintf(why, len, "%s in %s%s%s", what, side, reason[0] ? ": " : "", reason);
    bigger[c->nskipped++] = (pkb_compare_note){.name = strdup(name), .why = why, .kind = kind};
    c->missing += kind == PKB_NOTE_MISSING;
    c->environmental += kind == PKB_NOTE_ENVIRONMENT;
    return bigger[c->nskipped - 1].name != NULL ? 0 : -ENOMEM;
}

/* The rows' pairs: every selected base side with its head; what cannot pair, a note. */
static int ab_pairs(const pkb_results *r,
                    const regex_t *re,
                    pkb_compare *c,
                    pkb_ab_pair *pairs,
                    char (*names)[160],
                    size_t *np)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->nseries; i++) {
        const pkb_results_series *b = &r->series[i], *h = NULL;
        if (b->side == NULL || strcmp(b->side, "base") != 0)
            continue;
        snprintf(names[*np], 160, "%s/%s", b->scenario, b->contender);
        if (re != NULL && regexec(re, names[*np], 0, NULL, 0) != 0)
            continue;
        for (size_t j = 0; j < r->nseries && h == NULL; j++)
            if (r->series[j].side != NULL && strcmp(r->series[j].side, "head") == 0 &&
                strcmp(r->series[j].scenario, b->scenario) == 0 &&
                strcmp(r->series[j].contender, b->contender) == 0)
                h = &r->series[j];
        if (h == NULL) {
            char **bigger = realloc(c->only_base, (c->nonly_base + 1) * sizeof *bigger);
            rc = bigger != NULL && (bigger[c->nonly_base] = strdup(names[*np])) != NULL ? 0
                                                                                        : -ENOMEM;
            if (bigger != NULL)
                c->only_base = bigger;
            c->nonly_base += rc == 0;
        } else if (!b->measured) {
            rc = push_note(c, names[*np], PKB_NOTE_INFO, b, "base");
        } else if (!h->measured) { /* the base side ran: the head side's failure fails the gate */
            rc = push_note(c, names[*np],
                           h->environmental && strcmp(h->status, "measured") != 0
                               ? PKB_NOTE_ENVIRONMENT
                               : PKB_NOTE_MISSING,
                           h, "head");
        } else {
            pairs[*np] = (pkb_ab_pair){.name = names[*np], .base = b, .head = h};
            (*np)++;
        }
    }
    return rc;
}

/* A compare row of a judged pair: its look's statistics and verdict. */
static pkb_compare_row ab_row(const pkb_ab_pair *p)
{
    pkb_compare_row row = {.name = strdup(p->name),
                           .base_name = strdup(p->base->name),
                           .ab_look = p->look,
                           .ab_rounds = p->v.paired ? (int)p->v.pair.n : 0,
                           .ab_level = p->level,
                           .ab_ci_level = p->v.level,
                           .ab_decided = p->decided,
                           .ab_unchanged = p->unchanged,
                           .ab_final = p->final,
                           .ab_open = !p->decided && !p->final};
    pkb_verdict st = p->v; /* its samples were judge_at's, already NULL */
    st.p_holm = p->v.paired ? p->v.pair.test.p : 1;
    if (row.ab_open) /* the run stopped before its last look: no verdict either way */
        st.d = (pks_decision){.verdict = PKS_UNDECIDABLE, .bar = p->v.d.bar};
    if (!p->v.paired) /* never had rounds enough: sizes stand in for the statistics */
        st.s.base.n = p->base->n, st.s.cand.n = p->head->n;
    pkb__compare_set_stats(&row, &st);
    row.raw = (pkb_verdict){.s = st.s, .p_holm = st.p_holm, .d = st.d};
    return row;
}

static int ab_fill(pkb_compare *c, const pkb_results *r, const pkb_ab_info *info, const regex_t *re)
{
    size_t cap = r->nseries + 1, np = 0;
    pkb_ab_pair *pairs = calloc(cap, sizeof *pairs);
    char(*names)[160] = calloc(cap, sizeof *names);
    c->rows = calloc(cap, sizeof *c->rows);
    int rc = pairs != NULL && names != NULL && c->rows != NULL ? 0 : -ENOMEM;
    if (rc == 0)
        rc = ab_pairs(r, re, c, pairs, names, &np);
    pkb_ab_rule rule = info->rule;
    rule.alpha = c->opts.alpha;
    rule.threshold = c->opts.threshold;
    rule.cv_limit = c->opts.cv_limit;
    rule.iterations = c->opts.iterations;
    rule.seed = c->opts.seed;
    if (rc == 0)
        rc = pkb_ab_judge(&rule, info->looks, info->nlooks, pairs, np);
    for (size_t i = 0; rc == 0 && i < np; i++) {
        c->rows[c->nrows] = ab_row(&pairs[i]);
        rc = c->rows[c->nrows].name != NULL && c->rows[c->nrows].base_name != NULL ? 0 : -ENOMEM;
        c->nrows++;
    }
    free(pairs);
    free(names);
    return rc;
}

int pkb_ab_compare(
    const char *path, const pkb_compare_options *opts, pkb_compare *out, char *err, size_t err_len)
{
    pkb_results r;
    int rc = pkb_results_load(path, &r, err, err_len);
    if (rc != 0)
        return rc;
    pkb_ab_info info;
    rc = pkb_ab_read(&r, path, &info, err, err_len);
    if (rc == 0 && !info.present)
        rc = pkb_fail(err, err_len, -EINVAL,
                      "compare needs BASE.json and NEW.json, or --baseline-contender NAME (%s is "
                      "no file of pkbench ab)",
                      path);
    regex_t re;
    bool have_re = false;
    pkb_compare c = {.sides = true};
    c.opts = ab_options(opts, &info);
    if (rc == 0 && c.opts.filter != NULL) {
        have_re = regcomp(&re, c.opts.filter, REG_EXTENDED | REG_NOSUB) == 0;
        if (!have_re)
            rc = pkb_fail(err, err_len, -EINVAL,
                          "--filter: '%.100s' is not a valid extended regular expression",
                          c.opts.filter);
    }
    if (rc == 0) {
        c.base_path = strdup(path);
        c.ab_base = strdup(info.base);
        c.ab_head = strdup(info.head);
        c.ab_stopped = info.stopped != NULL ? strdup(info.stopped) : NULL;
        c.ab_base_dirty = info.base_dirty;
        c.ab_head_dirty = info.head_dirty;
        c.ab_looks = info.nlooks;
        c.ab_pairs = info.rule.pairs;
        c.ab_rounds = info.nlooks > 0 ? info.looks[info.nlooks - 1].rounds : 0;
        c.ab_max_time_s = info.max_time_s;
        rc = c.base_path && c.ab_base && c.ab_head ? 0 : -ENOMEM;
        if (rc == 0)
            rc = ab_fill(&c, &r, &info, have_re ? &re : NULL);
        if (rc == -ENOMEM)
            pkb_fail(err, err_len, rc, "out of memory");
        else if (rc != 0)
            pkb_fail(err, err_len, rc, "%s: the statistics could not be computed", path);
    }
    if (rc == 0 && c.nrows == 0 && c.missing == 0 && c.environmental == 0)
        rc = pkb_fail(err, err_len, -ENODATA,
                      "%s: no series measured on both sides to compare%s%.100s%s%.100s%s%.200s%s",
                      path, c.opts.filter ? " matching --filter " : "",
                      c.opts.filter ? c.opts.filter : "", c.nskipped > 0 ? " (" : "",
                      c.nskipped > 0 ? c.skipped[0].name : "", c.nskipped > 0 ? ": " : "",
                      c.nskipped > 0 ? c.skipped[0].why : "", c.nskipped > 0 ? ")" : "");
    if (have_re)
        regfree(&re);
    pkb_results_free(&r);
    if (rc != 0) {
        pkb_compare_free(&c);
        return rc;
    }
    pkb__compare_tally(&c);
    *out = c;
    return 0;
}
