/*
 * pkbench compare and check (harness/regress/) and the runner's rounds modes.
 *
 * Synthetic results files (written with jansson, samples drawn with stats.h's seeded pks_rng)
 * check the statistics end to end through the file format: A/A pairs from one distribution give
 * a false-regression rate no higher than alpha; a 10% slowdown with n = 20 and 3% noise is
 * caught, a 1% one under the 5% threshold is not, a base file's noise floor raises the bar;
 * undecidable series (too few samples, too noisy) give exit 3 and are named; contenders compare
 * within one file; the environment check warns or, with --strict-env, fails.
 *
 * Real files: two interleaved quick runs of the same build (the halves of a --aa run) never give
 * exit 2; the same pair with one series' samples multiplied by 3 gives exit 2 naming that series;
 * `pkbench check` against a baseline with one series 10× faster confirms it by a re-run (what a
 * re-run that does not repeat leads to is checked on prepared runs, test_regress.c). Bad inputs
 * exit 1 with one line and write nothing. Every assertion on a real run holds on a loaded machine.
 */
#define _GNU_SOURCE
#include "test.h"

#include "regress/compare.h"
#include "common/stats.h"
#include "run/run.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif
#ifndef PK_SOURCE_DIR
#error "PK_SOURCE_DIR must name the source tree"
#endif

/* ==== Synthetic results files ================================================================ */

typedef struct syn_series {
    const char *name; /* scenario/contender */
    const double *samples;
    size_t n;
    const char *status; /* NULL: "measured" */
} syn_series;

static void lognormal(pks_rng *rng, double *x, size_t n, double median, double sigma)
{
    for (size_t i = 0; i < n; i++)
        x[i] = median * exp(sigma * pks_rng_normal(rng));
}

/* A minimal valid results document holding `series`; `kernel` varies the environment. */
static json_t *syn_doc(const syn_series *series, size_t n, const char *kernel)
{
    json_t *env = json_pack(
        "{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:[f,f,f], s:s, s:s, s:n, "
        "s:n, s:s, s:s}",
        "cpu_model", "Synthetic CPU", "logical_cpus", 2, "kernel", kernel, "distribution",
        "Debian 12", "libc", "glibc 2.36", "compiler", "GNU 12", "compiler_flags", "-O3",
        "build_type", "Release", "git_commit", "0000000", "git_dirty", 0, "processes_start", 100,
        "threads_start", 200, "loadavg_start", 0.1, 0.1, 0.1, "aslr", "full", "thp", "madvise",
        "cpufreq_governor", "cgroup_cpu_max", "spawn_mechanism", "clone3", "containment", "cgroup");
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *slash = strchr(series[i].name, '/');
        json_t *samples = json_array();
        for (size_t k = 0; k < series[i].n; k++)
            json_array_append_new(samples, json_real(series[i].samples[k]));
        json_array_append_new(
            arr, json_pack("{s:s, s:s#, s:s, s:b, s:s, s:s, s:f, s:o}", "name", series[i].name,
                           "scenario", series[i].name, (int)(slash - series[i].name), "contender",
                           slash + 1, "baseline", strcmp(slash + 1, "posix_spawn") == 0, "status",
                           series[i].status ? series[i].status : "measured", "unit", "runs/s",
                           "work_per_iteration", 1.0, "samples_ns", samples));
    }
    return json_pack("{s:s, s:i, s:s, s:s, s:s, s:b, s:[s], s:o, s:{s:i, s:f, s:f}, "
                     "s:{s:b, s:i, s:f, s:[], s:b}, s:o, s:[], s:{}}",
                     "schema", "pkbench-results", "schema_version", 1, "suite", "compare",
                     "profile", "quick", "created", "2026-01-01T00:00:00Z", "complete", 1,
                     "command", "pkbench", "environment", env, "settings", "repetitions", 20,
                     "min_time_s", 0.03, "warmup_s", 0.05, "priming", "performed", 0, "batches", 0,
                     "seconds", 0.0, "batch_ms", "stable", 0, "series", arr, "benchmarks",
                     "context");
}

static void write_doc(json_t *doc, const char *path)
{
    ASSERT_EQ(json_dump_file(doc, path, JSON_REAL_PRECISION(17)), 0);
    json_decref(doc);
}

static void syn_write(const char *path, const syn_series *series, size_t n)
{
    write_doc(syn_doc(series, n, "6.1.0"), path);
}

static void tmp_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", pk_test_tmpdir(), name);
}

static const pkb_compare_row *row_of(const pkb_compare *c, const char *name)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (strcmp(c->rows[i].name, name) == 0)
            return &c->rows[i];
    pk_test_fail(__FILE__, __LINE__, "no row %s", name);
}

static void
compare_ok(const char *base, const char *cand, const pkb_compare_options *o, pkb_compare *c)
{
    char err[512] = "";
    int rc = pkb_compare_files(base, cand, o, c, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "compare failed (%d): %s", rc, err);
}

/* ==== pkbench as a child ===================================================================== */

static void need_pkbench(void)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
}

/* Runs pkbench with args (NULL-terminated); returns its exit status, output in *r. */
static int pkbench_argv(const char *const *args, pk_result *r)
{
    const char *argv[40] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 150000}, r));
    if (r->outcome.kind != PK_OUTCOME_EXITED)
        pk_test_fail(__FILE__, __LINE__, "pkbench %s ended %s (signal %d): %s", args[0],
                     pk_outcome_kind_name(r->outcome.kind), r->outcome.signo,
                     r->err.data ? r->err.data : "");
    return r->outcome.code;
}

#define PKBENCH(r, ...) pkbench_argv((const char *const[]){__VA_ARGS__, NULL}, r)

