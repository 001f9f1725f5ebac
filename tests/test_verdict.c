/*
 * Results a reader can trust: the report and `pkbench compare` give one verdict (the item
 * 1, reproduced in a synthetic file), the regression gates fail safe (a series missing or failed
 * in the new file is exit 2, one refused for a reason of the host exit 3, a profile or settings
 * mismatch is named, a base without a noise floor is warned about), the inputs are bounded
 * (file size, physical values, compare's cost in samples), and the report's tables and figures
 * show every repetition. A disturbed machine has its own file (test_disturbed.c).
 */
#define _GNU_SOURCE
#include "test.h"

#include "common/stats.h"
#include "regress/compare.h"
#include "results/results.h"
#include "results/verdict.h"
#include "suites/suite.h"
#include "synth.h"
#include "verdict_test.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

/* ==== Synthetic files ==========================================================================
 */

typedef struct syn {
    const char *name; /* scenario/contender */
    const double *x;
    size_t n;
    const char *status; /* NULL: measured */
    bool environmental; /* refused for a reason of the host */
} syn;

static json_t *doc_of(const syn *s, size_t n, const char *profile, int reps)
{
    json_t *env = json_pack(
        "{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:[f,f,f], s:s, s:s, s:n, "
        "s:n, s:s, s:s}",
        "cpu_model", "Synthetic CPU", "logical_cpus", 2, "kernel", "6.1.0", "distribution",
        "Debian 12", "libc", "glibc 2.36", "compiler", "GNU 12", "compiler_flags", " -O3 ",
        "build_type", "Release", "git_commit", "0000000", "git_dirty", 0, "processes_start", 100,
        "threads_start", 200, "loadavg_start", 0.1, 0.1, 0.1, "aslr", "full", "thp", "madvise",
        "cpufreq_governor", "cgroup_cpu_max", "spawn_mechanism", "clone3", "containment", "cgroup");
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *slash = strchr(s[i].name, '/');
        json_t *samples = json_array();
        for (size_t k = 0; k < s[i].n; k++)
            json_array_append_new(samples, json_real(s[i].x[k]));
        json_t *o = json_pack("{s:s, s:s#, s:s, s:b, s:s, s:s, s:f, s:o}", "name", s[i].name,
                              "scenario", s[i].name, (int)(slash - s[i].name), "contender",
                              slash + 1, "baseline", strcmp(slash + 1, "posix_spawn") == 0,
                              "status", s[i].status ? s[i].status : "measured", "unit", "runs/s",
                              "work_per_iteration", 1.0, "samples_ns", samples);
        if (s[i].status != NULL)
            json_object_set_new(o, "reason", json_string("no cgroup v2 delegated to us"));
        if (s[i].environmental)
            json_object_set_new(o, "environmental", json_true());
        json_array_append_new(arr, o);
    }
    return json_pack("{s:s, s:i, s:s, s:s, s:s, s:b, s:[s], s:o, s:{s:i, s:f, s:f, s:b}, "
                     "s:{s:b, s:i, s:f, s:[], s:b}, s:o, s:[], s:{}}",
                     "schema", "pkbench-results", "schema_version", 1, "suite", "scenarios",
                     "profile", profile, "created", "2026-01-01T00:00:00Z", "complete", 1,
                     "command", "pkbench", "environment", env, "settings", "repetitions", reps,
                     "min_time_s", strcmp(profile, "full") == 0 ? 0.25 : 0.03, "warmup_s",
                     strcmp(profile, "full") == 0 ? 10.0 : 0.05, "interleave", 1, "priming",
                     "performed", 0, "batches", 0, "seconds", 0.0, "batch_ms", "stable", 0,
                     "series", arr, "benchmarks", "context");
}

static void write_doc(json_t *doc, const char *path)
{
    ASSERT_EQ(json_dump_file(doc, path, JSON_REAL_PRECISION(17)), 0);
    json_decref(doc);
}

