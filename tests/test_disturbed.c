/*
 * A disturbed machine: a CPU hog beside a run changes no conclusion. Through the measured rounds
 * (interleaved rounds spread it, the marks catch it, the too-disturbed series are measured again)
 * and through the calibration round (the iteration counts come from undisturbed calls: the
 * series are calibrated again once it is gone).
 */
#define _GNU_SOURCE
#include "test.h"

#include "synth.h"
#include "verdict_test.h"
#include "run/run.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every run here, plain or beside the hog, settles briefly and alike: what a busy loop does to the
 * conclusions is under test, not the settling (test_settle.c), and CI's time is bounded. */
#define SETTLE_S "0.01"

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

/* compare --baseline-contender posix_spawn's verdict per row, as "name=verdict;" pairs. */
static void verdicts(const char *results, char *out, size_t cap, bool *all_decided)
{
    json_t *j = pk_test_compare_json(results);
    out[0] = '\0';
    *all_decided = true;
    size_t i;
    const json_t *row;
    json_array_foreach(json_object_get(j, "series"), i, row)
    {
        const char *v = json_string_value(json_object_get(row, "verdict"));
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s=%s;", json_string_value(json_object_get(row, "name")),
                 v);
        *all_decided &= strcmp(v, "undecidable") != 0;
    }
    json_decref(j);
}

/* The series both hog tests run: three spawns of very different cost, so a shift shows. */
static const char *const hog_filter = "^spawn_only/(posix_spawn|fork_exec|libuv)$";

/* A quick run of `filter` into `path` as the machine is, and its verdicts (verdicts()). A quick
 * run can leave a verdict undecidable on a quiet machine too (20 short repetitions); such a
 * series has no conclusion to keep, and assert_conclusions_kept covers the decided ones. */
static void plain_run(const char *filter, const char *path, char *before, size_t cap)
{
    pk_result r;
    ASSERT_EQ(PK_TEST_PKBENCH(&r, "run", "--profile", "quick", "--no-prime", "--filter", filter,
                              "--settle", SETTLE_S, "--out", path),
              0);
    pk_result_release(&r);
    bool decided;
    verdicts(path, before, cap, &decided);
    printf("# without the hog: %s\n", before);
    if (!decided)
        printf("# undecidable without the hog, so not compared: %s\n", before);
}

/* Repetitions of the series the file's first attempt measured: samples, then marks. */
static size_t samples_in(const char *path)
{
    json_t *j = json_load_file(path, 0, NULL);
    size_t n = j ? json_array_size(json_object_get(json_array_get(json_object_get(j, "series"), 0),
                                                   "samples_ns"))
                 : 0;
    json_decref(j);
    return n;
}

/* No conclusion turns into another between `before` and `after` (verdicts()'s strings): a series
 * decided in both runs is decided alike. A series may end undecidable with the hog (its kept
 * attempt of the quick profile's 20 short repetitions too spread for a verdict): that is the
 * verdict being careful, not wrong, and it happens on a quiet machine between two plain quick
 * runs too. */
static void assert_conclusions_kept(const char *before, const char *after)
{
    for (const char *b = before; *b != '\0';) {
        const char *eq = strchr(b, '='), *end = strchr(b, ';');
        ASSERT(eq != NULL && end != NULL && eq < end);
        char key[256], was[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq + 1 - b), b);
        snprintf(was, sizeof was, "%.*s", (int)(end - eq - 1), eq + 1);
        const char *in_after = strstr(after, key);
        ASSERT(in_after != NULL); /* every series still has a verdict */
        const char *now = in_after + strlen(key);
        size_t now_len = strcspn(now, ";");
        bool open_before = strcmp(was, "undecidable") == 0; /* no conclusion to keep */
        bool same = open_before || (now_len == strlen(was) && strncmp(now, was, now_len) == 0);
        bool careful =
            now_len == strlen("undecidable") && strncmp(now, "undecidable", now_len) == 0;
        if (!same && !careful)
            pk_test_fail(__FILE__, __LINE__, "%s changed from %s to %.*s with the hog", key, was,
                         (int)now_len, now);
        b = end + 1;
    }
}