static const char *err_of(const pk_result *r)
{
    return r->err.data ? r->err.data : "";
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

/* The quick profile's samples per series (each half of an --aa run has as many): sizes arrays,
 * so a constant, checked against the profile itself. */
enum { QUICK_N = 20 };

/* A quick run of three spawn_only series, no priming, interleaved: a few seconds.
 *
 * Runs of the real benchmarks are measured the way METHODOLOGY.md ("Checking a change for
 * regressions") says two runs must be for their comparison to mean anything on a small VM: pinned
 * to one CPU (pin_to_one_cpu; the children inherit it) and interleaved. Unpinned, the spawn
 * series settle per process into modes that differ by up to 2x (cross-vCPU wake-ups), which no
 * statistic over one run's samples can see; sequentially, a neighbour's burst lands on one series
 * only. */
#define QUICK3 "^spawn_only/(processkit|posix_spawn|vfork_exec)$"

static void pin_to_one_cpu(void)
{
    int cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu >= 0 ? cpu : 0, &set);
    ASSERT_EQ(sched_setaffinity(0, sizeof set, &set), 0);
}

static void quick_run(const char *out, const char *extra)
{
    pk_result r;
    /* A short settle: these runs test the comparison, not the settling (test_settle.c). */
    int code = extra ? PKBENCH(&r, "run", "--profile", "quick", "--no-prime", "--filter", QUICK3,
                               "--settle", "0.01", "--out", out, extra)
                     : PKBENCH(&r, "run", "--profile", "quick", "--no-prime", "--filter", QUICK3,
                               "--settle", "0.01", "--out", out, "--interleave");
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench run exited %d: %s", code, err_of(&r));
    pk_result_release(&r);
}

static json_t *load(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", path, e.text);
    return j;
}

/* Validates a results file against harness/results/schema.json (python3-jsonschema, checked for
 * before the test measures). */
static void validate(const char *path)
{
    (void)pk_test_validate_results(path);
}

/* The series the JSON comparison (stdout of --format json) says regressed, joined by ','. */
static void regressed_names(const char *json_text, char *out, size_t cap)
{
    json_error_t e;
    json_t *j = json_loads(json_text ? json_text : "", 0, &e);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "compare's JSON does not parse: %s", e.text);
    out[0] = '\0';
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(j, "regressed"), i, v)
    {
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s", i ? "," : "", json_string_value(v));
    }
    json_decref(j);
}

/* ==== Synthetic ============================================================================== */

/* 200 pairs of single-series files drawn from one distribution (lognormal, 4% spread, n = 20):
 * with no threshold at all (pure statistics) at most alpha = 5% are called regressed, and with
 * the default 5% threshold no more. */
TEST_IMPL(compare_synthetic_aa_false_positive)
{
    enum { PAIRS = 200, N = 20 };
    pks_rng rng;
    pks_rng_seed(&rng, 4242);
    char base[512], cand[512];
    tmp_path(base, sizeof base, "aa-base.json");
    tmp_path(cand, sizeof cand, "aa-new.json");
    double a[N], b[N];
    int regressed = 0, improved = 0, with_threshold = 0;
    for (int i = 0; i < PAIRS; i++) {
        lognormal(&rng, a, N, 100000.0, 0.04);
        lognormal(&rng, b, N, 100000.0, 0.04);
        syn_write(base, &(syn_series){"spawn_only/processkit", a, N, NULL}, 1);
        syn_write(cand, &(syn_series){"spawn_only/processkit", b, N, NULL}, 1);
        pkb_compare c;
        compare_ok(base, cand, &(pkb_compare_options){.threshold = -1, .iterations = 500}, &c);
        ASSERT_EQ(c.nrows, 1);
        ASSERT_EQ(c.undecidable, 0);
        regressed += c.status == 2;
        improved += c.improved > 0;
        pkb_compare_free(&c);
        compare_ok(base, cand, &(pkb_compare_options){.iterations = 500}, &c);
        with_threshold += c.status == 2;
        pkb_compare_free(&c);
    }
    printf("compare A/A: %d/%d regressed (%.1f%%), %d improved, with no threshold; %d/%d with the "
           "5%% threshold; alpha 5%%\n",
           regressed, PAIRS, 100.0 * regressed / PAIRS, improved, with_threshold, PAIRS);
    ASSERT_LE(regressed, PAIRS * 5 / 100);
    ASSERT_LE(with_threshold, regressed);
}

/* A 10% slowdown (n = 20, 3% noise) is detected in every trial; a 1% slowdown under the 5%
 * threshold is never reported; a base file's noise floor above 10% hides the 10% one. */