static void lognormal(pks_rng *rng, double *x, size_t n, double median, double sigma)
{
    for (size_t i = 0; i < n; i++)
        x[i] = median * exp(sigma * pks_rng_normal(rng));
}

static const char *err_of(const pk_result *r)
{
    return r->err.data ? r->err.data : "";
}

/* ==== One verdict ==============================================================================
 */

TEST_IMPL(report_and_compare_agree_on_a_disturbed_series)
{
    /* Item 1 as it was measured: processkit's fan-out, the first 13 of 20 repetitions while
     * something else used the CPUs (9 to 13.6 ms), the last 7 equal to posix_spawn's 6.7 to
     * 7.4 ms. The mean says +39%, "not met"; the verdict says it cannot be decided. */
    pk_test_need_pkbench();
    double pk[20], ps[20], fork[20];
    for (int i = 0; i < 13; i++)
        pk[i] = 9.0e6 + i * (4.6e6 / 12);
    for (int i = 13; i < 20; i++)
        pk[i] = 6.7e6 + (i - 13) * (0.7e6 / 6);
    for (int i = 0; i < 20; i++)
        ps[i] = 6.7e6 + (i % 7) * (0.7e6 / 6) + i * 1e3;
    pks_rng rng;
    pks_rng_seed(&rng, 5);
    lognormal(&rng, fork, 20, 14e6, 0.03);
    char path[512], out[512];
    pk_test_tmp_path(path, sizeof path, "item1.json");
    pk_test_tmp_path(out, sizeof out, "item1-report");
    write_doc(doc_of((syn[]){{"concurrent_fan_out/processkit", pk, 20, NULL, false},
                             {"concurrent_fan_out/posix_spawn", ps, 20, NULL, false},
                             {"concurrent_fan_out/fork_exec", fork, 20, NULL, false}},
                     3, "full", 20),
              path);
    ASSERT_EQ(pk_test_report_agrees(path, out), 2);
    char md[700];
    snprintf(md, sizeof md, "%s/item1.md", out);
    char *text = pk_test_slurp(md);
    ASSERT_STR_EQ(pk_test_report_word(text, "concurrent_fan_out", "processkit"),
                  "undecidable (too noisy)");
    ASSERT(strstr(text, "| `processkit` ≤ +5% vs `posix_spawn` in `concurrent_fan_out` |") != NULL);
    const char *target = strstr(text, "in `concurrent_fan_out` |");
    ASSERT(target != NULL && strstr(target, "| undecidable (too noisy") != NULL);
    ASSERT(strstr(text, "| not met") == NULL); /* the +39% of the mean was "not met" */
    ASSERT(strstr(text, "undecidable in `concurrent_fan_out`") != NULL);
    free(text);

    /* The reviewed fixture: every verdict of its report is compare's. */
    pk_test_tmp_path(out, sizeof out, "fixture-report");
    ASSERT_GE(pk_test_report_agrees(PK_TEST_DATA_DIR "/compare-fixture.json", out), 10);
}

/* ==== Fail-safe gates ===========================================================================
 */

