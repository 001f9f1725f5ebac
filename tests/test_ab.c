/*
 * pkbench ab's statistics (harness/common/sequential.h, harness/regress/ab.h) and the rule that
 * a decisive result is decided (harness/common/stats.h's pks_decide): the group-sequential
 * boundaries against scipy, the false alarms of an A/A run looked at block after block (with
 * the rule: at most alpha; looking naively: several times alpha), the looks of an ab file
 * replayed as the run took them, and a regression whose whole CI clears the bar no longer
 * called undecidable for the noise of its samples. The end-to-end runs are in test_ab_run.c.
 */
#include "test.h"

#include "common/paired.h"
#include "common/sequential.h"
#include "common/stats.h"
#include "regress/ab.h"
#include "regress/compare.h"
#include "synth.h"
#include "verdict_test.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The boundaries of a plan looked at t[0..k), the last one final. */
static void plan(pks_seq *s, const double *t, size_t k, double alpha, double scale)
{
    ASSERT_OK(pks_seq_init(s, alpha));
    for (size_t i = 0; i < k; i++) {
        double nominal;
        ASSERT_OK(pks_seq_look(s, t[i] * scale, t[i], i + 1 == k, &nominal));
        ASSERT(nominal == s->nominal[i]);
    }
}

TEST_IMPL(sequential_boundaries_match_reference)
{
    /* The reference: scipy 1.10.1 (/usr/bin/python3), each boundary solved with brentq so that
     * P(no |Z_j| ≥ z_j, j ≤ k) = 1 − alpha(t_k) under the looks' correlation √(t_i / t_j),
     * the probability from scipy.stats.multivariate_normal.cdf (Genz, abseps 1e-8):
     *   def spend(a, t): return a if t >= 1 else 2 - 2 * norm.cdf(norm.ppf(1 - a/2) / sqrt(t))
     *   t = [.2,.4,.6,.8,1], alpha .05  -> 4.38261, 3.09973, 2.55335, 2.25385, 2.06350
     *   t = [.3,.7,1],       alpha .05  -> 3.57839, 2.34544, 2.02381
     *   t = [.25,.5,1],      alpha .01  -> 5.15166, 3.64288, 2.57967 */
    static const double t5[] = {.2, .4, .6, .8, 1},
                        z5[] = {4.38261, 3.09973, 2.55335, 2.25385, 2.06350};
    static const double t3[] = {.3, .7, 1}, z3[] = {3.57839, 2.34544, 2.02381};
    static const double t3b[] = {.25, .5, 1}, z3b[] = {5.15166, 3.64288, 2.57967};
    struct {
        const double *t, *z;
        size_t k;
        double alpha;
    } cases[] = {{t5, z5, 5, 0.05}, {t3, z3, 3, 0.05}, {t3b, z3b, 3, 0.01}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int scaled = 0; scaled < 2; scaled++) { /* information in any unit: rounds */
            pks_seq s;
            plan(&s, cases[c].t, cases[c].k, cases[c].alpha, scaled ? 137 : 1);
            for (size_t i = 0; i < cases[c].k; i++) {
                if (fabs(s.z[i] - cases[c].z[i]) > 2e-4)
                    pk_test_fail(__FILE__, __LINE__, "case %zu look %zu: z %.5f, scipy %.5f", c, i,
                                 s.z[i], cases[c].z[i]);
                ASSERT(i == 0 || s.nominal[i] > s.nominal[i - 1]); /* early looks stricter */
                ASSERT(fabs(s.spent[i] - pks_spend_obf(cases[c].alpha, cases[c].t[i])) < 1e-6);
            }
            ASSERT(fabs(s.spent[cases[c].k - 1] - cases[c].alpha) < 1e-9);
            pks_seq_free(&s);
        }
    }

    /* A maximum re-estimated on the way: a fraction that goes back spends nothing new, and the
     * last look still spends exactly what is left. */
    pks_seq s;
    ASSERT_OK(pks_seq_init(&s, 0.05));
    double n1, n2, n3, n4;
    ASSERT_OK(pks_seq_look(&s, 10, 0.5, false, &n1));
    ASSERT_OK(pks_seq_look(&s, 20, 0.4, false, &n2)); /* the budget allowed more than thought */
    ASSERT(s.spent[1] == s.spent[0] && n2 == 0);
    ASSERT_OK(pks_seq_look(&s, 20, 0.9, false, &n3)); /* no new rounds: nothing to spend */
    ASSERT(n3 == 0 && s.spent[2] == s.spent[1]);
    ASSERT_OK(pks_seq_look(&s, 40, 0.95, true, &n4));
    ASSERT(fabs(s.spent[3] - 0.05) < 1e-9 && n4 > n1);
    double after;
    ASSERT_OK(pks_seq_look(&s, 50, 1, true, &after)); /* after the last look: nothing */
    ASSERT(after == 0);
    pks_seq_free(&s);

    ASSERT_EQ(pks_seq_init(&s, 0), -EINVAL);
    ASSERT_EQ(pks_seq_init(&s, 1), -EINVAL);
    ASSERT_OK(pks_seq_init(&s, 0.05));
    ASSERT_EQ(pks_seq_look(&s, 0, 0.5, false, &n1), -EINVAL);
    ASSERT_EQ(pks_seq_look(&s, 10, NAN, false, &n1), -EINVAL);
    pks_seq_free(&s);
    ASSERT(fabs(pks_norm_isf(0.025) - 1.959963984540054) < 1e-12);
    ASSERT(fabs(pks_norm_isf(1e-10) - 6.361340902404056) < 1e-9);
    ASSERT(fabs(pks_norm_sf(pks_norm_isf(1e-30)) / 1e-30 - 1) < 1e-9);
}