TEST_IMPL(compare_synthetic_shift)
{
    enum { TRIALS = 5, N = 20, K = 10 };
    static const char *const names[K] = {"s0/a", "s0/b", "s1/a", "s1/b", "s2/a",
                                         "s2/b", "s3/a", "s3/b", "s4/a", "s4/b"};
    pks_rng rng;
    pks_rng_seed(&rng, 777);
    char base[512], cand[512];
    tmp_path(base, sizeof base, "shift-base.json");
    tmp_path(cand, sizeof cand, "shift-new.json");
    double xb[K][N], xc[K][N];
    syn_series sb[K], sc[K];
    int caught = 0, small = 0;
    for (int t = 0; t < TRIALS; t++) {
        for (int k = 0; k < K; k++) {
            double median = 50000.0 * (k + 1);
            lognormal(&rng, xb[k], N, median, 0.03);
            lognormal(&rng, xc[k], N, median * (k < K / 2 ? 1.10 : 1.01), 0.03);
            sb[k] = (syn_series){names[k], xb[k], N, NULL};
            sc[k] = (syn_series){names[k], xc[k], N, NULL};
        }
        syn_write(base, sb, K);
        syn_write(cand, sc, K);
        pkb_compare c;
        compare_ok(base, cand, &(pkb_compare_options){.iterations = 2000}, &c);
        ASSERT_EQ(c.nrows, K);
        for (int k = 0; k < K; k++) {
            const pkb_compare_row *r = row_of(&c, names[k]);
            if (k < K / 2)
                caught += r->d.verdict == PKS_REGRESSED;
            else
                small += r->d.verdict != PKS_NO_CHANGE;
        }
        ASSERT_EQ(c.status, 2);
        ASSERT_EQ(c.geomean_n, K);
        ASSERT(c.geomean > 1.04 && c.geomean < 1.07); /* (1.10^5 · 1.01^5)^(1/10) ≈ 1.054 */
        pkb_compare_free(&c);
    }
    printf("10%% slowdown, n = 20, 3%% noise: %d/%d regressed; 1%% slowdown under the 5%% "
           "threshold: %d/%d reported\n",
           caught, TRIALS * K / 2, small, TRIALS * K / 2);
    ASSERT_EQ(caught, TRIALS * K / 2);
    ASSERT_EQ(small, 0);

    /* The base file carries an A/A noise floor of 15% for s0/a: the 10% slowdown stays under the
     * bar there (and only there); measured at another alpha without B samples, it is used as is. */
    json_t *doc = syn_doc(sb, K, "6.1.0");
    json_object_set_new(
        doc, "noise_floor",
        json_pack("{s:f, s:{s:{s:f}}}", "alpha", 0.05, "series", "s0/a", "mde", 0.15));
    write_doc(doc, base);
    pkb_compare c;
    compare_ok(base, cand, &(pkb_compare_options){.iterations = 2000}, &c);
    ASSERT(c.noise_floor_known);
    ASSERT_EQ(row_of(&c, "s0/a")->d.verdict, PKS_NO_CHANGE);
    ASSERT(fabs(row_of(&c, "s0/a")->d.bar - 0.15) < 1e-12);
    ASSERT_EQ(row_of(&c, "s1/a")->d.verdict, PKS_REGRESSED);
    ASSERT(fabs(row_of(&c, "s1/a")->d.bar - 0.05) < 1e-12);
    pkb_compare_free(&c);

    /* An A/A run on a very busy machine can measure a floor above 1000% (12.5 once in CI): the
     * file pkbench wrote is read back, and nothing under that bar is called a change. */
    doc = syn_doc(sb, K, "6.1.0");
    json_object_set_new(
        doc, "noise_floor",
        json_pack("{s:f, s:{s:{s:f}}}", "alpha", 0.05, "series", "s1/a", "mde", 12.5));
    write_doc(doc, base);
    compare_ok(base, cand, &(pkb_compare_options){.iterations = 2000}, &c);
    ASSERT_EQ(row_of(&c, "s1/a")->d.verdict, PKS_NO_CHANGE);
    ASSERT(fabs(row_of(&c, "s1/a")->d.bar - 12.5) < 1e-12);
    pkb_compare_free(&c);
}

/* Fewer than 6 samples, or a cv above the limit: undecidable, named with the reason, exit 3 —
 * unless something regressed (exit 2). --cv-limit none lets the noisy one be decided. */
TEST_IMPL(compare_undecidable_exit_3)
{
    enum { N = 20 };
    pks_rng rng;
    pks_rng_seed(&rng, 99);
    double few_b[4], few_c[4], noisy_b[N], noisy_c[N], ok_b[N], ok_c[N], slow_c[N];
    lognormal(&rng, few_b, 4, 1e5, 0.02);
    lognormal(&rng, few_c, 4, 1e5, 0.02);
    lognormal(&rng, noisy_b, N, 1e5, 0.30);
    lognormal(&rng, noisy_c, N, 1e5, 0.30);
    lognormal(&rng, ok_b, N, 1e5, 0.02);
    lognormal(&rng, ok_c, N, 1e5, 0.02);
    for (int i = 0; i < N; i++)
        slow_c[i] = ok_c[i] * 1.3;
    char base[512], cand[512], cand2[512];
    tmp_path(base, sizeof base, "u-base.json");
    tmp_path(cand, sizeof cand, "u-new.json");
    tmp_path(cand2, sizeof cand2, "u-new2.json");
    syn_write(base,
              (syn_series[]){{"x/few", few_b, 4, NULL},
                             {"x/noisy", noisy_b, N, NULL},
                             {"x/ok", ok_b, N, NULL}},
              3);
    syn_write(cand,
              (syn_series[]){{"x/few", few_c, 4, NULL},
                             {"x/noisy", noisy_c, N, NULL},
                             {"x/ok", ok_c, N, NULL}},
              3);
    syn_write(cand2,
              (syn_series[]){{"x/few", few_c, 4, NULL},
                             {"x/noisy", noisy_c, N, NULL},
                             {"x/ok", slow_c, N, NULL}},
              3);
    pkb_compare c;
    compare_ok(base, cand, NULL, &c);
    ASSERT_EQ(c.status, 3);
    ASSERT_EQ(c.undecidable, 2);
    ASSERT_EQ(row_of(&c, "x/few")->d.reason, PKS_TOO_FEW_SAMPLES);
    ASSERT_EQ(row_of(&c, "x/noisy")->d.reason, PKS_TOO_NOISY);
    ASSERT_EQ(c.geomean_n, 1); /* only the decided series */
    char line[512];
    pkb_compare_summary_line(&c, line, sizeof line);
    ASSERT(strstr(line, "x/few (too few samples: 4 in base, 4 in new, need 6)") != NULL);
    ASSERT(strstr(line, "x/noisy (too noisy: cv ") != NULL);
    ASSERT(strstr(line, "x/ok") == NULL);
    pkb_compare_free(&c);

    compare_ok(base, cand2, NULL, &c);
    ASSERT_EQ(c.status, 2); /* a regression outranks the undecidable series */
    pkb_compare_summary_line(&c, line, sizeof line);
    ASSERT(strncmp(line, "regressed: x/ok (+30.", 21) == 0);
    pkb_compare_free(&c);

    compare_ok(base, cand, &(pkb_compare_options){.cv_limit = -1}, &c);
    ASSERT_EQ(c.undecidable, 1);
    ASSERT_NE(row_of(&c, "x/noisy")->d.verdict, PKS_UNDECIDABLE);
    pkb_compare_free(&c);

    /* The command line says which series and why, and exits 3. */
    need_pkbench();
    pk_result r;
    ASSERT_EQ(PKBENCH(&r, "compare", base, cand), 3);
    ASSERT(strstr(err_of(&r), "pkbench: cannot decide: x/few (too few samples") != NULL);
    ASSERT(strstr(r.out.data, "undecidable: x/noisy — too noisy") != NULL);
    pk_result_release(&r);
}

