/*
 * The report (harness/report/report.h, through the suite registry): the Markdown rendered from a
 * fixed, hand-made results file must match a reviewed golden file byte for byte; the fixture itself
 * must validate against harness/results/schema.json (checked by Python's jsonschema, not by our own
 * reader); plots rendered by the real gnuplot and matplotlib must be real PNG and SVG files; and
 * every bad input or failing tool must give a negative errno, a one-line message naming the
 * problem, and no output file.
 *
 * After a deliberate change of the report's wording or layout, regenerate the golden file with
 *     PKB_UPDATE_GOLDEN=1 build/dev/tests/pk_tests report_golden
 * and review its diff like code.
 */
#define _GNU_SOURCE
#include "test.h"

#include "regress/compare.h"
#include "results/results.h"
#include "suites/suite.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_TEST_DATA_DIR
#error "PK_TEST_DATA_DIR must name tests/data"
#endif
#ifndef PK_SOURCE_DIR
#error "PK_SOURCE_DIR must name the source tree"
#endif

#define FIXTURE PK_TEST_DATA_DIR "/compare-fixture.json"
#define GOLDEN  PK_TEST_DATA_DIR "/compare-fixture.md"
#define SCHEMA  PK_SOURCE_DIR "/harness/results/schema.json"
#define PYTHON  "/usr/bin/python3"

static const char *const scenarios[] = {"spawn_capture_small", "stream_large_stdout",
                                        "concurrent_fan_out", "spawn_only"};

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", pk_test_tmpdir(), name);
}

/* Entries of a directory (without . and ..); -1 when it does not exist. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static json_t *load_fixture(void)
{
    json_error_t jerr;
    json_t *j = json_load_file(FIXTURE, 0, &jerr);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", FIXTURE, jerr.text);
    return j;
}

static void dump_to(json_t *j, const char *path)
{
    ASSERT_EQ(json_dump_file(j, path, JSON_INDENT(1)), 0);
}

/* ==== Golden ================================================================================= */

TEST_IMPL(report_golden)
{
    /* A nested output directory that does not exist yet: the call creates it. */
    char out[512], md[600], err[512];
    path_in(out, sizeof out, "reports/nested");
    int rc =
        pkb_report_render(FIXTURE, out, &(pkb_report_options){.no_plots = true}, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "render: %d: %s", rc, err);
    ASSERT_EQ(count_entries(out), 1); /* the report, no staging directory left */
    snprintf(md, sizeof md, "%s/compare-fixture.md", out);
    size_t got_len, want_len;
    char *got = pk_test_read_file(md, &got_len);
    if (getenv("PKB_UPDATE_GOLDEN") != NULL) {
        pk_test_write_file(GOLDEN, got, got_len);
        printf("# golden file rewritten: %s\n", GOLDEN);
    }
    char *want = pk_test_read_file(GOLDEN, &want_len);
    if (got_len != want_len || memcmp(got, want, got_len) != 0) {
        /* Name the first differing line, so the failure says what changed. */
        size_t line = 1, i = 0;
        while (i < got_len && i < want_len && got[i] == want[i])
            line += got[i++] == '\n';
        size_t g = i, w = i;
        while (g > 0 && got[g - 1] != '\n')
            g--;
        while (w > 0 && want[w - 1] != '\n')
            w--;
        pk_test_fail(__FILE__, __LINE__,
                     "%s differs from the golden file at line %zu:\n got: %.*s\nwant: %.*s", md,
                     line, (int)strcspn(got + g, "\n"), got + g, (int)strcspn(want + w, "\n"),
                     want + w);
    }
    /* Rendering again replaces the file and gives the same bytes. */
    ASSERT_OK(
        pkb_report_render(FIXTURE, out, &(pkb_report_options){.no_plots = true}, err, sizeof err));
    free(got);
    got = pk_test_read_file(md, &got_len);
    ASSERT(got_len == want_len && memcmp(got, want, got_len) == 0);
    ASSERT_EQ(count_entries(out), 1);
    free(got);
    free(want);
}

