/*
 * Results files read by Google Benchmark's own tooling. Google Benchmark 1.7.1's tools/compare.py
 * is modelled here from its documented behaviour (tools/gbench/report.py and util.py of that
 * release; written for this test, not copied):
 *
 *   - the benchmarks of each file are sorted (util.sort_benchmark_results: stable sorts by
 *     repetition_index, then iteration before aggregate, then per_family_instance_index, then
 *     family_index, a missing key counting as -1);
 *   - the names each file uses, in order of first appearance, are intersected (report.
 *     partition_benchmarks): per common name, the time unit of the first record of the first
 *     file that has time_unit, real_time and cpu_time, and then every record of that name and
 *     unit on each side forms the partition;
 *   - per partition, with at least 2 records on both sides, scipy.stats.mannwhitneyu(two-sided,
 *     method "auto": exact when either side has at most 8 values and nothing is tied, else the
 *     normal approximation with tie and continuity correction) on real_time and on cpu_time
 *     (report.calc_utest); the result is kept only when both p-values are non-zero, and is
 *     "optimal" from 9 repetitions on.
 *
 * The model is checked against scipy's documented example, then run over real files of every
 * kind pkbench writes — rounds (the default), --sequential, --aa, check's run, the phases suite
 * and the forkathon suite — which must share every name and give every series a U test. A last
 * test shows cpu_time is the whole process's CPU per iteration, helper threads included, with
 * the children's in child_cpu_ns.
 */
#define _GNU_SOURCE
#include "test.h"

#include "run/run.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

/* ==== scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method="auto") ================ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* P(U >= u) under H0 for sizes n1, n2 without ties, by counting orderings. */
static double exact_sf(size_t n1, size_t n2, double u)
{
    size_t max = n1 * n2;
    /* count[i][j][k]: orderings of i x's and j y's with U = k (x above y pairs). */
    double *prev = calloc((n2 + 1) * (max + 1), sizeof *prev);
    double *cur = calloc((n2 + 1) * (max + 1), sizeof *cur);
    ASSERT(prev != NULL && cur != NULL);
#define AT(t, j, k) (t)[(j) * (max + 1) + (k)]
    for (size_t j = 0; j <= n2; j++)
        AT(prev, j, 0) = 1; /* no x: U = 0 */
    for (size_t i = 1; i <= n1; i++) {
        memset(cur, 0, (n2 + 1) * (max + 1) * sizeof *cur);
        for (size_t j = 0; j <= n2; j++)
            for (size_t k = 0; k <= max; k++) {
                /* the largest value is an x (it beats all j y's) or a y */
                double v = k >= j ? AT(prev, j, k - j) : 0;
                if (j > 0)
                    v += AT(cur, j - 1, k);
                AT(cur, j, k) = v;
            }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double total = 0, tail = 0;
    for (size_t k = 0; k <= max; k++) {
        total += AT(prev, n2, k);
        tail += (double)k >= u - 1e-9 ? AT(prev, n2, k) : 0;
    }
#undef AT
    free(prev);
    free(cur);
    return tail / total;
}

static double
mannwhitneyu_two_sided(const double *x, size_t n1, const double *y, size_t n2, bool asymptotic)
{
    size_t n = n1 + n2;
    double *all = malloc(n * sizeof *all), *rank = malloc(n * sizeof *rank);
    ASSERT(all != NULL && rank != NULL);
    memcpy(all, x, n1 * sizeof *x);
    memcpy(all + n1, y, n2 * sizeof *y);
    double *sorted = malloc(n * sizeof *sorted);
    memcpy(sorted, all, n * sizeof *all);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double tie_term = 0;
    bool ties = false;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && sorted[j] == sorted[i])
            j++;
        double t = (double)(j - i);
        tie_term += t * t * t - t;
        ties |= j - i > 1;
        i = j;
    }
    /* average ranks (1-based) */
    for (size_t a = 0; a < n; a++) {
        size_t below = 0, equal = 0;
        for (size_t b = 0; b < n; b++) {
            below += sorted[b] < all[a];
            equal += sorted[b] == all[a];
        }
        rank[a] = (double)below + ((double)equal + 1) / 2;
    }
    double r1 = 0;
    for (size_t a = 0; a < n1; a++)
        r1 += rank[a];
    double u1 = r1 - (double)n1 * ((double)n1 + 1) / 2, u2 = (double)(n1 * n2) - u1;
    double u = fmax(u1, u2), p;
    bool exact = !asymptotic && !(n1 > 8 && n2 > 8) && !ties;
    if (exact) {
        p = 2 * exact_sf(n1, n2, u);
    } else {
        double mu = (double)(n1 * n2) / 2, nn = (double)n;
        double s = sqrt((double)(n1 * n2) / 12 * ((nn + 1) - tie_term / (nn * (nn - 1))));
        double z = (u - mu - 0.5) / s;
        p = 2 * (0.5 * erfc(z / sqrt(2.0)));
    }
    free(all);
    free(rank);
    free(sorted);
    return fmin(1, fmax(0, p));
}