/* --baseline-contender: per scenario, every contender against the named one, in one file. */
TEST_IMPL(compare_contenders_in_one_file)
{
    enum { N = 12 };
    pks_rng rng;
    pks_rng_seed(&rng, 5);
    double base[N], slow[N], fast[N], other[N];
    lognormal(&rng, base, N, 2e5, 0.02);
    lognormal(&rng, slow, N, 2e5 * 1.25, 0.02);
    lognormal(&rng, fast, N, 2e5 * 0.70, 0.02);
    lognormal(&rng, other, N, 3e5, 0.02);
    char file[512];
    tmp_path(file, sizeof file, "contenders.json");
    syn_write(file,
              (syn_series[]){{"cap/posix_spawn", base, N, NULL},
                             {"cap/processkit", slow, N, NULL},
                             {"cap/vfork_exec", fast, N, NULL},
                             {"only/processkit", other, N, NULL}},
              4);
    pkb_compare c;
    compare_ok(file, NULL, &(pkb_compare_options){.baseline_contender = "posix_spawn"}, &c);
    ASSERT_EQ(c.nrows, 2);
    ASSERT_STR_EQ(row_of(&c, "cap/processkit")->base_name, "cap/posix_spawn");
    ASSERT_EQ(row_of(&c, "cap/processkit")->d.verdict, PKS_REGRESSED);
    ASSERT_EQ(row_of(&c, "cap/vfork_exec")->d.verdict, PKS_IMPROVED);
    ASSERT_EQ(c.nskipped, 1);
    ASSERT_STR_EQ(c.skipped[0].name, "only/processkit");
    ASSERT(strstr(c.skipped[0].why, "no posix_spawn series in scenario only") != NULL);
    ASSERT_EQ(c.status, 2);
    pkb_compare_free(&c);

    char err[256];
    ASSERT_EQ(pkb_compare_files(file, NULL, &(pkb_compare_options){.baseline_contender = "nope"},
                                &c, err, sizeof err),
              -EINVAL);
    ASSERT(strstr(err, "no series of contender 'nope'") != NULL);

    need_pkbench();
    pk_result r;
    ASSERT_EQ(
        PKBENCH(&r, "compare", file, "--baseline-contender", "posix_spawn", "--filter", "vfork"),
        0);
    ASSERT(strstr(r.out.data, "cap/vfork_exec") != NULL);
    ASSERT(strstr(r.out.data, "improved") != NULL);
    ASSERT(strstr(r.out.data, "cap/processkit ") == NULL);
    pk_result_release(&r);
}

/* Differing environment keys warn (naming key and both values); --strict-env makes it an error;
 * --env-keys chooses the keys. */
TEST_IMPL(compare_environment_check)
{
    need_pkbench();
    enum { N = 10 };
    pks_rng rng;
    pks_rng_seed(&rng, 11);
    double a[N], b[N];
    lognormal(&rng, a, N, 1e5, 0.02);
    lognormal(&rng, b, N, 1e5, 0.02);
    char base[512], cand[512], out[512];
    tmp_path(base, sizeof base, "env-base.json");
    tmp_path(cand, sizeof cand, "env-new.json");
    tmp_path(out, sizeof out, "env-out.txt");
    write_doc(syn_doc(&(syn_series){"x/a", a, N, NULL}, 1, "6.1.0-18-amd64"), base);
    write_doc(syn_doc(&(syn_series){"x/a", b, N, NULL}, 1, "6.1.0-20-amd64"), cand);
    pk_result r;
    ASSERT_EQ(PKBENCH(&r, "compare", base, cand), 0);
    ASSERT(strstr(err_of(&r), "warning: the environments differ: kernel '6.1.0-18-amd64' (base) "
                              "vs '6.1.0-20-amd64' (new)") != NULL);
    pk_result_release(&r);

    ASSERT_EQ(PKBENCH(&r, "compare", base, cand, "--strict-env", "--out", out), 1);
    ASSERT_EQ(count_lines(err_of(&r)), 1);
    ASSERT(strstr(err_of(&r), "the environments differ (--strict-env): kernel") != NULL);
    ASSERT(access(out, F_OK) != 0);
    pk_result_release(&r);

    ASSERT_EQ(
        PKBENCH(&r, "compare", base, cand, "--strict-env", "--env-keys", "cpu_model,build_type"),
        0);
    ASSERT(strstr(err_of(&r), "differ") == NULL);
    pk_result_release(&r);

    /* A pinned run against an unpinned one: the runner records settings.cpu_affinity. */
    json_t *doc = syn_doc(&(syn_series){"x/a", b, N, NULL}, 1, "6.1.0-18-amd64");
    json_object_set_new(json_object_get(doc, "settings"), "cpu_affinity", json_string("1"));
    write_doc(doc, cand);
    doc = syn_doc(&(syn_series){"x/a", a, N, NULL}, 1, "6.1.0-18-amd64");
    json_object_set_new(json_object_get(doc, "settings"), "cpu_affinity", json_string("0-1"));
    write_doc(doc, base);
    ASSERT_EQ(PKBENCH(&r, "compare", base, cand), 0);
    ASSERT(strstr(err_of(&r), "differ: cpu_affinity '0-1' (base) vs '1' (new)") != NULL);
    pk_result_release(&r);

    ASSERT_EQ(PKBENCH(&r, "compare", base, cand, "--env-keys", "Kernel!"), 1);
    ASSERT(strstr(err_of(&r), "--env-keys: 'Kernel!' is not a key name") != NULL);
    pk_result_release(&r);
}