TEST_IMPL(cpu_hog_leaves_conclusions_unchanged)
{
    /* The same three series twice: once as the machine is, once with a busy loop running through
     * the middle rounds. Interleaved rounds put the hog on every series alike, the marks catch
     * it, the too-disturbed series are measured again after it, and the verdicts do not move. */
    pk_test_need_pkbench();
    char plain[512], hogged[512], out[512], before[1024], after[1024];
    pk_test_tmp_path(plain, sizeof plain, "plain.json");
    pk_test_tmp_path(hogged, sizeof hogged, "hogged.json");
    pk_test_tmp_path(out, sizeof out, "hogged-report");
    plain_run(hog_filter, plain, before, sizeof before);
    bool decided;

    const char *const argv[] = {PK_PKBENCH_PATH, "run",      "--profile", "quick",
                                "--no-prime",    "--filter", hog_filter,  "--settle",
                                SETTLE_S,        "--out",    hogged,      NULL};
    pk_process *bench, *hog = NULL;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .err.kind = PK_STDIO_NULL}, &bench, NULL));
    size_t start = 0, stop = 0;
    for (int waited = 0; waited < 120000 && stop == 0; waited += 5) {
        usleep(5000);
        size_t n = samples_in(hogged);
        if (hog == NULL && n >= 2) {
            ASSERT_OK(pk_spawn(
                &(pk_command){.argv = HELPER("spin", "600000"), .containment = PK_CONTAIN_NONE},
                &hog, NULL));
            start = n;
        } else if (hog != NULL && n >= start + (size_t)pkb_profile_quick.repetitions / 2) {
            /* through half the rounds: more than the 25% that has a series measured again */
            pk_process_free(hog); /* kills and reaps the busy loop */
            hog = NULL;
            stop = n;
        }
    }
    ASSERT_GT(stop, 0);
    pk_result res;
    ASSERT_OK(pk_process_wait(bench, &res));
    ASSERT_EXITED(res, 0);
    pk_result_release(&res);
    pk_process_free(bench);
    printf("# the hog ran through rounds %zu to %zu\n", start + 2, stop);

    /* The hog was seen: in the attempt it ran through, its rounds are marked disturbed. */
    json_t *j = json_load_file(hogged, 0, NULL);
    ASSERT(j != NULL);
    size_t i;
    const json_t *s;
    json_array_foreach(json_object_get(j, "series"), i, s)
    {
        const json_t *first = json_object_get(s, "attempts") != NULL
                                  ? json_array_get(json_object_get(s, "attempts"), 0)
                                  : s;
        const json_t *flags = json_object_get(first, "disturbed");
        const json_t *others = json_object_get(json_object_get(first, "disturbance"), "others_cpu");
        size_t marked = 0, window = 0;
        double most = 0;
        /* Rounds start + 2 to stop ran wholly under the hog: repetitions start + 1 to stop - 1. */
        for (size_t k = start + 1; k < stop; k++) {
            window++;
            marked += json_is_true(json_array_get(flags, k));
            most = fmax(most, json_number_value(json_array_get(others, k)));
        }
        printf("# %s: %zu of %zu repetitions inside the hog marked, others' CPU up to %.0f%%; "
               "re-measured: %s\n",
               json_string_value(json_object_get(s, "name")), marked, window, 100 * most,
               json_object_get(s, "attempts") ? "yes" : "no");
        ASSERT_GE(2 * marked, window);
        ASSERT(most >= 0.35); /* one busy loop is half of two CPUs */
    }
    json_decref(j);

    verdicts(hogged, after, sizeof after, &decided);
    printf("# with the hog:    %s\n", after);
    assert_conclusions_kept(before, after);
    ASSERT_EQ(pk_test_report_agrees(hogged, out), 2);
}

/* The hogged run's output, line by line: the busy loop ends as soon as the runner says it
 * calibrates again (or, if it never does, when round 1 starts). */
struct calibration_watch {
    pk_process *hog;
    bool again; /* pkbench announced a second calibration pass */
};

static int on_calibration_line(void *user, const pk_line *line)
{
    struct calibration_watch *w = user;
    bool again = strstr(line->data, "calibrating again") != NULL;
    w->again |= again;
    if (w->hog != NULL && (again || strstr(line->data, "round 1/") != NULL)) {
        pk_process_free(w->hog); /* kills and reaps the busy loop */
        w->hog = NULL;
    }
    return 0;
}