TEST_IMPL(gbench_compare_py_mann_whitney_reference)
{
    /* scipy.stats.mannwhitneyu's documented example (scipy 1.7 to 1.11): males vs females,
     * U1 = 17; "auto" is exact here (sizes 5 and 4, no ties), and the asymptotic p is given. */
    const double males[] = {19, 22, 16, 29, 24}, females[] = {20, 11, 17, 12};
    double exact = mannwhitneyu_two_sided(males, 5, females, 4, false);
    double approx = mannwhitneyu_two_sided(males, 5, females, 4, true);
    printf("# exact p %.17g, asymptotic p %.17g\n", exact, approx);
    ASSERT(fabs(exact - 0.1111111111111111) < 1e-12);
    ASSERT(fabs(approx - 0.11134688653314041) < 1e-12);
    /* Complete separation of 3 and 3: exact 2 / C(6, 3) = 0.1. */
    const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    ASSERT(fabs(mannwhitneyu_two_sided(a, 3, b, 3, false) - 0.1) < 1e-12);
    /* Ties force the normal approximation: {1,1,2} vs {2,3,3}; average ranks 1.5, 1.5, 3.5 give
     * U1 = 0.5, U = max(U1, 9 − U1) = 8.5; tie sizes 2, 2, 2: s² = 9/12 · (7 − 18/30) = 4.8,
     * z = (8.5 − 4.5 − 0.5) / √4.8, p = 2 · (1 − Φ(z)). */
    const double t1[] = {1, 1, 2}, t2[] = {2, 3, 3};
    double want = erfc((3.5 / sqrt(4.8)) / sqrt(2.0));
    ASSERT(fabs(mannwhitneyu_two_sided(t1, 3, t2, 3, false) - want) < 1e-12);
}

/* ==== compare.py's name matching ============================================================== */

struct rec {
    const json_t *j;
    size_t order;
    long long family, instance, rep;
    int aggregate;
};

static long long int_or(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return v != NULL ? (long long)json_integer_value(v) : -1;
}

/* util.sort_benchmark_results: four stable sorts, i.e. one sort by (family, instance,
 * aggregate, repetition, original position). */
static int cmp_rec(const void *pa, const void *pb)
{
    const struct rec *a = pa, *b = pb;
    long long ka[] = {a->family, a->instance, a->aggregate, a->rep, (long long)a->order};
    long long kb[] = {b->family, b->instance, b->aggregate, b->rep, (long long)b->order};
    for (int k = 0; k < 5; k++)
        if (ka[k] != kb[k])
            return ka[k] < kb[k] ? -1 : 1;
    return 0;
}

static struct rec *sorted_records(const json_t *doc, size_t *n)
{
    const json_t *b = json_object_get(doc, "benchmarks");
    *n = json_array_size(b);
    struct rec *r = calloc(*n + 1, sizeof *r);
    ASSERT(r != NULL);
    for (size_t i = 0; i < *n; i++) {
        const json_t *o = json_array_get(b, i);
        const char *type = json_string_value(json_object_get(o, "run_type"));
        r[i] = (struct rec){o,
                            i,
                            int_or(o, "family_index"),
                            int_or(o, "per_family_instance_index"),
                            int_or(o, "repetition_index"),
                            type != NULL && strcmp(type, "aggregate") == 0};
    }
    qsort(r, *n, sizeof *r, cmp_rec);
    return r;
}