/* One simulated A/A run of m series, looked at every `block` rounds up to `rounds`: whether any
 * series was called changed (p below the look's level; naive: below alpha/m at every look). The
 * per-round log ratios are what two identical builds give: symmetric about 0, a tenth of them
 * from a five times wider spread (a neighbour's burst in one side's sample). */
static bool aa_run(pks_rng *rng,
                   const pks_seq *s,
                   size_t m,
                   size_t rounds,
                   size_t block,
                   bool naive,
                   double alpha,
                   double *d,
                   double *work)
{
    for (size_t j = 0; j < m; j++)
        for (size_t i = 0; i < rounds; i++)
            d[j * rounds + i] = 0.03 * pks_rng_normal(rng) * (pks_rng_uniform(rng) < 0.1 ? 5 : 1);
    for (size_t k = 0; k < rounds / block; k++) {
        double level = naive ? alpha / (double)m : s->nominal[k];
        for (size_t j = 0; j < m; j++) {
            pks_wilcoxon w;
            ASSERT_OK(pks_wilcoxon_test(&d[j * rounds], (k + 1) * block, work, &w));
            if (w.p < level)
                return true;
        }
    }
    return false;
}

TEST_IMPL(sequential_aa_false_alarms_stay_below_alpha)
{
    /* 2000 A/A runs of 6 series, looked at after every block of 10 rounds up to 100 (ten looks),
     * as pkbench ab looks: the rule (alpha/6 per series, spent by Lan-DeMets' O'Brien-Fleming
     * function, the boundaries at every look's fraction) against a test at alpha/6 at every
     * look. ab calls a series regressed or improved only when p is below its look's level (and
     * |delta| above the bar, which only removes alarms; a series decided unchanged takes no
     * more looks, which removes more): these runs bound its false alarms from above. */
    enum { M = 6, ROUNDS = 100, BLOCK = 10, RUNS = 2000 };
    const double alpha = 0.05;
    pks_seq s;
    ASSERT_OK(pks_seq_init(&s, alpha / M));
    for (int k = 1; k <= ROUNDS / BLOCK; k++) {
        double nominal;
        ASSERT_OK(
            pks_seq_look(&s, k * BLOCK, (double)k * BLOCK / ROUNDS, k == ROUNDS / BLOCK, &nominal));
    }
    double *d = malloc(M * ROUNDS * sizeof *d),
           *work = malloc(pks_wilcoxon_work_size(ROUNDS) * sizeof *work);
    ASSERT(d != NULL && work != NULL);
    int alarms[2] = {0, 0};
    for (int naive = 0; naive < 2; naive++) {
        pks_rng rng;
        pks_rng_seed(&rng, 20261207);
        for (int r = 0; r < RUNS; r++)
            alarms[naive] += aa_run(&rng, &s, M, ROUNDS, BLOCK, naive, alpha, d, work);
    }
    free(d);
    free(work);
    pks_seq_free(&s);
    double rate = (double)alarms[0] / RUNS, naive = (double)alarms[1] / RUNS;
    printf("# A/A, %d runs of %d series x %d looks: %.1f%% with the sequential rule, %.1f%% "
           "testing every look at alpha/%d\n",
           RUNS, M, ROUNDS / BLOCK, 100 * rate, 100 * naive, M);
    if (!(rate <= alpha))
        pk_test_fail(__FILE__, __LINE__, "false alarms %.3f > alpha %.2f", rate, alpha);
    /* The simulation can tell: looking without the rule raises them well beyond alpha. */
    if (!(naive > 2 * alpha))
        pk_test_fail(__FILE__, __LINE__, "naive looks gave %.3f, not above 2 alpha", naive);
}