/* The three formats; series in one file only, refused ones, --out, and the geomean row. */
TEST_IMPL(compare_formats)
{
    need_pkbench();
    enum { N = 10 };
    pks_rng rng;
    pks_rng_seed(&rng, 3);
    double a[N], b[N], c1[N], c2[N];
    lognormal(&rng, a, N, 1.5e5, 0.02);
    lognormal(&rng, b, N, 1.5e5, 0.02);
    lognormal(&rng, c1, N, 8e6, 0.02);
    lognormal(&rng, c2, N, 8e6 * 1.2, 0.02);
    char base[512], cand[512], out[512];
    tmp_path(base, sizeof base, "f-base.json");
    tmp_path(cand, sizeof cand, "f-new.json");
    tmp_path(out, sizeof out, "f-out.json");
    syn_write(base,
              (syn_series[]){{"spawn_only/processkit", a, N, NULL},
                             {"fan/processkit", c1, N, NULL},
                             {"gone/processkit", a, N, NULL},
                             {"refused/processkit", a, N, NULL}},
              4);
    syn_write(cand,
              (syn_series[]){{"spawn_only/processkit", b, N, NULL},
                             {"fan/processkit", c2, N, NULL},
                             {"new/processkit", b, N, NULL},
                             {"refused/processkit", b, 0, "refused"}},
              4);
    pk_result r;
    ASSERT_EQ(PKBENCH(&r, "compare", base, cand), 2);
    const char *t = r.out.data;
    printf("%s", t);
    ASSERT(strstr(t, "\nseries  ") != NULL && strstr(t, "  95% CI  p (Holm)  ") != NULL);
    ASSERT(strstr(t, "\nspawn_only/processkit  ") != NULL);
    ASSERT(strstr(t, "fan/processkit") != NULL && strstr(t, "regressed") != NULL);
    ASSERT(strstr(t, "\ngeomean ") != NULL);
    ASSERT(strstr(t, "only in base: gone/processkit") != NULL);
    ASSERT(strstr(t, "only in new: new/processkit") != NULL);
    ASSERT(strstr(t, "not compared: refused/processkit — refused in new") != NULL);
    ASSERT(strstr(t, "1 regressed, 0 improved, 1 unchanged, 0 undecidable; 2 missing or failed "
                     "in new.") != NULL);
    ASSERT(strstr(err_of(&r), "pkbench: regressed: fan/processkit (+") != NULL);
    pk_result_release(&r);

    ASSERT_EQ(PKBENCH(&r, "compare", base, cand, "--format", "md"), 2);
    ASSERT(strstr(r.out.data, "| series | base | new | delta | 95% CI | p (Holm) | n | bar | "
                              "verdict |\n|---|---:|") != NULL);
    ASSERT(strstr(r.out.data, "| `fan/processkit` |") != NULL);
    ASSERT(strstr(r.out.data, "**regressed**") != NULL);
    ASSERT(strstr(r.out.data, "| **geomean** |") != NULL);
    pk_result_release(&r);

    /* Above the threshold nothing regressed, but the base's gone/ and refused/ series are
     * missing from the new file or refused there: the gate fails safe (exit 2). */
    ASSERT_EQ(
        PKBENCH(&r, "compare", base, cand, "--format", "json", "--out", out, "--threshold", "25%"),
        2);
    ASSERT(r.out.data == NULL || r.out.data[0] == '\0'); /* it went to --out */
    pk_result_release(&r);
    json_t *j = load(out);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schema")), "pkbench-compare");
    ASSERT_EQ(json_integer_value(json_object_get(j, "status")), 2);
    ASSERT_EQ(json_array_size(json_object_get(j, "missing_in_new")), 2);
    ASSERT(fabs(json_real_value(json_object_get(json_object_get(j, "options"), "threshold")) -
                0.25) < 1e-12);
    json_t *s0 = json_array_get(json_object_get(j, "series"), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(s0, "name")), "spawn_only/processkit");
    ASSERT_STR_EQ(json_string_value(json_object_get(s0, "verdict")), "~");
    ASSERT_EQ(json_array_size(json_object_get(s0, "ratio_ci")), 2);
    ASSERT_STR_EQ(json_string_value(json_object_get(s0, "mwu_method")), "exact");
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "geomean"), "n")), 2);
    ASSERT_EQ(json_array_size(json_object_get(j, "only_in_base")), 1);
    ASSERT_EQ(json_array_size(json_object_get(j, "not_compared")), 1);
    json_decref(j);

    /* Reproducible: the same files and options give byte-identical output. */
    pk_result r2;
    ASSERT_EQ(PKBENCH(&r, "compare", base, cand, "--format", "json"), 2);
    ASSERT_EQ(PKBENCH(&r2, "compare", base, cand, "--format", "json"), 2);
    ASSERT_STR_EQ(r.out.data, r2.out.data);
    pk_result_release(&r);
    pk_result_release(&r2);
}