static const char *name_of(const struct rec *r)
{
    return json_string_value(json_object_get(r->j, "name"));
}

static bool comparable(const json_t *o)
{
    return json_object_get(o, "time_unit") && json_object_get(o, "real_time") &&
           json_object_get(o, "cpu_time");
}

/* One partition: its name, the records of each side (time unit filtered), and the U test. */
struct partition {
    const char *name;
    size_t nl, nr;
    bool utest, optimal;
    double p_time, p_cpu;
};

/* report.get_difference_report over two loaded files; returns the partitions (freed by caller). */
static struct partition *compare_py(const json_t *d1, const json_t *d2, size_t *count)
{
    size_t n1, n2;
    struct rec *a = sorted_records(d1, &n1), *b = sorted_records(d2, &n2);
    struct partition *parts = calloc(n1 + 1, sizeof *parts);
    *count = 0;
    for (size_t i = 0; i < n1; i++) {
        const char *name = name_of(&a[i]);
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(name_of(&a[k]), name) != 0;
        bool in_two = false;
        for (size_t k = 0; k < n2 && !in_two; k++)
            in_two = strcmp(name_of(&b[k]), name) == 0;
        if (!first || !in_two)
            continue;
        const char *unit = NULL;
        for (size_t k = 0; k < n1 && unit == NULL; k++)
            if (strcmp(name_of(&a[k]), name) == 0 && comparable(a[k].j))
                unit = json_string_value(json_object_get(a[k].j, "time_unit"));
        if (unit == NULL)
            continue;
        double lt[256], lc[256], rt[256], rc[256];
        size_t nl = 0, nr = 0;
        for (size_t k = 0; k < n1 && nl < 256; k++)
            if (strcmp(name_of(&a[k]), name) == 0 &&
                strcmp(json_string_value(json_object_get(a[k].j, "time_unit")), unit) == 0) {
                lt[nl] = json_number_value(json_object_get(a[k].j, "real_time"));
                lc[nl++] = json_number_value(json_object_get(a[k].j, "cpu_time"));
            }
        for (size_t k = 0; k < n2 && nr < 256; k++)
            if (strcmp(name_of(&b[k]), name) == 0 &&
                strcmp(json_string_value(json_object_get(b[k].j, "time_unit")), unit) == 0) {
                rt[nr] = json_number_value(json_object_get(b[k].j, "real_time"));
                rc[nr++] = json_number_value(json_object_get(b[k].j, "cpu_time"));
            }
        struct partition *p = &parts[(*count)++];
        *p = (struct partition){.name = name, .nl = nl, .nr = nr};
        if (nl >= 2 && nr >= 2) { /* UTEST_MIN_REPETITIONS */
            p->p_time = mannwhitneyu_two_sided(lt, nl, rt, nr, false);
            p->p_cpu = mannwhitneyu_two_sided(lc, nl, rc, nr, false);
            p->utest = p->p_time != 0 && p->p_cpu != 0; /* "if cpu_pvalue and time_pvalue" */
            p->optimal = nl >= 9 && nr >= 9;            /* UTEST_OPTIMAL_REPETITIONS */
        }
    }
    free(a);
    free(b);
    return parts;
}

/* ==== Real files ================================================================================
 */

static void need_pkbench(void)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
}

static int pkbench(const char *const *args, pk_result *r)
{
    const char *argv[40] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 150000}, r));
    ASSERT(r->outcome.kind == PK_OUTCOME_EXITED);
    return r->outcome.code;
}

#define PKBENCH(...)                                                                               \
    do {                                                                                           \
        pk_result r_;                                                                              \
        int code_ = pkbench((const char *const[]){__VA_ARGS__, NULL}, &r_);                        \
        if (code_ != 0)                                                                            \
            pk_test_fail(__FILE__, __LINE__, "pkbench exited %d: %s", code_,                       \
                         r_.err.data ? r_.err.data : "");                                          \
        pk_result_release(&r_);                                                                    \
    } while (0)

static json_t *load(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", path, e.text);
    return j;
}