TEST_IMPL(report_fixture_matches_schema)
{
    if (access(PYTHON, X_OK) != 0)
        pk_test_skip_gate("package:python3", "%s is missing: cannot validate with jsonschema",
                          PYTHON);
    char out[4096];
    if (pk_test_run_merged((const char *const[]){PYTHON, "-c", "import jsonschema", NULL}, out,
                           sizeof out) != 0)
        pk_test_skip_gate("package:python3-jsonschema",
                          "%s has no jsonschema module (Debian: python3-jsonschema)", PYTHON);
    static const char check[] = "import json, sys, jsonschema\n"
                                "schema = json.load(open(sys.argv[1], encoding='utf-8'))\n"
                                "doc = json.load(open(sys.argv[2], encoding='utf-8'))\n"
                                "cls = jsonschema.validators.validator_for(schema)\n"
                                "cls.check_schema(schema)\n"
                                "cls(schema).validate(doc)\n"
                                "print('valid', cls.__name__)\n";
    int code = pk_test_run_merged((const char *const[]){PYTHON, "-c", check, SCHEMA, FIXTURE, NULL},
                                  out, sizeof out);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "the fixture does not validate (exit %d):\n%s", code, out);
    ASSERT(strstr(out, "valid Draft202012Validator") != NULL);
}

/* ==== Plots ================================================================================== */

static void need_plot_tools(void)
{
    char out[4096];
    if (pk_test_run_merged((const char *const[]){"gnuplot", "--version", NULL}, out, sizeof out) !=
        0)
        pk_test_skip_gate("package:gnuplot-nox", "gnuplot cannot run (Debian: gnuplot-nox)");
    if (pk_test_run_merged((const char *const[]){PYTHON, "-c", "import matplotlib", NULL}, out,
                           sizeof out) != 0)
        pk_test_skip_gate("package:python3-matplotlib",
                          "%s cannot import matplotlib (Debian: python3-matplotlib)", PYTHON);
}

static void assert_file_starts(const char *path, const char *magic, size_t magic_len)
{
    size_t len;
    char *data = pk_test_read_file(path, &len);
    if (len < magic_len || memcmp(data, magic, magic_len) != 0)
        pk_test_fail(__FILE__, __LINE__, "%s (%zu bytes) does not start as expected", path, len);
    free(data);
}

TEST_IMPL(report_plots)
{
    need_plot_tools();
    char out[512], path[700], err[512];
    path_in(out, sizeof out, "plots");
    int rc = pkb_report_render(FIXTURE, out, NULL, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "render: %d: %s", rc, err);
    static const char *const suffixes[] = {".dat",         ".gp",          ".py",
                                           ".gnuplot.png", ".gnuplot.svg", ".matplotlib.png"};
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
            snprintf(path, sizeof path, "%s/compare-fixture-%s%s", out, scenarios[i], suffixes[k]);
            struct stat st;
            if (stat(path, &st) != 0 || st.st_size == 0)
                pk_test_fail(__FILE__, __LINE__, "%s missing or empty", path);
            if (strstr(suffixes[k], ".png"))
                assert_file_starts(path, "\x89PNG\r\n\x1a\n", 8);
        }
        snprintf(path, sizeof path, "%s/compare-fixture-%s.gnuplot.svg", out, scenarios[i]);
        size_t len;
        char *svg = pk_test_read_file(path, &len);
        ASSERT(strstr(svg, "<svg") != NULL && strstr(svg, "</svg>") != NULL);
        free(svg);
    }
    /* 4 scenarios x 6 files + the report; the staging directory is gone. */
    ASSERT_EQ(count_entries(out), 25);
    snprintf(path, sizeof path, "%s/compare-fixture.md", out);
    size_t len;
    char *md = pk_test_read_file(path, &len);
    ASSERT(strstr(md, "](compare-fixture-spawn_only.gnuplot.svg)") != NULL);
    ASSERT(strstr(md, "[matplotlib PNG](compare-fixture-stream_large_stdout.matplotlib.png)"));
    free(md);
}