/* Missing file, garbage, another schema version, bad options: exit 1, one line, nothing written. */
TEST_IMPL(compare_bad_inputs)
{
    need_pkbench();
    enum { N = 8 };
    double a[N] = {1e5, 1e5, 1e5, 1e5, 1e5, 1e5, 1e5, 1e5};
    char good[512], garbage[512], v2[512], out[512];
    tmp_path(good, sizeof good, "good.json");
    tmp_path(garbage, sizeof garbage, "garbage.json");
    tmp_path(v2, sizeof v2, "v2.json");
    tmp_path(out, sizeof out, "out.json");
    syn_write(good, &(syn_series){"x/a", a, N, NULL}, 1);
    FILE *f = fopen(garbage, "we");
    fputs("{\"schema\": \"pkbench-results\", oops", f);
    fclose(f);
    json_t *doc = syn_doc(&(syn_series){"x/a", a, N, NULL}, 1, "6.1.0");
    json_object_set_new(doc, "schema_version", json_integer(2));
    write_doc(doc, v2);
    struct {
        const char *const args[10];
        const char *says;
        bool one_line;
    } cases[] = {
        {{"compare", "/nonexistent/base.json", good}, "/nonexistent/base.json: cannot read", 1},
        {{"compare", good, "/nonexistent/new.json"}, "/nonexistent/new.json: cannot read", 1},
        {{"compare", good, garbage}, "garbage.json: not valid JSON", 1},
        {{"compare", v2, good}, "schema_version 2 is not supported", 1},
        {{"compare", good, good, "--filter", "^nothing$"}, "no series matching --filter", 1},
        {{"compare", good, good, "--filter", "("}, "not a valid extended regular expression", 1},
        {{"compare", good}, "needs BASE.json and NEW.json", 0},
        {{"compare", good, good, good}, "extra argument", 0},
        {{"compare", good, good, "--baseline-contender", "a"}, "exactly one results file", 0},
        {{"compare", good, good, "--alpha", "2"}, "--alpha needs a number in (0, 1)", 0},
        {{"compare", good, good, "--threshold", "abc"}, "--threshold needs a percentage", 0},
        {{"compare", good, good, "--format", "xml"}, "--format needs text, md or json", 0},
        {{"check"}, "--baseline FILE is required", 0},
        {{"check", "--baseline", garbage}, "garbage.json: not valid JSON", 1},
        {{"check", "--baseline", v2}, "schema_version 2", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[16];
        int k = 0;
        for (; k < 10 && cases[i].args[k] != NULL; k++)
            argv[k] = cases[i].args[k];
        argv[k++] = "--format";
        argv[k++] = "json";
        argv[k++] = "--out";
        argv[k++] = out;
        argv[k] = NULL;
        if (strcmp(argv[0], "check") == 0)
            argv[k - 4] = NULL; /* check's --out names a results file; keep it out */
        pk_result r;
        int code = pkbench_argv(argv, &r);
        if (code != 1 || strstr(err_of(&r), cases[i].says) == NULL ||
            strncmp(err_of(&r), "pkbench: ", 9) != 0 ||
            (cases[i].one_line && count_lines(err_of(&r)) != 1))
            pk_test_fail(__FILE__, __LINE__, "case %zu: exit %d, stderr: %s", i, code, err_of(&r));
        ASSERT(r.out.data == NULL || r.out.data[0] == '\0');
        pk_result_release(&r);
        ASSERT(access(out, F_OK) != 0);
    }
}

/* ==== Real runs ============================================================================== */

/* Two quick runs of the same build never give exit 2 (0, or 3 when a series is too noisy); the
 * same pair with one series' samples multiplied by 3 gives exit 2 naming that one. (×3 and no cv
 * limit: on a loaded machine a real run's series can be too noisy for the limit, and a 1.5×
 * slowdown can drown in a neighbour's burst; the statistics' own power is checked on synthetic
 * files above, where no machine can disturb it.)
 *
 * The two runs are the two interleaved halves of one `pkbench run --aa` (A B A B ..., each pair
 * of repetitions measured within milliseconds of each other), written out as two ordinary results
 * files. Two runs made one after the other are no A/A pair on a shared VM: a whole run there can
 * be uniformly 5-10% slower than the next (every series, with tight samples), which no statistic
 * over one run's samples can tell from a regression (METHODOLOGY.md, "Checking a change for
 * regressions"); `pkbench check` answers that with its re-run, tested below. */
TEST_IMPL(compare_real_quick_runs)
{
    need_pkbench();
    pin_to_one_cpu();
    char aa[512], a[512], b[512], slow[512];
    tmp_path(aa, sizeof aa, "run-aa.json");
    tmp_path(a, sizeof a, "run-a.json");
    tmp_path(b, sizeof b, "run-b.json");
    tmp_path(slow, sizeof slow, "run-b-slow.json");
    quick_run(aa, "--aa");
    json_t *j = load(aa);
    json_t *nf = json_incref(json_object_get(json_object_get(j, "noise_floor"), "series"));
    ASSERT(nf != NULL);
    json_object_del(j, "noise_floor");
    ASSERT_EQ(json_dump_file(j, a, JSON_REAL_PRECISION(17)), 0);
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(j, "series"), i, s)
    {
        json_t *e = json_object_get(nf, json_string_value(json_object_get(s, "name")));
        ASSERT(e != NULL);
        json_object_set(s, "samples_ns", json_object_get(e, "samples_b_ns"));
        json_object_del(s, "summary");
    }
    ASSERT_EQ(json_dump_file(j, b, JSON_REAL_PRECISION(17)), 0);
    json_decref(nf);

    pk_result r;
    int code = PKBENCH(&r, "compare", a, b);
    printf("A/A, the two halves of an interleaved quick run: exit %d\n%s%s", code, r.out.data,
           err_of(&r));
    ASSERT(code == 0 || code == 3);
    pk_result_release(&r);

    /* Slow down the first series that is not a drift control threefold (a control cannot
     * regress: moved alone, it makes its scenario "machine changed"). */
    size_t pick = 0;
    json_array_foreach(json_object_get(j, "series"), i, s)
    {
        if (!json_is_true(json_object_get(s, "control"))) {
            pick = i;
            break;
        }
    }
    s = json_array_get(json_object_get(j, "series"), pick);
    char name[160];
    snprintf(name, sizeof name, "%s", json_string_value(json_object_get(s, "name")));
    json_t *x, *scaled = json_array();
    json_array_foreach(json_object_get(s, "samples_ns"), i, x)
    {
        json_array_append_new(scaled, json_real(json_number_value(x) * 3));
    }
    json_object_set_new(s, "samples_ns", scaled);
    ASSERT_EQ(json_dump_file(j, slow, JSON_REAL_PRECISION(17)), 0);
    json_decref(j);

    code = PKBENCH(&r, "compare", a, slow, "--format", "json", "--cv-limit", "none");
    char names[1024], listed[1100];
    regressed_names(r.out.data, names, sizeof names);
    printf("x3 on %s: exit %d, regressed: %s\n", name, code, names);
    ASSERT_EQ(code, 2);
    snprintf(listed, sizeof listed, ",%s,", names);
    snprintf(names, sizeof names, ",%s,", name);
    ASSERT(strstr(listed, names) != NULL);
    ASSERT(strstr(err_of(&r), "pkbench: regressed: ") != NULL);
    pk_result_release(&r);
}