TEST_IMPL(compare_fails_safe_on_missing_and_failed_series)
{
    pk_test_need_pkbench();
    double a[12], b[12];
    pks_rng rng;
    pks_rng_seed(&rng, 9);
    lognormal(&rng, a, 12, 1e5, 0.01);
    lognormal(&rng, b, 12, 1e5, 0.01);
    char base[512], cand[512];
    pk_test_tmp_path(base, sizeof base, "gate-base.json");
    pk_test_tmp_path(cand, sizeof cand, "gate-new.json");
    write_doc(doc_of((syn[]){{"s/keep", a, 12, NULL, false},
                             {"s/gone", a, 12, NULL, false},
                             {"s/failed", a, 12, NULL, false}},
                     3, "quick", 12),
              base);
    /* gone: absent from the new file; failed: failed there. Nothing else changed. */
    write_doc(doc_of((syn[]){{"s/keep", b, 12, NULL, false}, {"s/failed", b, 0, "failed", false}},
                     2, "quick", 12),
              cand);
    pk_result r;
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "compare", base, cand), 2);
    printf("%s%s", r.out.data, err_of(&r));
    ASSERT(strstr(err_of(&r), "missing in new: s/gone (absent from the new file), s/failed "
                              "(failed in new: ") != NULL);
    ASSERT(strstr(r.out.data, "missing in new (the base measured them; counted as regressed): "
                              "s/gone") != NULL);
    ASSERT(strstr(r.out.data, "not compared: s/failed — failed in new: no cgroup v2 delegated "
                              "to us; counted as regressed") != NULL);
    pk_result_release(&r);

    /* Refused for a reason of the host, and nothing missing: exit 3, the reason named. */
    write_doc(doc_of((syn[]){{"s/keep", a, 12, NULL, false}, {"s/cgroup", a, 12, NULL, false}}, 2,
                     "quick", 12),
              base);
    write_doc(doc_of((syn[]){{"s/keep", b, 12, NULL, false}, {"s/cgroup", b, 0, "refused", true}},
                     2, "quick", 12),
              cand);
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "compare", base, cand), 3);
    ASSERT(strstr(err_of(&r), "could not run in new: s/cgroup (refused in new: no cgroup v2 "
                              "delegated to us)") != NULL);
    pk_result_release(&r);
    /* The same refusal without `environmental` is the code's: exit 2. */
    write_doc(doc_of((syn[]){{"s/keep", b, 12, NULL, false}, {"s/cgroup", b, 0, "refused", false}},
                     2, "quick", 12),
              cand);
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "compare", base, cand, "--format", "json"), 2);
    json_t *j = json_loads(r.out.data, 0, NULL);
    ASSERT_EQ(json_array_size(json_object_get(j, "missing_in_new")), 1);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "counts"), "missing")), 1);
    json_decref(j);
    pk_result_release(&r);
    /* A --filter that leaves the missing series out compares what it selects: exit 0. */
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "compare", base, cand, "--filter", "^s/keep$"), 0);
    pk_result_release(&r);
}

TEST_IMPL(check_fails_on_a_series_the_run_lacks)
{
    /* The baseline has a series the suite no longer produces: check's run cannot measure it,
     * and the check fails (exit 2) naming it, without a confirming re-run. */
    pk_test_need_pkbench();
    char base[512], out[512];
    pk_test_tmp_path(base, sizeof base, "lack-base.json");
    pk_test_tmp_path(out, sizeof out, "lack-run.json");
    pk_result r;
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "run", "--profile", "quick", "--no-prime", "--filter",
                              "^spawn_only/posix_spawn$", "--settle", "0.01", "--out", base),
              0);
    pk_result_release(&r);
    json_error_t e;
    json_t *j = json_load_file(base, 0, &e);
    ASSERT(j != NULL);
    json_t *ghost = json_deep_copy(json_array_get(json_object_get(j, "series"), 0));
    json_object_set_new(ghost, "name", json_string("spawn_only/ghost"));
    json_object_set_new(ghost, "contender", json_string("ghost"));
    json_object_set_new(ghost, "baseline", json_false());
    json_array_append_new(json_object_get(j, "series"), ghost);
    write_doc(j, base);
    /* A threshold nothing reaches: the only way to fail is the missing series. */
    int code =
        PK_TEST_PKBENCH(&r, "check", "--baseline", base, "--no-prime", "--filter",
                        "^spawn_only/(posix_spawn|ghost)$", "--threshold", "999", "--out", out);
    printf("%s%s", r.out.data ? r.out.data : "", err_of(&r));
    ASSERT_EQ(code, 2);
    ASSERT(strstr(err_of(&r), "missing in new: spawn_only/ghost (absent from the new file)") !=
           NULL);
    ASSERT(strstr(err_of(&r), "re-running") == NULL);
    pk_result_release(&r);
}