/* A failing tool fails the call, names itself and says why, and leaves no file behind. */
TEST_IMPL(report_plot_tool_failure_leaves_nothing)
{
    char out[512], err[512], sleeper[512];
    path_in(out, sizeof out, "failing");

    int rc = pkb_report_render(
        FIXTURE, out, &(pkb_report_options){.gnuplot = "/nonexistent/gnuplot"}, err, sizeof err);
    printf("# %s\n", err);
    ASSERT_LT(rc, 0);
    ASSERT(strncmp(err, "gnuplot (/nonexistent/gnuplot) could not be started", 51) == 0);
    ASSERT(strchr(err, '\n') == NULL);
    ASSERT_EQ(count_entries(out), 0);

    /* A tool that exits non-zero: the message quotes its last line of stderr. /bin/sh given the
     * Python runner as its script fails on its first line. */
    rc = pkb_report_render(FIXTURE, out, &(pkb_report_options){.gnuplot = "/bin/sh"}, err,
                           sizeof err);
    printf("# %s\n", err);
    ASSERT_EQ(rc, -EIO);
    ASSERT(strncmp(err, "gnuplot (/bin/sh) failed with exit status", 41) == 0);
    ASSERT(strstr(err, ".gp") != NULL || strstr(err, "sh") != NULL);
    ASSERT_EQ(count_entries(out), 0);

    need_plot_tools();
    rc = pkb_report_render(FIXTURE, out, &(pkb_report_options){.python = "/bin/sh"}, err,
                           sizeof err);
    printf("# %s\n", err);
    ASSERT_EQ(rc, -EIO);
    ASSERT(strncmp(err, "matplotlib (/bin/sh) failed with exit status", 44) == 0);
    ASSERT(strstr(err, "Syntax error") != NULL); /* sh's own stderr, quoted */
    ASSERT_EQ(count_entries(out), 0);

    /* A tool that hangs is killed at the time limit. The gnuplot before it is a stand-in that
     * writes every file the scripts name at once: the real one can need more than the 300 ms
     * on a loaded machine, and this case is about Python's limit. */
    path_in(sleeper, sizeof sleeper, "sleeper.sh");
    pk_test_write_file(sleeper, "#!/bin/sh\nsleep 30\n", 19);
    ASSERT_EQ(chmod(sleeper, 0755), 0);
    char quick_gnuplot[512];
    path_in(quick_gnuplot, sizeof quick_gnuplot, "quick-gnuplot.sh");
    static const char stub[] = "#!/bin/sh\n"
                               "sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$@\" |\n"
                               "while read -r f; do echo figure > \"$f\"; done\n";
    pk_test_write_file(quick_gnuplot, stub, sizeof stub - 1);
    ASSERT_EQ(chmod(quick_gnuplot, 0755), 0);
    int64_t t0 = pk_test_now_ms();
    rc = pkb_report_render(
        FIXTURE, out,
        &(pkb_report_options){.gnuplot = quick_gnuplot, .python = sleeper, .tool_timeout_ms = 300},
        err, sizeof err);
    printf("# %s\n", err);
    ASSERT_EQ(rc, -ETIMEDOUT);
    ASSERT(strstr(err, "matplotlib") != NULL && strstr(err, "300 ms") != NULL);
    ASSERT_LT(pk_test_now_ms() - t0, 20000);
    ASSERT_EQ(count_entries(out), 0);
}

/* ==== Bad inputs ============================================================================= */

/* Renders `path` into a fresh directory name: must fail with `want` and a one-line message
 * containing `needle`, creating nothing. */
static void expect_rejected(const char *path, int want, const char *needle)
{
    static int round;
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/out-%d", pk_test_tmpdir(), round++);
    memset(err, 0, sizeof err);
    int rc = pkb_report_render(path, out, &(pkb_report_options){.no_plots = true}, err, sizeof err);
    printf("# %d: %s\n", rc, err);
    if (rc != want)
        pk_test_fail(__FILE__, __LINE__, "%s: returned %d (%s), want %d; message: %s", path, rc,
                     pk_errname(rc), want, err);
    ASSERT(err[0] != '\0');
    ASSERT(strchr(err, '\n') == NULL);
    if (strstr(err, needle) == NULL)
        pk_test_fail(__FILE__, __LINE__, "message \"%s\" does not mention \"%s\"", err, needle);
    ASSERT_EQ(count_entries(out), -1);
    /* An existing output directory stays empty. */
    ASSERT_EQ(mkdir(out, 0755), 0);
    ASSERT_EQ(
        pkb_report_render(path, out, &(pkb_report_options){.no_plots = true}, err, sizeof err),
        want);
    ASSERT_EQ(count_entries(out), 0);
}