/* ==== an ab file, replayed ==================================================================== */

enum { ROUNDS = 40 };

/* base_i of pair k, and head_i as `shape` makes it from base_i and round i (1-based). */
typedef double (*shape_fn)(double base, int round, pks_rng *rng);

static double slow_then_not(double b, int round, pks_rng *rng)
{
    /* 30% slower in the first 20 rounds, the same after: a look that used rounds it did not
     * have would see no regression */
    return b * (round <= 20 ? 1.30 : 1.0) * (1 + 0.01 * pks_rng_normal(rng));
}

static double same(double b, int round, pks_rng *rng)
{
    (void)round;
    return b * (1 + 0.002 * pks_rng_normal(rng));
}

static double close_call(double b, int round, pks_rng *rng)
{
    (void)round;
    return b * 1.015 * (1 + 0.03 * pks_rng_normal(rng));
}

/* An ab results file: pairs "s/<name>" of ROUNDS rounds, the head side as each shape makes it
 * (a NULL shape: the head side failed), and the looks given (rounds, t, final). */
static void write_ab_file(const char *path,
                          const char *const *names,
                          const shape_fn *shapes,
                          size_t npairs,
                          const pkb_ab_look *looks,
                          size_t nlooks)
{
    pk_test_series ser[16];
    double samples[16][ROUNDS];
    char series_names[16][64];
    pks_rng rng;
    pks_rng_seed(&rng, 41);
    for (size_t k = 0; k < npairs; k++) {
        for (int side = 0; side < 2; side++) {
            size_t i = 2 * k + (size_t)side;
            snprintf(series_names[i], sizeof series_names[i], "s/%s [%s]", names[k],
                     side ? "head" : "base");
            for (int r = 0; r < ROUNDS; r++) {
                double level = 1e6 * (1 + 0.2 * sin(r * 0.7)); /* the machine drifts alike */
                samples[i][r] = side == 0           ? level * (1 + 0.01 * pks_rng_normal(&rng))
                                : shapes[k] != NULL ? shapes[k](samples[i - 1][r], r + 1, &rng)
                                                    : level;
            }
            ser[i] = (pk_test_series){.name = series_names[i],
                                      .samples = samples[i],
                                      .n = ROUNDS,
                                      .status = side == 1 && shapes[k] == NULL ? "failed" : NULL};
        }
    }
    json_t *doc = pk_test_results_doc(ser, 2 * npairs);
    json_t *arr = json_object_get(doc, "series");
    for (size_t i = 0; i < 2 * npairs; i++) {
        json_t *s = json_array_get(arr, i), *rounds = json_array();
        json_object_set_new(s, "contender", json_string(names[i / 2]));
        json_object_set_new(s, "side", json_string(i % 2 ? "head" : "base"));
        for (int r = 0; r < ROUNDS; r++)
            json_array_append_new(rounds, json_integer(r + 1));
        json_object_set_new(s, "round", rounds);
        if (i % 2 == 1 && shapes[i / 2] == NULL) {
            json_object_set_new(s, "samples_ns", json_array());
            json_object_set_new(s, "round", json_array());
            json_object_set_new(s, "reason", json_string("iteration failed: boom"));
        }
    }
    json_t *jl = json_array();
    for (size_t k = 0; k < nlooks; k++)
        json_array_append_new(jl, json_pack("{s:i, s:f, s:b}", "rounds", looks[k].rounds, "t",
                                            looks[k].t, "final", looks[k].final));
    json_object_set_new(doc, "ab",
                        json_pack("{s:{s:s, s:b}, s:{s:s, s:b}, s:{s:f, s:f, s:f, s:i}, s:o, s:n}",
                                  "base", "describe", "good (1111111)", "dirty", 0, "head",
                                  "describe", "bad (2222222)", "dirty", 1, "rule", "alpha", 0.05,
                                  "threshold", 0.02, "cv_limit", 0.10, "pairs", (int)npairs,
                                  "looks", jl, "stopped"));
    pk_test_write_doc(doc, path);
}