TEST_IMPL(compare_names_settings_and_a_missing_noise_floor)
{
    pk_test_need_pkbench();
    double a[20], b[20];
    pks_rng rng;
    pks_rng_seed(&rng, 13);
    lognormal(&rng, a, 20, 1e5, 0.01);
    lognormal(&rng, b, 20, 1e5, 0.01);
    char full[512], quick[512];
    pk_test_tmp_path(full, sizeof full, "full.json");
    pk_test_tmp_path(quick, sizeof quick, "quick.json");
    write_doc(doc_of((syn[]){{"s/a", a, 20, NULL, false}}, 1, "full", 20), full);
    write_doc(doc_of((syn[]){{"s/a", b, 10, NULL, false}}, 1, "quick", 10), quick);
    pk_result r;
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "compare", full, quick), 0);
    const char *e = err_of(&r);
    printf("%s", e);
    ASSERT(strstr(e, "warning: the runs were made with different settings: profile 'full' "
                     "(base) vs 'quick' (new); repetitions '20' (base) vs '10' (new); "
                     "min_time_s '0.25' (base) vs '0.03' (new); warmup_s '10' (base) vs '0.05' "
                     "(new)") != NULL);
    ASSERT(strstr(r.out.data, "run settings differ: profile 'full' (base) vs 'quick' (new)") !=
           NULL);
    ASSERT(strstr(e, "has no noise floor") != NULL && strstr(e, "pkbench run --aa") != NULL &&
           strstr(e, "pkbench check") != NULL);
    pk_result_release(&r);
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "compare", full, quick, "--strict-env"), 1);
    ASSERT(strstr(err_of(&r), "the run settings differ (--strict-env): profile") != NULL);
    pk_result_release(&r);

    /* A base with a noise floor: no warning; one file's contenders: no warning either. */
    json_t *doc = doc_of((syn[]){{"s/a", a, 20, NULL, false}}, 1, "quick", 10);
    json_object_set_new(
        doc, "noise_floor",
        json_pack("{s:f, s:{s:{s:f}}}", "alpha", 0.05, "series", "s/a", "mde", 0.02));
    write_doc(doc, full);
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "compare", full, quick), 0);
    ASSERT(strstr(err_of(&r), "noise floor") == NULL);
    ASSERT(strstr(err_of(&r), "different settings") == NULL);
    pk_result_release(&r);
    write_doc(
        doc_of((syn[]){{"s/posix_spawn", a, 20, NULL, false}, {"s/other", b, 20, NULL, false}}, 2,
               "quick", 20),
        full);
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "compare", full, "--baseline-contender", "posix_spawn"), 0);
    ASSERT(strstr(err_of(&r), "noise floor") == NULL);
    pk_result_release(&r);
}

/* ==== Bounded inputs ============================================================================
 */