TEST_IMPL(cpu_hog_in_calibration_leaves_counts_and_verdicts)
{
    /* A busy loop through the whole first calibration pass and no measured round. Before,
     * Google Benchmark sized each series from its last trial, which the hog made slow: fewer
     * iterations per sample for the whole run, noisier samples, verdicts turned undecidable
     * (the full-profile demonstration in reports/notes/2026-12-02-calibration-hog.md). Now the
     * runner sees the calls of the pass disturbed, calibrates again once the hog is gone, and sizes
     * from an undisturbed call. */
    pk_test_need_pkbench();
    char plain[512], hogged[512], out[512], before[1024], after[1024];
    pk_test_tmp_path(plain, sizeof plain, "plain-calibration.json");
    pk_test_tmp_path(hogged, sizeof hogged, "hogged-calibration.json");
    pk_test_tmp_path(out, sizeof out, "hogged-calibration-report");
    plain_run(hog_filter, plain, before, sizeof before);
    bool decided;
    pk_result r;

    struct calibration_watch w = {0};
    ASSERT_OK(
        pk_spawn(&(pk_command){.argv = HELPER("spin", "600000"), .containment = PK_CONTAIN_NONE},
                 &w.hog, NULL));
    usleep(100000); /* the busy loop is running before the first call */
    const char *const argv[] = {PK_PKBENCH_PATH, "run",      "--profile", "quick",
                                "--no-prime",    "--filter", hog_filter,  "--settle",
                                SETTLE_S,        "--out",    hogged,      NULL};
    ASSERT_OK(pk_run(
        &(pk_command){
            .argv = argv, .timeout_ms = 200000, .on_line = on_calibration_line, .line_user = &w},
        &r));
    pk_process_free(w.hog); /* NULL when the line came */
    ASSERT_EXITED(r, 0);
    ASSERT(w.again);
    /* The summary pkbench prints says so, as the report does (below). */
    ASSERT(r.out.data != NULL && strstr(r.out.data, "calibrated again: ") != NULL);
    pk_result_release(&r);

    json_t *pj = json_load_file(plain, 0, NULL), *hj = json_load_file(hogged, 0, NULL);
    ASSERT(pj != NULL && hj != NULL);
    size_t i, again = 0;
    const json_t *s;
    json_array_foreach(json_object_get(hj, "series"), i, s)
    {
        const json_t *cal = json_object_get(s, "calibration");
        ASSERT(cal != NULL);
        long long n = json_integer_value(json_object_get(cal, "iterations"));
        double per = json_number_value(json_object_get(cal, "per_iteration_ns"));
        long long passes = json_integer_value(json_object_get(cal, "passes"));
        /* The count is the rule's on the recorded call (1.4 x 30 ms / its iteration time)... */
        double want = 1.4 * 0.03 * 1e9 / per;
        ASSERT(n >= (long long)ceil(want * (1 - 1e-9)) && n <= (long long)ceil(want * (1 + 1e-9)));
        /* ... and every measured round used it. */
        size_t k;
        const json_t *it;
        json_array_foreach(json_object_get(s, "iterations"), k, it)
            ASSERT_EQ(json_integer_value(it), n);
        again += passes == 2;
        const json_t *ps = json_array_get(json_object_get(pj, "series"), i);
        printf("# %s: %lld iterations per sample (without the hog: %lld), from %.0f us; "
               "%lld pass(es), %lld of %lld calls disturbed%s\n",
               json_string_value(json_object_get(s, "name")), n,
               json_integer_value(json_array_get(json_object_get(ps, "iterations"), 0)), per / 1e3,
               passes, json_integer_value(json_object_get(cal, "disturbed_calls")),
               json_integer_value(json_object_get(cal, "calls")),
               json_is_true(json_object_get(cal, "disturbed")) ? ", sized from a disturbed call"
                                                               : "");
    }
    ASSERT_GE(again, 1); /* the hog was seen, and the pass made again */
    json_decref(pj);
    json_decref(hj);

    verdicts(hogged, after, sizeof after, &decided);
    printf("# with the hog:    %s\n", after);
    assert_conclusions_kept(before, after);
    ASSERT_EQ(pk_test_report_agrees(hogged, out), 2);
    char md[700];
    snprintf(md, sizeof md, "%s/hogged-calibration.md", out);
    char *text = pk_test_slurp(md);
    const char *section = strstr(text, "## Calibration");
    ASSERT(section != NULL);
    ASSERT(strstr(section, "`spawn_only/") != NULL);
    free(text);
}