TEST_IMPL(report_bad_inputs)
{
    char path[512];
    char err[256];

    ASSERT_EQ(pkb_report_render(NULL, "x", NULL, err, sizeof err), -EINVAL);
    ASSERT(strstr(err, "no results file") != NULL);
    ASSERT_EQ(pkb_report_render(FIXTURE, "", NULL, err, sizeof err), -EINVAL);
    ASSERT(strstr(err, "no output directory") != NULL);

    path_in(path, sizeof path, "missing.json");
    expect_rejected(path, -ENOENT, "missing.json: cannot read: No such file or directory");

    expect_rejected(pk_test_tmpdir(), -EISDIR, "Is a directory");

    path_in(path, sizeof path, "garbage.json");
    pk_test_write_file(path, "\x89PNG\r\n\x1a\n\x00\x01garbage{{{", 19);
    expect_rejected(path, -EBADMSG, "not valid JSON (line 1");

    path_in(path, sizeof path, "empty.json");
    pk_test_write_file(path, "", 0);
    expect_rejected(path, -EBADMSG, "not valid JSON");

    path_in(path, sizeof path, "floor.json");
    const char floor[] = "{\"schema\": \"processkit-floor\", \"schema_version\": 1}";
    pk_test_write_file(path, floor, sizeof floor - 1);
    expect_rejected(path, -EBADMSG,
                    "not a pkbench results file (\"schema\" is \"processkit-floor\", expected "
                    "\"pkbench-results\")");

    path_in(path, sizeof path, "array.json");
    pk_test_write_file(path, "[1, 2]", 6);
    expect_rejected(path, -EBADMSG, "the top level is not a JSON object");

    json_t *j = load_fixture();
    path_in(path, sizeof path, "v2.json");
    json_object_set_new(j, "schema_version", json_integer(2));
    dump_to(j, path);
    expect_rejected(path, -ENOTSUP,
                    "schema_version 2 is not supported (this pkbench reads version 1)");
    json_decref(j);

    j = load_fixture();
    path_in(path, sizeof path, "no-series.json");
    json_object_del(j, "series");
    dump_to(j, path);
    expect_rejected(path, -EBADMSG, "no-series.json: missing required field series");
    json_decref(j);

    j = load_fixture();
    path_in(path, sizeof path, "no-kernel.json");
    json_object_del(json_object_get(j, "environment"), "kernel");
    dump_to(j, path);
    expect_rejected(path, -EBADMSG, "missing required field environment.kernel");
    json_decref(j);

    j = load_fixture();
    path_in(path, sizeof path, "bad-sample.json");
    json_t *s3 = json_array_get(json_object_get(j, "series"), 3);
    json_array_set_new(json_object_get(s3, "samples_ns"), 2, json_string("fast"));
    dump_to(j, path);
    expect_rejected(path, -EBADMSG, "series[3].samples_ns[2] is not a number");
    json_decref(j);

    j = load_fixture();
    path_in(path, sizeof path, "bad-status.json");
    json_t *s0 = json_array_get(json_object_get(j, "series"), 0);
    json_object_set_new(s0, "status", json_string("skipped"));
    dump_to(j, path);
    expect_rejected(path, -EBADMSG, "series[0].status \"skipped\" is not measured");
    json_decref(j);

    j = load_fixture();
    path_in(path, sizeof path, "two-baselines.json");
    json_object_set_new(json_array_get(json_object_get(j, "series"), 0), "baseline", json_true());
    dump_to(j, path);
    expect_rejected(path, -EBADMSG, "two measured baseline series");
    json_decref(j);

    path_in(path, sizeof path, "duplicate.json");
    const char dup[] = "{\"schema\": \"pkbench-results\", \"schema\": \"pkbench-results\"}";
    pk_test_write_file(path, dup, sizeof dup - 1);
    expect_rejected(path, -EBADMSG, "duplicate");
}