TEST_IMPL(results_size_and_values_bounded)
{
    char err[512], path[512];
    pkb_results r;
    /* A regular file one byte over the limit: refused from its size, nothing read. */
    pk_test_tmp_path(path, sizeof path, "huge.json");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT(fd >= 0);
    ASSERT_EQ(ftruncate(fd, PKB_RESULTS_MAX_FILE_BYTES + 1), 0);
    close(fd);
    long before = pk_test_status_kib("VmHWM"); /* first: the peak only grows */
    ASSERT_EQ(pkb_results_load(path, &r, err, sizeof err), -EFBIG);
    ASSERT_LT(pk_test_status_kib("VmHWM") - before, 8 * 1024);
    unlink(path);
    /* A device that never ends: refused once the limit is passed, memory bounded by it (it
     * grew to 2 GiB before). */
    before = pk_test_status_kib("VmHWM");
    ASSERT_EQ(pkb_results_load("/dev/zero", &r, err, sizeof err), -EFBIG);
    long grew = pk_test_status_kib("VmHWM") - before;
    printf("# %s; peak memory grew by %ld KiB\n", err, grew);
    ASSERT(strstr(err, "larger than 64 MiB, the limit for a results file") != NULL);
    /* Twice the limit while the buffer doubles (ASan's quarantine keeps every realloc'd one:
     * about 3.5x there); far from the 2 GiB it took before. */
    ASSERT_LT(grew, 320 * 1024);

    /* Values outside physical bounds, each refused with the field named. */
    static const struct {
        const char *what, *want;
    } cases[] = {
        {"work", "series[0].work_per_iteration is not a number from 0 to 1e+12"},
        {"sample", "series[0].samples_ns[1] is not a positive time of at most one day"},
        {"repetitions", "settings.repetitions is 0, outside [1, 1e+06]"},
        {"batch", "priming.batch_ms[0] is not a time from 0 to one day"},
        {"cpus", "environment.logical_cpus is 0, outside [1, 65536]"},
        {"attempt", "series[0].attempt_used 3 names no attempt (1 recorded)"},
    };
    double x[] = {1e5, 1e5, 1e5};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *doc = doc_of((syn[]){{"s/a", x, 3, NULL, false}}, 1, "quick", 3);
        json_t *s0 = json_array_get(json_object_get(doc, "series"), 0);
        if (strcmp(cases[i].what, "work") == 0)
            json_object_set_new(s0, "work_per_iteration", json_real(1e308));
        else if (strcmp(cases[i].what, "sample") == 0)
            json_array_set_new(json_object_get(s0, "samples_ns"), 1, json_real(8.64e13 * 1.01));
        else if (strcmp(cases[i].what, "repetitions") == 0)
            json_object_set_new(json_object_get(doc, "settings"), "repetitions", json_integer(0));
        else if (strcmp(cases[i].what, "batch") == 0)
            json_array_append_new(json_object_get(json_object_get(doc, "priming"), "batch_ms"),
                                  json_real(-1));
        else if (strcmp(cases[i].what, "cpus") == 0)
            json_object_set_new(json_object_get(doc, "environment"), "logical_cpus",
                                json_integer(0));
        else
            json_object_set_new(s0, "attempt_used", json_integer(3));
        pk_test_tmp_path(path, sizeof path, "bounds.json");
        write_doc(doc, path);
        ASSERT_EQ(pkb_results_load(path, &r, err, sizeof err), -EBADMSG);
        if (strstr(err, cases[i].want) == NULL)
            pk_test_fail(__FILE__, __LINE__, "%s: got \"%s\", want \"%s\"", cases[i].what, err,
                         cases[i].want);
    }
    /* The largest sample is one day, and it loads. */
    double day[] = {8.64e13, 8.64e13};
    pk_test_tmp_path(path, sizeof path, "day.json");
    write_doc(doc_of((syn[]){{"s/a", day, 2, NULL, false}}, 1, "quick", 2), path);
    ASSERT_OK(pkb_results_load(path, &r, err, sizeof err));
    ASSERT(isfinite(r.series[0].sum.mean) && isfinite(r.series[0].sum.sd));
    pkb_results_free(&r);
}

TEST_IMPL(compare_large_samples)
{
    /* 20,000 and 200,000 samples a side: the bootstrap draws each resample's median directly,
     * so compare costs a sort, not 10,000 of them (21 s and over 60 s before). The test's
     * timeout is the bound; the elapsed time is printed. */
    pk_test_need_pkbench();
    static const size_t sizes[] = {20000, 200000};
    for (size_t k = 0; k < 2; k++) {
        size_t n = sizes[k];
        double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        pks_rng rng;
        pks_rng_seed(&rng, 21);
        lognormal(&rng, a, n, 1e5, 0.05);
        lognormal(&rng, b, n, 1.02e5, 0.05);
        char base[512], cand[512];
        pk_test_tmp_path(base, sizeof base, "big-base.json");
        pk_test_tmp_path(cand, sizeof cand, "big-new.json");
        write_doc(doc_of((syn[]){{"s/a", a, n, NULL, false}}, 1, "quick", 10), base);
        write_doc(doc_of((syn[]){{"s/a", b, n, NULL, false}}, 1, "quick", 10), cand);
        free(a);
        free(b);
        int64_t t0 = pk_test_now_ms();
        pk_result r;
        ASSERT_EQ(
            PK_TEST_PKBENCH(&r, "compare", base, cand, "--format", "json", "--threshold", "1"), 2);
        printf("# %zu samples a side: pkbench compare took %lld ms\n", n,
               (long long)(pk_test_now_ms() - t0));
        json_t *j = json_loads(r.out.data, 0, NULL);
        const json_t *row = json_array_get(json_object_get(j, "series"), 0);
        const json_t *ci = json_object_get(row, "ratio_ci");
        double lo = json_number_value(json_array_get(ci, 0)),
               hi = json_number_value(json_array_get(ci, 1));
        /* A 2% shift: the CI is narrow around 1.02 and excludes 1. */
        ASSERT(lo > 1.005 && hi < 1.035 && lo < hi);
        ASSERT_STR_EQ(json_string_value(json_object_get(row, "verdict")), "regressed");
        json_decref(j);
        pk_result_release(&r);
    }
}