/* run --aa writes a noise floor per series that compare then uses; run --interleave samples in
 * rounds. Both files validate against the schema. */
TEST_IMPL(pkbench_run_aa_and_interleave)
{
    if (PK_TEST_UNDER_ASAN) /* ./x test's critical path is the ASan lane: 37 s there */
        pk_test_skip_gate("build",
                          "%s: the Debug suite runs it (pkbench's code runs under ASan in "
                          "the other pkbench tests)",
                          "pinned pkbench runs, timed");
    need_pkbench();
    pk_test_need_jsonschema();
    pin_to_one_cpu();
    ASSERT_EQ(pkb_profile_quick.repetitions, QUICK_N); /* the profile pkbench runs below */
    char aa[512], il[512];
    tmp_path(aa, sizeof aa, "aa.json");
    tmp_path(il, sizeof il, "interleave.json");
    quick_run(aa, "--aa");
    validate(aa);
    json_t *j = load(aa);
    json_t *settings = json_object_get(j, "settings");
    ASSERT(json_is_true(json_object_get(settings, "aa")));
    ASSERT(json_is_true(json_object_get(settings, "interleave")));
    json_t *nf = json_object_get(j, "noise_floor");
    ASSERT(fabs(json_number_value(json_object_get(nf, "alpha")) - 0.05) < 1e-12);
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(j, "series"), i, s)
    {
        const char *name = json_string_value(json_object_get(s, "name"));
        json_t *e = json_object_get(json_object_get(nf, "series"), name);
        ASSERT(e != NULL);
        double mde = json_number_value(json_object_get(e, "mde"));
        printf("%s: noise floor %.1f%%\n", name, 100 * mde);
        ASSERT_EQ(json_array_size(json_object_get(e, "samples_b_ns")), QUICK_N);
        ASSERT_EQ(json_array_size(json_object_get(s, "samples_ns")), QUICK_N);
        /* The floor is the MDE of the file's own A and B samples: recomputed here with the seed
         * the file names (samples and floor are stored to 10 digits, hence the tolerance). */
        double xa[QUICK_N], xb[QUICK_N], again;
        for (size_t k = 0; k < QUICK_N; k++) {
            xa[k] = json_number_value(json_array_get(json_object_get(s, "samples_ns"), k));
            xb[k] = json_number_value(json_array_get(json_object_get(e, "samples_b_ns"), k));
        }
        json_t *seed = json_object_get(nf, "seed"),
               *iterations = json_object_get(nf, "bootstrap_iterations");
        ASSERT(json_is_integer(seed) && json_is_integer(iterations));
        ASSERT_OK(pks_mde(xa, QUICK_N, xb, QUICK_N, 0.05,
                          &(pks_bootstrap){.seed = (uint64_t)json_integer_value(seed),
                                           .iterations = (size_t)json_integer_value(iterations)},
                          NULL, &again, NULL));
        if (!(fabs(again - mde) <= 1e-8 + 1e-6 * mde))
            pk_test_fail(__FILE__, __LINE__, "%s: the file's floor %.10g, its samples' MDE %.10g",
                         name, mde, again);
        ASSERT_EQ(json_array_size(json_object_get(s, "procs_running")), QUICK_N);
    }
    ASSERT_EQ(json_array_size(json_object_get(j, "series")), 3);
    /* Google Benchmark's records: a record per repetition and 4 aggregates per series, in every
     * mode. */
    ASSERT_EQ(json_array_size(json_object_get(j, "benchmarks")), 3 * (QUICK_N + 4));
    json_decref(j);

    /* Compared with itself, every delta is 0: nothing regresses, and the floor is in the bar. */
    pk_result r;
    int code = PKBENCH(&r, "compare", aa, aa, "--format", "json");
    ASSERT(code == 0 || code == 3);
    j = json_loads(r.out.data, 0, NULL);
    ASSERT(j != NULL);
    ASSERT(json_is_true(json_object_get(json_object_get(j, "noise_floor"), "known")));
    json_array_foreach(json_object_get(j, "series"), i, s)
    {
        ASSERT(json_is_number(json_object_get(s, "noise_floor")) ||
               json_is_null(json_object_get(s, "noise_floor")));
        ASSERT(json_number_value(json_object_get(s, "bar")) >=
               json_number_value(json_object_get(s, "noise_floor")));
    }
    json_decref(j);
    pk_result_release(&r);
    /* At another alpha the floor is recomputed from the A and B samples the file keeps. */
    ASSERT(PKBENCH(&r, "compare", aa, aa, "--alpha", "0.01") != 1);
    pk_result_release(&r);

    quick_run(il, "--interleave");
    validate(il);
    j = load(il);
    ASSERT(json_is_true(json_object_get(json_object_get(j, "settings"), "interleave")));
    ASSERT(json_is_false(json_object_get(json_object_get(j, "settings"), "aa")));
    ASSERT(json_object_get(j, "noise_floor") == NULL);
    ASSERT(json_is_true(json_object_get(j, "complete")));
    json_array_foreach(json_object_get(j, "series"), i, s)
    {
        ASSERT_STR_EQ(json_string_value(json_object_get(s, "status")), "measured");
        ASSERT_EQ(json_array_size(json_object_get(s, "samples_ns")), QUICK_N);
        /* one iteration count, sized once, for every round */
        json_t *it = json_object_get(s, "iterations");
        for (size_t k = 1; k < json_array_size(it); k++)
            ASSERT_EQ(json_integer_value(json_array_get(it, k)),
                      json_integer_value(json_array_get(it, 0)));
    }
    json_decref(j);
}