static bool matches(const char *pattern, const char *s)
{
    regex_t re;
    ASSERT_EQ(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
    bool ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

/* One file by itself: Google Benchmark's context, records true to the file, no setting in a
 * name, every measured series with its repetitions and four aggregates. Returns the number of
 * measured series. */
static size_t check_file(const char *path)
{
    pk_test_validate_results(path);
    json_t *d = load(path);
    const json_t *ctx = json_object_get(d, "context");
    const char *date = json_string_value(json_object_get(ctx, "date"));
    ASSERT(date != NULL &&
           matches("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}[+-][0-9]{2}:[0-9]{2}$", date));
    ASSERT(json_is_integer(json_object_get(ctx, "mhz_per_cpu")));
    ASSERT_GE(json_integer_value(json_object_get(ctx, "num_cpus")), 1);
    ASSERT(json_is_string(json_object_get(ctx, "host_name")));
    ASSERT(json_is_array(json_object_get(ctx, "caches")));
    ASSERT(json_is_array(json_object_get(ctx, "load_avg")));
    ASSERT(json_is_string(json_object_get(ctx, "library_build_type")));
    const json_t *bench = json_object_get(d, "benchmarks");
    size_t i, measured = 0;
    const json_t *s;
    json_array_foreach(json_object_get(d, "series"), i, s)
    {
        const char *name = json_string_value(json_object_get(s, "name"));
        const json_t *samples = json_object_get(s, "samples_ns");
        if (strcmp(json_string_value(json_object_get(s, "status")), "measured") != 0)
            continue;
        measured++;
        size_t reps = json_array_size(samples), seen = 0, aggregates = 0;
        bool index_seen[256] = {false};
        size_t k;
        const json_t *b;
        json_array_foreach(bench, k, b)
        {
            const char *bn = json_string_value(json_object_get(b, "name"));
            ASSERT(strstr(bn, "min_time:") == NULL && strstr(bn, "repeats:") == NULL &&
                   strstr(bn, "iterations:") == NULL && strstr(bn, "manual_time") == NULL);
            ASSERT(json_is_integer(json_object_get(b, "family_index")));
            ASSERT(json_is_integer(json_object_get(b, "per_family_instance_index")));
            if (strcmp(bn, name) == 0) {
                ASSERT_EQ(json_integer_value(json_object_get(b, "repetitions")), reps);
                long long idx = json_integer_value(json_object_get(b, "repetition_index"));
                ASSERT(idx >= 0 && (size_t)idx < reps && !index_seen[idx]);
                index_seen[idx] = true;
                /* real_time is the sample; cpu_time pkbench's CPU of the repetition */
                ASSERT(json_number_value(json_object_get(b, "real_time")) ==
                       json_number_value(json_array_get(samples, (size_t)idx)));
                ASSERT(json_number_value(json_object_get(b, "cpu_time")) ==
                       json_number_value(
                           json_array_get(json_object_get(s, "parent_cpu_ns"), (size_t)idx)));
                ASSERT(json_is_number(json_object_get(b, "child_cpu_ns")));
                seen++;
            } else if (strncmp(bn, name, strlen(name)) == 0 && bn[strlen(name)] == '_' &&
                       strchr(bn + strlen(name) + 1, '/') == NULL) {
                const char *agg = json_string_value(json_object_get(b, "aggregate_name"));
                ASSERT_STR_EQ(bn + strlen(name) + 1, agg);
                ASSERT_STR_EQ(json_string_value(json_object_get(b, "aggregate_unit")),
                              strcmp(agg, "cv") == 0 ? "percentage" : "time");
                aggregates++;
            }
        }
        ASSERT_EQ(seen, reps);
        ASSERT_EQ(aggregates, reps >= 2 ? 4 : 0);
    }
    json_decref(d);
    return measured;
}

/* compare.py over two files of one suite: every series measured in both is a partition with
 * all its repetitions on each side and a U test, plus one partition per aggregate. */
static void check_pair(const char *p1, const char *p2, const char *what)
{
    json_t *d1 = load(p1), *d2 = load(p2);
    size_t n;
    struct partition *parts = compare_py(d1, d2, &n);
    size_t common = 0, utests = 0, i, k;
    const json_t *s, *t;
    json_array_foreach(json_object_get(d1, "series"), i, s)
    {
        json_array_foreach(json_object_get(d2, "series"), k, t)
        {
            const char *name = json_string_value(json_object_get(s, "name"));
            if (strcmp(name, json_string_value(json_object_get(t, "name"))) != 0 ||
                strcmp(json_string_value(json_object_get(s, "status")), "measured") != 0 ||
                strcmp(json_string_value(json_object_get(t, "status")), "measured") != 0)
                continue;
            common++;
            size_t r1 = json_array_size(json_object_get(s, "samples_ns"));
            size_t r2 = json_array_size(json_object_get(t, "samples_ns"));
            const struct partition *p = NULL;
            for (size_t q = 0; q < n && p == NULL; q++)
                if (strcmp(parts[q].name, name) == 0)
                    p = &parts[q];
            if (p == NULL)
                pk_test_fail(__FILE__, __LINE__, "%s: compare.py matches no %s", what, name);
            ASSERT_EQ(p->nl, r1);
            ASSERT_EQ(p->nr, r2);
            if (r1 >= 2 && r2 >= 2) {
                ASSERT(p->utest);
                ASSERT(p->p_time > 0 && p->p_time <= 1 && p->p_cpu > 0 && p->p_cpu <= 1);
                ASSERT_EQ(p->optimal, r1 >= 9 && r2 >= 9);
                utests++;
            }
            printf("# %s: %s: %zu vs %zu repetitions, U test p(time) %.3g p(cpu) %.3g\n", what,
                   name, p->nl, p->nr, p->p_time, p->p_cpu);
        }
    }
    ASSERT_GT(common, 0);
    /* nothing but the series and their four aggregates */
    ASSERT_EQ(n, common * 5 - (common - utests) * 4);
    free(parts);
    json_decref(d1);
    json_decref(d2);
}

TEST_IMPL(gbench_compare_py_matches_every_mode)
{
    if (PK_TEST_UNDER_ASAN) /* ./x test's critical path is the ASan lane: 37 s there */
        pk_test_skip_gate("build",
                          "%s: the Debug suite runs it (pkbench's code runs under ASan in "
                          "the other pkbench tests)",
                          "Google Benchmark's compare.py over six runs");
    need_pkbench();
    const char *dir = pk_test_tmpdir();
    char rounds[512], seq[512], aa[512], chk[512], ph1[512], ph2[512], fk1[512], fk2[512];
    snprintf(rounds, sizeof rounds, "%s/rounds.json", dir);
    snprintf(seq, sizeof seq, "%s/sequential.json", dir);
    snprintf(aa, sizeof aa, "%s/aa.json", dir);
    snprintf(chk, sizeof chk, "%s/check.json", dir);
    snprintf(ph1, sizeof ph1, "%s/phases-1.json", dir);
    snprintf(ph2, sizeof ph2, "%s/phases-2.json", dir);
    snprintf(fk1, sizeof fk1, "%s/forkathon-1.json", dir);
    snprintf(fk2, sizeof fk2, "%s/forkathon-2.json", dir);
    const char *two = "^spawn_only/(posix_spawn|vfork_exec)$";
    /* Short settles and 10 rounds: the records' layout is under test here, not the settling
     * (test_settle.c); 10 still gives compare.py the 9 repetitions it calls optimal. */
    PKBENCH("run", "--profile", "quick", "--no-prime", "--filter", two, "--settle", "0.01",
            "--repetitions", "10", "--out", rounds);
    PKBENCH("run", "--profile", "quick", "--no-prime", "--filter", two, "--sequential",
            "--repetitions", "10", "--out", seq);
    PKBENCH("run", "--profile", "quick", "--no-prime", "--filter", two, "--aa", "--settle", "0.01",
            "--repetitions", "10", "--out", aa);
    pk_result r;
    int code = pkbench((const char *const[]){"check", "--baseline", rounds, "--no-prime",
                                             "--filter", two, "--settle", "0.01", "--repetitions",
                                             "10", "--out", chk, NULL},
                       &r);
    ASSERT(code == 0 || code == 2 || code == 3);
    pk_result_release(&r);
    json_t *c = load(chk); /* check passed --settle on to its run */
    ASSERT(json_number_value(json_object_get(json_object_get(c, "settings"), "settle_s")) == 0.01);
    json_decref(c);
    const char *prims = "^primitive/(pidfd_open|pipe2_pair)$";
    PKBENCH("run", "--suite", "phases", "--profile", "quick", "--no-prime", "--filter", prims,
            "--settle", "0.01", "--repetitions", "10", "--out", ph1);
    PKBENCH("run", "--suite", "phases", "--profile", "quick", "--no-prime", "--filter", prims,
            "--settle", "0.01", "--repetitions", "10", "--out", ph2);
    PKBENCH("run", "--suite", "forkathon", "--profile", "quick", "--iterations", "300", "--filter",
            "^wemm/", "--out", fk1);
    PKBENCH("run", "--suite", "forkathon", "--profile", "quick", "--iterations", "300", "--filter",
            "^wemm/", "--out", fk2);
    const char *files[] = {rounds, seq, aa, chk, ph1, ph2, fk1, fk2};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        ASSERT_GT(check_file(files[i]), 0);
    check_pair(rounds, seq, "rounds vs --sequential");
    check_pair(rounds, aa, "rounds vs --aa");
    check_pair(rounds, chk, "baseline vs check's run");
    check_pair(ph1, ph2, "phases vs phases");
    check_pair(fk1, fk2, "forkathon vs forkathon");
}

/* ==== cpu_time: the whole process ===============================================================
 */

static void *spin_thread(void *arg)
{
    double ms = *(const double *)arg;
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 10000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
    return NULL;
}

/* One iteration: 3 ms of CPU in a helper thread, 3 ms in a child (both counted in CPU time, so a
 * loaded machine only makes them take longer); the main thread only waits. */
static int thread_and_child(void *ctx, pkb_sample *out)
{
    (void)ctx;
    double ms = 3;
    pthread_t t;
    if (pthread_create(&t, NULL, spin_thread, &ms) != 0)
        return -EAGAIN;
    pk_result r;
    int rc =
        pk_run(&(pk_command){.argv = HELPER("spin-cpu", "3"), .containment = PK_CONTAIN_NONE}, &r);
    pthread_join(t, NULL);
    out->children = 1;
    pk_result_release(&r);
    return rc;
}

TEST_IMPL(gbench_cpu_time_counts_every_thread)
{
    char path[512];
    snprintf(path, sizeof path, "%s/threads.json", pk_test_tmpdir());
    static const pkb_profile prof = {"quick", 6, 0.0, 0.02, 0.0, 0.0};
    pkb_series s = {.name = "cpu/thread_and_child",
                    .scenario = "cpu",
                    .contender = "thread_and_child",
                    .unit = "runs/s",
                    .work_per_iteration = 1,
                    .iterate = thread_and_child};
    char *argv[] = {"pk_tests", NULL};
    pkb_suite_options opts = {.suite = "scenarios",
                              .profile = &prof,
                              .out_path = path,
                              .argc = 1,
                              .argv = argv,
                              .interleave = true};
    ASSERT_EQ(pkb_run_series(&s, 1, &opts), 0);
    pkb_series_free(&s);
    json_t *d = load(path);
    size_t i, reps = 0;
    const json_t *b;
    json_array_foreach(json_object_get(d, "benchmarks"), i, b)
    {
        if (strcmp(json_string_value(json_object_get(b, "run_type")), "iteration") != 0)
            continue;
        double cpu = json_number_value(json_object_get(b, "cpu_time"));
        double child = json_number_value(json_object_get(b, "child_cpu_ns"));
        printf("# repetition %zu: cpu_time %.2f ms, child_cpu_ns %.2f ms per iteration\n", reps,
               cpu / 1e6, child / 1e6);
        /* The helper thread's 3 ms are in cpu_time (the main thread alone spends well under
         * 1 ms); the child's 3 ms are in child_cpu_ns, not in cpu_time. */
        ASSERT(cpu >= 2.5e6);
        ASSERT(child >= 2.5e6);
        ASSERT(cpu < 2.5e6 + child);
        reps++;
    }
    ASSERT_GE(reps, 6);
    json_decref(d);
}