static const pkb_compare_row *row_named(const pkb_compare *c, const char *name)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (strcmp(c->rows[i].name, name) == 0)
            return &c->rows[i];
    pk_test_fail(__FILE__, __LINE__, "no row %s", name);
}

TEST_IMPL(ab_compare_replays_the_looks)
{
    char path[512];
    pk_test_tmp_path(path, sizeof path, "ab.json");
    const char *names[] = {"slow", "same", "close"};
    const shape_fn shapes[] = {slow_then_not, same, close_call};
    const pkb_ab_look two[] = {{20, 0.5, false}, {ROUNDS, 1, true}};
    write_ab_file(path, names, shapes, 3, two, 2);
    pkb_compare c;
    char err[512] = "";
    if (pkb_ab_compare(path, NULL, &c, err, sizeof err) != 0)
        pk_test_fail(__FILE__, __LINE__, "pkb_ab_compare: %s", err);
    ASSERT(c.sides && c.nrows == 3 && c.ab_looks == 2 && c.ab_pairs == 3);
    const pkb_compare_row *slow = row_named(&c, "s/slow"), *sm = row_named(&c, "s/same"),
                          *cl = row_named(&c, "s/close");
    /* Decided at the first look on its first 20 rounds: the 20 after it do not count. */
    ASSERT_EQ(slow->d.verdict, PKS_REGRESSED);
    ASSERT(slow->ab_decided && slow->ab_look == 0 && slow->ab_rounds == 20);
    ASSERT(slow->s.delta > 0.25 && slow->s.ratio.lo > 1.2);
    /* Its level: the first look's of a plan spending alpha/3 (three series), at t = 0.5. */
    pks_seq plan3;
    double level;
    ASSERT_OK(pks_seq_init(&plan3, 0.05 / 3));
    ASSERT_OK(pks_seq_look(&plan3, 20, 0.5, false, &level));
    pks_seq_free(&plan3);
    ASSERT(level > 0 && fabs(slow->ab_level - level) < 1e-15);
    /* The same build's CI lies within ±2%: unchanged, decided, at the first look. */
    ASSERT(sm->ab_decided && sm->ab_unchanged && sm->d.verdict == PKS_NO_CHANGE);
    ASSERT(sm->s.ratio.lo > 0.98 && sm->s.ratio.hi < 1.02 && sm->ab_look == 0);
    /* A close call stays open at the first look, and the last look gives it the usual verdict. */
    ASSERT(!cl->ab_decided && cl->ab_final && cl->ab_look == 1 && cl->ab_rounds == ROUNDS);
    ASSERT(cl->d.verdict != PKS_UNDECIDABLE && cl->d.verdict != PKS_IMPROVED);
    ASSERT_EQ(c.status, 2);
    ASSERT_EQ(c.regressed, 1);

    char *text;
    ASSERT_OK(pkb_compare_render(&c, PKB_COMPARE_TEXT, &text));
    ASSERT(strstr(text, "base: good (1111111)\nhead: bad (2222222) (uncommitted changes)") != NULL);
    ASSERT(strstr(text, "decided") != NULL && strstr(text, "unchanged") != NULL);
    ASSERT(strstr(text, "look 1, 20 rounds") != NULL);
    free(text);
    json_t *j = pkb_compare_json(&c);
    json_t *rows = json_object_get(j, "series");
    ASSERT(json_integer_value(json_object_get(json_object_get(j, "ab"), "looks")) == 2);
    ASSERT(json_integer_value(
               json_object_get(json_object_get(json_array_get(rows, 0), "ab"), "look")) == 1);
    json_decref(j);
    pkb_compare_free(&c);

    /* Stopped before its last look (interrupted): what is open has no verdict either way. */
    write_ab_file(path, names, shapes, 3, two, 1);
    ASSERT_OK(pkb_ab_compare(path, NULL, &c, err, sizeof err));
    cl = row_named(&c, "s/close");
    ASSERT(cl->ab_open && cl->d.verdict == PKS_UNDECIDABLE);
    ASSERT_EQ(c.status, 2); /* the regression still outranks it */
    pkb_compare_free(&c);
    ASSERT_OK(pkb_ab_compare(path, &(pkb_compare_options){.filter = "close"}, &c, err, sizeof err));
    ASSERT(c.nrows == 1 && c.status == 3);
    pkb_compare_free(&c);

    /* A head side that failed where its base ran fails the gate, as between two files. */
    const shape_fn broken[] = {same, NULL};
    write_ab_file(path, names + 1, broken, 2, two, 2);
    ASSERT_OK(pkb_ab_compare(path, NULL, &c, err, sizeof err));
    ASSERT(c.missing == 1 && c.status == 2 && c.nrows == 1);
    pkb_compare_free(&c);

    /* Not an ab file: said so. */
    write_ab_file(path, names, shapes, 1, two, 2);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    json_object_del(doc, "ab");
    pk_test_write_doc(doc, path);
    ASSERT_EQ(pkb_ab_compare(path, NULL, &c, err, sizeof err), -EINVAL);
    ASSERT(strstr(err, "needs BASE.json and NEW.json") != NULL);
    ASSERT(strstr(err, "no file of pkbench ab") != NULL);
}