TEST_IMPL(results_samples_bounded)
{
    /* Found by fuzz_results: samples of 1e308 ns passed the loader, and their mean was infinite
     * (sd NaN) in every report and comparison. Samples are bounded by PKB_RESULTS_MAX_SAMPLE_NS,
     * in the series and in compare's noise floor alike; the bound itself is a valid sample. */
    char path[512], err[512];
    json_t *j = load_fixture();
    json_t *samples =
        json_object_get(json_array_get(json_object_get(j, "series"), 3), "samples_ns");
    json_array_set_new(samples, 0, json_real(1.5e308));
    path_in(path, sizeof path, "huge-sample.json");
    dump_to(j, path);
    expect_rejected(path, -EBADMSG, "series[3].samples_ns[0] is not " PKB_RESULTS_SAMPLE_WORDS);

    json_array_set_new(samples, 0, json_real(PKB_RESULTS_MAX_SAMPLE_NS));
    path_in(path, sizeof path, "largest-sample.json");
    dump_to(j, path);
    pkb_results r;
    ASSERT_OK(pkb_results_load(path, &r, err, sizeof err));
    ASSERT(r.series[3].measured && isfinite(r.series[3].sum.mean) && isfinite(r.series[3].sum.sd));
    const char *name = r.series[3].name;
    json_t *nf = json_pack("{s:f, s:{s:{s:f, s:[f]}}}", "alpha", 0.05, "series", name, "mde", 0.01,
                           "samples_b_ns", 1e300);
    pkb_results_free(&r);
    ASSERT(nf != NULL);
    json_object_set_new(j, "noise_floor", nf);
    path_in(path, sizeof path, "huge-floor.json");
    dump_to(j, path);
    ASSERT_EQ(pkb_compare_check_file(path, err, sizeof err), -EBADMSG);
    printf("# %s\n", err);
    ASSERT(strstr(err, "samples_b_ns[0] is not " PKB_RESULTS_SAMPLE_WORDS) != NULL);
    json_decref(j);
}

/* ==== Wording of unusual files =============================================================== */

/* An interrupted run: a scenario whose baseline was refused, a series of one repetition, a
 * scenario pkbench does not know, priming that ran out of budget. */