/* The bootstrap of a median drawn directly (samples over PKS_BOOTSTRAP_RESAMPLE_MAX) has the
 * distribution of the classic one: against a one-value candidate, the CI of c / median(base) is
 * the classic resampling's, computed here the slow way, for odd and even sizes. A sample with
 * wide gaps between its values makes an off-by-one order statistic move the CI by far more
 * than the Monte Carlo error. */
TEST_IMPL(stats_bootstrap_direct_matches_resampling)
{
    static const size_t sizes[] = {101, 102};
    for (size_t k = 0; k < 2; k++) {
        size_t n = sizes[k];
        double base[102], one = 1500, w[102];
        for (size_t i = 0; i < n; i++)
            base[i] = 1000 + 10 * (double)((i * 37) % n); /* 1000..2010, shuffled */
        pks_interval fast;
        ASSERT_OK(pks_bootstrap_ratio(base, n, &one, 1, &(pks_bootstrap){.seed = 4}, NULL, &fast));
        enum { B = 20000 };
        double *ratios = malloc(B * sizeof *ratios);
        pks_rng rng;
        pks_rng_seed(&rng, 99);
        for (size_t it = 0; it < B; it++) {
            for (size_t i = 0; i < n; i++)
                w[i] = base[pks_rng_below(&rng, n)];
            double m;
            ASSERT_OK(pks_median(w, n, NULL, &m));
            ratios[it] = one / m;
        }
        double lo, hi;
        ASSERT_OK(pks_quantile(ratios, B, 0.025, NULL, &lo));
        ASSERT_OK(pks_quantile(ratios, B, 0.975, NULL, &hi));
        free(ratios);
        printf("# n = %zu: direct [%.5f, %.5f], resampled [%.5f, %.5f]\n", n, fast.lo, fast.hi, lo,
               hi);
        /* one order statistic apart is 10 / 1500 = 0.67%; the Monte Carlo error about 0.1% */
        ASSERT(fabs(fast.lo / lo - 1) < 0.003);
        ASSERT(fabs(fast.hi / hi - 1) < 0.003);
    }
}

/* ==== Tables and figures ========================================================================
 */