TEST_IMPL(ab_looks_retire_the_decided_and_end_with_the_budget)
{
    char path[512];
    pk_test_tmp_path(path, sizeof path, "run.json");
    const char *names[] = {"slow", "same", "close"};
    const shape_fn shapes[] = {slow_then_not, same, close_call};
    write_ab_file(path, names, shapes, 3, NULL, 0);
    pkb_ab_side base = {.label = "base", .describe = "A"}, head = {.label = "head"};
    pkb_ab_session s;
    ASSERT_OK(pkb_ab_session_begin(&s, &base, &head, NULL, 100, true));
    /* 20 rounds after 9 s of a 100 s budget, 2 s a round: 45 more fit, so this look is
     * t = 20 / 65 of the run; the slowdown and the unchanged pair are decided, the close call
     * takes the next block, a tenth of the run. */
    s.start_s -= 9;
    bool retire[6] = {0};
    int more = -1;
    ASSERT_OK(pkb_ab_after_block(&s, path, 20, 2.0, 6, retire, &more));
    ASSERT(retire[0] && retire[1] && retire[2] && retire[3] && !retire[4] && !retire[5]);
    ASSERT_EQ(more, 7);
    json_t *looks = json_object_get(s.section, "looks");
    ASSERT_EQ(json_array_size(looks), 1);
    double t = json_number_value(json_object_get(json_array_get(looks, 0), "t"));
    ASSERT(fabs(t - 20.0 / 65) < 1e-9);
    ASSERT(!json_is_true(json_object_get(json_array_get(looks, 0), "final")));
    ASSERT(json_integer_value(json_object_get(json_object_get(s.section, "rule"), "pairs")) == 3);
    ASSERT(json_is_null(json_object_get(s.section, "stopped")));
    /* The budget spent: the last look (t = 1), nothing more, and the section says why. */
    s.start_s -= 90.5;
    memset(retire, 0, sizeof retire);
    ASSERT_OK(pkb_ab_after_block(&s, path, ROUNDS, 2.0, 6, retire, &more));
    ASSERT_EQ(more, 0);
    ASSERT(json_is_true(json_object_get(json_array_get(looks, 1), "final")));
    ASSERT_STR_EQ(json_string_value(json_object_get(s.section, "stopped")), "budget");
    pkb_ab_session_free(&s);

    /* Every pair decided: it stops before the budget, "decided". */
    const shape_fn two[] = {slow_then_not, same};
    write_ab_file(path, names, two, 2, NULL, 0);
    ASSERT_OK(pkb_ab_session_begin(&s, &base, &head, NULL, 100, true));
    s.start_s -= 10;
    ASSERT_OK(pkb_ab_after_block(&s, path, 20, 2.0, 4, retire, &more));
    ASSERT_EQ(more, 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(s.section, "stopped")), "decided");
    pkb_ab_session_free(&s);
}