/* check end to end, on the real benchmarks: it runs, compares, and re-runs what regressed
 * before it exits 2. The baseline is a real quick run with one series made 10× faster than
 * measured, so that series regresses in both the run and the re-run on any machine, however
 * loaded (a loaded machine only makes the new runs slower). Whether a regression that does not
 * repeat is left unconfirmed is checked on prepared runs in test_regress.c, where the outcome
 * cannot depend on the machine. */
TEST_IMPL(pkbench_check_confirms_regressions)
{
    if (PK_TEST_UNDER_ASAN) /* ./x test's critical path is the ASan lane: 37 s there */
        pk_test_skip_gate("build",
                          "%s: the Debug suite runs it (pkbench's code runs under ASan in "
                          "the other pkbench tests)",
                          "pinned pkbench runs, timed");
    need_pkbench();
    pin_to_one_cpu();
    char base[512], fast[512], out[512], rerun[512];
    tmp_path(base, sizeof base, "check-base.json");
    tmp_path(fast, sizeof fast, "check-base-fast.json");
    tmp_path(out, sizeof out, "check.json");
    tmp_path(rerun, sizeof rerun, "check-rerun.json");
    quick_run(base, NULL);

    /* The baseline's first series that is not a drift control, 10x faster than measured (a
     * control cannot regress: moved alone, it makes its scenario "machine changed"). */
    json_t *j = load(base);
    size_t pick = 0, i;
    json_t *s, *v;
    json_array_foreach(json_object_get(j, "series"), i, s)
    {
        if (!json_is_true(json_object_get(s, "control"))) {
            pick = i;
            break;
        }
    }
    s = json_array_get(json_object_get(j, "series"), pick);
    char name[160];
    snprintf(name, sizeof name, "%s", json_string_value(json_object_get(s, "name")));
    json_array_foreach(json_object_get(s, "samples_ns"), i, v)
    {
        json_real_set(v, json_number_value(v) / 10);
    }
    ASSERT_EQ(json_dump_file(j, fast, JSON_REAL_PRECISION(17)), 0);
    json_decref(j);

    pk_result r;
    /* Without the drift correction: between the baseline's run and the check's a loaded machine
     * can move by more than a correction is trusted for (39% once in CI), which would make every
     * verdict "machine changed"; a 10x step is far beyond any such drift, and the correction has
     * its own tests (test_drift.c). */
    int code = PKBENCH(&r, "check", "--baseline", fast, "--profile", "quick", "--no-prime",
                       "--filter", QUICK3, "--settle", "0.01", "--out", out, "--cv-limit", "none",
                       "--no-drift-correction");
    printf("check against a baseline with %s 10x faster: exit %d\n%s%s", name, code, r.out.data,
           err_of(&r));
    ASSERT_EQ(code, 2);
    /* (Another series may drift past the bar on a busy machine; this one must be among those
     * named, first as re-run, then as repeated.) */
    const char *e = err_of(&r), *rerun_line = strstr(e, "pkbench: re-running ");
    const char *repeated = strstr(e, "pkbench: regressed (repeated in the re-run):");
    ASSERT(rerun_line != NULL && repeated != NULL);
    char says[400];
    snprintf(says, sizeof says, " %s (+", name);
    ASSERT(strstr(rerun_line, says) != NULL && strstr(rerun_line, says) < repeated);
    ASSERT(strstr(repeated, says) != NULL);
    snprintf(says, sizeof says, "confirmed:    %s (+", name);
    ASSERT(strstr(r.out.data, says) != NULL);
    ASSERT(strstr(r.out.data, "Conclusion: ") != NULL);
    ASSERT(strstr(e, out) != NULL && strstr(e, rerun) != NULL);
    pk_result_release(&r);
    /* Both files are kept; the re-run measured only what regressed, that series among them. */
    ASSERT_EQ(access(out, R_OK), 0);
    j = load(rerun);
    bool found = false;
    json_array_foreach(json_object_get(j, "series"), i, s)
    {
        found |= strcmp(json_string_value(json_object_get(s, "name")), name) == 0;
    }
    ASSERT(found);
    ASSERT_LE(json_array_size(json_object_get(j, "series")), 3);
    json_decref(j);

    /* A missing baseline fails before anything is measured. */
    ASSERT_EQ(PKBENCH(&r, "check", "--baseline", "/nonexistent/base.json"), 1);
    ASSERT_EQ(count_lines(err_of(&r)), 1);
    pk_result_release(&r);
}