TEST_IMPL(report_tables_and_figures_show_every_repetition)
{
    /* A scenario spanning 20x (a log axis), with two disturbed repetitions and a re-measured
     * series; an environment with a null and a value with blanks around it. */
    double fast[12], slow[12];
    pks_rng rng;
    pks_rng_seed(&rng, 17);
    lognormal(&rng, fast, 12, 213e3, 0.02);
    lognormal(&rng, slow, 12, 4.2e6, 0.02);
    json_t *doc = doc_of((syn[]){{"spawn_only/posix_spawn", fast, 12, NULL, false},
                                 {"spawn_only/glib", slow, 12, NULL, false}},
                         2, "quick", 12);
    json_t *glib = json_array_get(json_object_get(doc, "series"), 1);
    json_t *flags = json_array();
    for (int i = 0; i < 12; i++)
        json_array_append_new(flags, json_boolean(i == 3 || i == 7));
    json_object_set_new(glib, "disturbed", flags);
    json_object_set_new(glib, "attempts",
                        json_pack("[{s:[f]}, {s:[f]}]", "samples_ns", 1e6, "samples_ns", 1e6));
    json_object_set_new(glib, "attempt_used", json_integer(1));
    char path[512], out[512], file[700];
    pk_test_tmp_path(path, sizeof path, "figs.json");
    pk_test_tmp_path(out, sizeof out, "figs");
    write_doc(doc, path);
    char err[512];
    int rc = pkb_report_render(path, out, NULL, err, sizeof err);
    if (rc == PK_ENOTFOUND || rc == -EIO)
        pk_test_skip_gate(strstr(err, "gnuplot") ? "package:gnuplot-nox"
                                                 : "package:python3-matplotlib",
                          "gnuplot or matplotlib cannot run here: %s", err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "report: %s", err);

    snprintf(file, sizeof file, "%s/figs.md", out);
    char *md = pk_test_slurp(file);
    /* one unit per column, named in the header; no literal null, no blanks around a value */
    ASSERT(strstr(md, "| contender | median (µs) | mean ± sd (µs) |") != NULL);
    ASSERT(strstr(md, "| `glib` (2/12 disturbed[^noisy]; re-measured, attempt 2 kept"
                      "[^remeasured]) | 4,") != NULL);
    ASSERT(strstr(md, " ms |") == NULL && strstr(md, " ms ±") == NULL);
    ASSERT(strstr(md, "| `compiler_flags` | -O3 |") != NULL);
    ASSERT(strstr(md, "| `cpufreq_governor` | n/a |") != NULL);
    ASSERT(strstr(md, "| null |") == NULL && strstr(md, "|  ") == NULL);
    ASSERT(strstr(md, "[^remeasured]: ") != NULL);
    free(md);

    snprintf(file, sizeof file, "%s/figs-spawn_only.dat", out);
    char *dat = pk_test_slurp(file);
    /* every repetition, its disturbed flag; the bars' labels carry the unit */
    const char *points = strstr(dat, "# block 1");
    ASSERT(points != NULL);
    size_t rows = 0, marked = 0;
    for (const char *l = strchr(points, '\n'); l != NULL && l[1] != '\0'; l = strchr(l + 1, '\n')) {
        if (l[1] == '#' || l[1] == '\n')
            continue;
        rows++;
        const char *end = strchr(l + 1, '\n');
        marked += end != NULL && end[-1] == '1';
    }
    ASSERT_EQ(rows, 24);
    ASSERT_EQ(marked, 2);
    ASSERT(strstr(dat, "\tglib\t") != NULL && strstr(dat, " µs\t0\t12\t1\n") != NULL);
    free(dat);
    snprintf(file, sizeof file, "%s/figs-spawn_only.gp", out);
    char *gp = pk_test_slurp(file);
    ASSERT(strstr(gp, "set logscale y") != NULL && strstr(gp, "disturbed repetition") != NULL);
    free(gp);
    snprintf(file, sizeof file, "%s/figs-spawn_only.py", out);
    char *py = pk_test_slurp(file);
    ASSERT(strstr(py, "LOG = True") != NULL && strstr(py, "(re-measured)") != NULL);
    free(py);
    snprintf(file, sizeof file, "%s/figs-spawn_only.matplotlib.png", out);
    ASSERT(access(file, F_OK) == 0);

    /* Within 10x the axis stays linear. */
    lognormal(&rng, slow, 12, 1.5e6, 0.02);
    write_doc(doc_of((syn[]){{"spawn_only/posix_spawn", fast, 12, NULL, false},
                             {"spawn_only/glib", slow, 12, NULL, false}},
                     2, "quick", 12),
              path);
    ASSERT_OK(pkb_report_render(path, out, &(pkb_report_options){0}, err, sizeof err));
    snprintf(file, sizeof file, "%s/figs-spawn_only.gp", out);
    gp = pk_test_slurp(file);
    ASSERT(strstr(gp, "set logscale y") == NULL);
    free(gp);
}