TEST_IMPL(compare_decisive_ci_is_never_vetoed_by_noise)
{
    /* Issue 35's case: spawn_only/processkit made 1.5x slower in the second of two quick runs,
     * its base spread over two modes (robust cv about 14%): +47% [+34%, +57%], p < 0.001 was
     * "undecidable (too noisy: cv 13.5% in base > 10%)". Its whole CI clears the bar even widened
     * by that cv: regressed. */
    enum { N = 20 };
    double base[N], slow[N], near[N];
    pks_rng rng;
    pks_rng_seed(&rng, 35);
    for (int i = 0; i < N; i++) {
        base[i] = 300e3 * (i % 2 == 0 ? 1.2 : 1.0) * (1 + 0.03 * pks_rng_normal(&rng));
        slow[i] = 1.5 * 300e3 * (1 + 0.02 * pks_rng_normal(&rng));
        near[i] = 1.12 * 300e3 * (1 + 0.02 * pks_rng_normal(&rng));
    }
    char a[512], b[512], n2[512];
    pk_test_tmp_path(a, sizeof a, "base.json");
    pk_test_tmp_path(b, sizeof b, "slow.json");
    pk_test_tmp_path(n2, sizeof n2, "near.json");
    pk_test_write_results(a, (pk_test_series[]){{"spawn_only/processkit", base, N, NULL}}, 1);
    pk_test_write_results(b, (pk_test_series[]){{"spawn_only/processkit", slow, N, NULL}}, 1);
    pk_test_write_results(n2, (pk_test_series[]){{"spawn_only/processkit", near, N, NULL}}, 1);
    pkb_compare c;
    char err[512];
    ASSERT_OK(pkb_compare_files(a, b, NULL, &c, err, sizeof err));
    const pkb_compare_row *r = &c.rows[0];
    ASSERT(r->cv_base > 0.10); /* too noisy for its point estimate */
    ASSERT_EQ(r->d.verdict, PKS_REGRESSED);
    ASSERT(r->d.noisy && r->d.bar > 0.05 + 0.10 && r->s.ratio.lo - 1 > r->d.bar);
    ASSERT_EQ(c.status, 2);
    char *text;
    ASSERT_OK(pkb_compare_render(&c, PKB_COMPARE_TEXT, &text));
    ASSERT(strstr(text, "(noisy)") != NULL && strstr(text, "regressed") != NULL);
    free(text);
    pkb_compare_free(&c);
    /* +12% of that noise: the CI does not clear the widened bar, so the noise still decides. */
    ASSERT_OK(pkb_compare_files(a, n2, NULL, &c, err, sizeof err));
    ASSERT(c.rows[0].d.verdict == PKS_UNDECIDABLE && c.rows[0].d.reason == PKS_TOO_NOISY);
    ASSERT(!c.rows[0].d.noisy && c.status == 3);
    pkb_compare_free(&c);
    /* The rule itself: decided only with p below alpha and the whole CI beyond the widened bar. */
    pks_decision_in in = {.p = 0.001,
                          .delta = 0.3,
                          .threshold = 0.05,
                          .samples = PKS_TOO_NOISY,
                          .ci_known = true,
                          .ci_lo = 0.2,
                          .ci_hi = 0.4,
                          .widen = 0.14};
    ASSERT_EQ(pks_decide(&in).verdict, PKS_REGRESSED);
    in.ci_lo = 0.18; /* 0.05 + 0.14 = 0.19 */
    ASSERT_EQ(pks_decide(&in).verdict, PKS_UNDECIDABLE);
    in.ci_lo = 0.2;
    in.p = 0.2;
    ASSERT_EQ(pks_decide(&in).verdict, PKS_UNDECIDABLE);
    in = (pks_decision_in){.p = 0.001,
                           .delta = -0.3,
                           .threshold = 0.05,
                           .samples = PKS_TOO_NOISY,
                           .ci_known = true,
                           .ci_lo = -0.4,
                           .ci_hi = -0.2};
    ASSERT_EQ(pks_decide(&in).verdict, PKS_IMPROVED);
    in.samples = PKS_TOO_FEW_SAMPLES; /* too few values: no interval to trust */
    ASSERT_EQ(pks_decide(&in).verdict, PKS_UNDECIDABLE);
}