TEST_IMPL(report_partial_file_wording)
{
    json_t *j = load_fixture();
    json_object_set_new(j, "complete", json_false());
    json_object_set_new(j, "interrupted", json_true());
    json_object_set_new(j, "filter", json_string("spawn_only/"));
    json_object_set_new(json_object_get(j, "priming"), "stable", json_false());
    json_t *series = json_array(), *all = json_object_get(j, "series");
    size_t i;
    json_t *s;
    json_array_foreach(all, i, s)
    {
        const char *scn = json_string_value(json_object_get(s, "scenario"));
        const char *who = json_string_value(json_object_get(s, "contender"));
        if (strcmp(scn, "spawn_only") != 0)
            continue;
        if (strcmp(who, "posix_spawn") == 0) {
            json_object_set_new(s, "status", json_string("refused"));
            json_object_set_new(s, "samples_ns", json_array());
        }
        if (strcmp(who, "processkit") == 0)
            json_object_set_new(s, "samples_ns", json_pack("[f]", 101000.0));
        /* The per-repetition arrays go with the samples replaced (a reader refuses arrays of
         * another length than samples_ns). */
        if (strcmp(who, "posix_spawn") == 0 || strcmp(who, "processkit") == 0)
            for (const char *const *k =
                     (const char *const[]){"iterations", "child_cpu_ns", "parent_cpu_ns",
                                           "procs_running", "noisy", "disturbed", "round", NULL};
                 *k != NULL; k++)
                json_object_del(s, *k);
        json_array_append(series, s);
    }
    json_t *odd = json_deep_copy(json_array_get(series, 0));
    json_object_set_new(odd, "scenario", json_string("fork/loop"));
    json_object_set_new(odd, "name", json_string("fork/loop/processkit"));
    json_object_set_new(odd, "baseline", json_true());
    json_array_append_new(series, odd);
    json_object_set_new(j, "series", series);
    char path[512], out[512], md[700], err[512];
    path_in(path, sizeof path, "partial.json");
    path_in(out, sizeof out, "partial");
    dump_to(j, path);
    json_decref(j);

    int rc = pkb_report_render(path, out, &(pkb_report_options){.no_plots = true}, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "render: %d: %s", rc, err);
    snprintf(md, sizeof md, "%s/partial.md", out);
    size_t len;
    char *text = pk_test_read_file(md, &len);
    static const char *const expected[] = {
        "> **Incomplete run.**",
        "Filter: `spawn_only/`.",
        "Each measured series has 1 to 8 repetitions.",
        "| `processkit` | 101.0 | 101.0 (n = 1) | 9,901 | n/a | | |",
        "No measured baseline in this scenario: no deltas.",
        "- `posix_spawn`: refused — no reason given",
        "### `fork/loop`",
        "| `processkit` | 101.0 | 101.0 (n = 1) | 9,901 | baseline | | |",
        "no baseline to compare with in `spawn_only`",
        "budget exhausted (the time budget, 30.000 s, ran out before batch times stopped falling)",
        "| `processkit` ≤ +3% vs `posix_spawn` in `spawn_capture_small` | no measured "
        "`processkit` series | not checked (no `processkit` series in this run) |",
        /* One repetition cannot decide a target, whatever its ratio. */
        "| `processkit` within 1.10× of `vfork_exec` in `spawn_only` (unpinned; 1.05× pinned "
        "to one CPU) | 1.082× [",
        "| undecidable (too few samples: 8 in vfork_exec, 1 in processkit, need 6) |",
        "| `processkit` ahead of `libuv` in every scenario | 0.481× [",
        "| undecidable (not shown ahead in `spawn_only`: too few samples: 8 in libuv, 1 in "
        "processkit, need 6) |",
    };
    for (size_t k = 0; k < sizeof expected / sizeof expected[0]; k++)
        if (strstr(text, expected[k]) == NULL)
            pk_test_fail(__FILE__, __LINE__, "the report lacks \"%s\":\n%s", expected[k], text);
    free(text);

    /* The same file from a run pinned to one CPU (`taskset -c 1`): spawn_only's target is
     * 1.05×. Pinned to two CPUs is not pinned. */
    static const struct {
        const char *cpus, *label;
    } pins[] = {
        {"1", "| `processkit` within 1.05× of `vfork_exec` in `spawn_only` (pinned to one CPU; "
              "1.10× unpinned) | 1.082× ["},
        {"0-1", "| `processkit` within 1.10× of `vfork_exec` in `spawn_only` (unpinned; 1.05× "
                "pinned to one CPU) | 1.082× ["},
    };
    for (size_t k = 0; k < sizeof pins / sizeof pins[0]; k++) {
        json_t *p = json_load_file(path, 0, NULL);
        ASSERT(p != NULL);
        json_object_set_new(json_object_get(p, "settings"), "cpu_affinity",
                            json_string(pins[k].cpus));
        char pinned[512];
        path_in(pinned, sizeof pinned, "partial-pinned.json");
        dump_to(p, pinned);
        json_decref(p);
        rc = pkb_report_render(pinned, out, &(pkb_report_options){.no_plots = true}, err,
                               sizeof err);
        if (rc != 0)
            pk_test_fail(__FILE__, __LINE__, "render: %d: %s", rc, err);
        snprintf(md, sizeof md, "%s/partial-pinned.md", out);
        text = pk_test_read_file(md, &len);
        if (strstr(text, pins[k].label) == NULL)
            pk_test_fail(__FILE__, __LINE__, "the report lacks \"%s\":\n%s", pins[k].label, text);
        free(text);
    }
}
