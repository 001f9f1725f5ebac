/*
 * pkbench's command line, option by option: every option that takes a value is given one in the
 * `--opt=value` form somewhere below and in the `--opt value` form elsewhere, and its effect is
 * read back from what pkbench wrote (the results file's fields, the comparison's JSON, the report
 * file); every one is also given a bad value, which must exit 1 with one line that names the
 * option. Tests the `run --aa --alpha A` form that the hand-rolled parser always rejected.
 */
#define _GNU_SOURCE
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

/* One primitive of the phases suite: a whole run takes well under a second. */
#define ONE_SERIES "^primitive/setpgid$"

static int pkbench(const char *const *args, pk_result *r)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    const char *argv[40] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 120000}, r));
    if (r->outcome.kind != PK_OUTCOME_EXITED)
        pk_test_fail(__FILE__, __LINE__, "pkbench %s ended %s", args[0],
                     pk_outcome_kind_name(r->outcome.kind));
    return r->outcome.code;
}

#define PKBENCH(r, ...) pkbench((const char *const[]){__VA_ARGS__, NULL}, r)

/* Runs pkbench and requires exit 0. */
static void ok(const char *const *args)
{
    pk_result r;
    int code = pkbench(args, &r);
    if (code != 0)
        pk_test_fail(__FILE__, __LINE__, "pkbench %s %s exited %d: %s", args[0], args[1], code,
                     r.err.data ? r.err.data : "");
    pk_result_release(&r);
}

#define OK(...) ok((const char *const[]){__VA_ARGS__, NULL})

static void path_in(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", pk_test_tmpdir(), name);
}

static json_t *load(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", path, e.text);
    return j;
}

static const char *str_at(const json_t *j, const char *a, const char *b)
{
    const json_t *v = json_object_get(j, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

static double num_at(const json_t *j, const char *a, const char *b)
{
    const json_t *v = json_object_get(j, a);
    return json_number_value(b ? json_object_get(v, b) : v);
}

TEST_IMPL(pkbench_options_take_effect)
{
    char a[512], b[512], fk[512], chk[512], cmp[512], rep[512], md[600];
    path_in(a, sizeof a, "a.json");
    path_in(b, sizeof b, "b.json");
    path_in(fk, sizeof fk, "fk.json");
    path_in(chk, sizeof chk, "check.json");
    path_in(cmp, sizeof cmp, "cmp.json");
    path_in(rep, sizeof rep, "rep");
    char out_a[600], out_rep[600], out_cmp[600], out_chk[600], base_a[600];
    snprintf(out_a, sizeof out_a, "--out=%s", a);
    snprintf(out_rep, sizeof out_rep, "--out=%s", rep);
    snprintf(out_cmp, sizeof out_cmp, "--out=%s", cmp);
    snprintf(out_chk, sizeof out_chk, "--out=%s", chk);
    snprintf(base_a, sizeof base_a, "--baseline=%s", a);

    /* run: --suite, --profile, --filter, --out as --opt=value. */
    OK("run", "--suite=phases", "--profile=quick", "--filter=" ONE_SERIES, out_a, "--no-prime",
       "--repetitions=6");
    json_t *j = load(a);
    ASSERT_STR_EQ(str_at(j, "suite", NULL), "phases");
    ASSERT_STR_EQ(str_at(j, "profile", NULL), "quick");
    ASSERT_STR_EQ(str_at(j, "filter", NULL), ONE_SERIES);
    ASSERT_EQ(json_array_size(json_object_get(j, "series")), 1);
    ASSERT_STR_EQ(str_at(json_array_get(json_object_get(j, "series"), 0), "name", NULL),
                  "primitive/setpgid");
    ASSERT(num_at(j, "settings", "settle_s") == 0.15); /* the quick profile's */
    json_decref(j);

    /* --alpha as --opt value after --aa (always rejected before getopt_long). */
    OK("run", "--suite", "phases", "--profile", "quick", "--filter", ONE_SERIES, "--out", b,
       "--no-prime", "--aa", "--alpha", "0.2", "--settle=0.01", "--repetitions", "7");
    j = load(b);
    ASSERT(num_at(j, "noise_floor", "alpha") == 0.2);
    ASSERT(num_at(j, "settings", "settle_s") == 0.01);
    /* --repetitions: that many rounds, so that many samples, recorded. */
    ASSERT(num_at(j, "settings", "repetitions") == 7);
    ASSERT_EQ(json_array_size(
                  json_object_get(json_array_get(json_object_get(j, "series"), 0), "samples_ns")),
              7);
    ASSERT(json_is_true(json_object_get(json_object_get(j, "settings"), "aa")));
    json_decref(j);

    /* --iterations reaches Wemm's loop. */
    OK("run", "--suite=forkathon", "--profile", "quick", "--iterations=7",
       "--filter=^wemm/fork_static$", "--out", fk);
    j = load(fk);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(j, "forkathon"), "iterations")),
              7);
    json_decref(j);

    /* report --out=DIR. */
    OK("report", a, out_rep, "--no-plots");
    snprintf(md, sizeof md, "%s/a.md", rep);
    ASSERT_EQ(access(md, R_OK), 0);

    /* compare: every value option as --opt=value, read back from its JSON. The files are two
     * real runs, so the verdict (exit 0, 2 or 3) is the machine's: only an error (1) fails. */
    pk_result r;
    int code =
        PKBENCH(&r, "compare", a, b, "--format=json", out_cmp, "--alpha=0.2", "--threshold=7%",
                "--cv-limit=none", "--filter=setpgid", "--env-keys=kernel,cpu_model");
    if (code != 0 && code != 2 && code != 3)
        pk_test_fail(__FILE__, __LINE__, "compare exited %d: %s", code,
                     r.err.data ? r.err.data : "");
    pk_result_release(&r);
    j = load(cmp);
    const json_t *o = json_object_get(j, "options");
    ASSERT(num_at(j, "options", "alpha") == 0.2);
    ASSERT(json_number_value(json_object_get(o, "threshold")) == 0.07);
    ASSERT(json_is_null(json_object_get(o, "cv_limit")));
    ASSERT_STR_EQ(json_string_value(json_object_get(o, "filter")), "setpgid");
    ASSERT_EQ(json_array_size(json_object_get(o, "env_keys")), 2);
    json_decref(j);

    /* --baseline-contender=NAME: one file, the named contender is every row's base. */
    ASSERT_EQ(PKBENCH(&r, "compare", PK_TEST_DATA_DIR "/compare-fixture.json",
                      "--baseline-contender=posix_spawn", "--format", "json", "--filter",
                      "^spawn_only/vfork_exec$"),
              0);
    j = json_loads(r.out.data, 0, NULL);
    ASSERT(j != NULL);
    ASSERT_STR_EQ(str_at(j, "baseline_contender", NULL), "posix_spawn");
    ASSERT_STR_EQ(str_at(json_array_get(json_object_get(j, "series"), 0), "base_name", NULL),
                  "spawn_only/posix_spawn");
    json_decref(j);
    pk_result_release(&r);

    /* check: --baseline, --suite, --profile, --out as --opt=value; the run it made says so. */
    code = PKBENCH(&r, "check", base_a, "--suite=phases", "--profile=quick", "--filter", ONE_SERIES,
                   out_chk, "--no-prime", "--threshold", "none");
    if (code == 1)
        pk_test_fail(__FILE__, __LINE__, "check: %s", r.err.data ? r.err.data : "");
    pk_result_release(&r);
    j = load(chk);
    ASSERT_STR_EQ(str_at(j, "suite", NULL), "phases");
    ASSERT_STR_EQ(str_at(j, "profile", NULL), "quick");
    json_decref(j);
}

/* Every value option, given a bad value (or none): exit 1, one line naming it, then the usage. */
TEST_IMPL(pkbench_option_values_rejected)
{
    char file[512];
    path_in(file, sizeof file, "absent.json");
    const char *fixture = PK_TEST_DATA_DIR "/compare-fixture.json";
    struct {
        const char *args[8];
        const char *says;
    } cases[] = {
        {{"run", "--suite=nosuch"}, "--suite: unknown suite 'nosuch'"},
        {{"run", "--profile=fast"}, "--profile needs full or quick, got 'fast'"},
        {{"run", "--out="}, "--out needs a file name"},
        {{"run", "--filter"}, "--filter needs a value"},
        {{"run", "--aa", "--alpha=2"}, "--alpha needs a number in (0, 1), got '2'"},
        {{"run", "--aa", "--alpha", "0.05x"}, "--alpha needs a number in (0, 1), got '0.05x'"},
        {{"run", "--alpha", "0.1"}, "--alpha is the noise floor's significance level"},
        {{"run", "--suite", "forkathon", "--iterations=1e3"}, "--iterations needs a count"},
        {{"run", "--suite", "forkathon", "--iterations", "0"}, "--iterations needs a count"},
        {{"run", "--iterations=5"}, "--iterations does not apply to the scenarios suite"},
        {{"run", "--suite", "forkathon", "--aa"}, "--sequential and --aa apply"},
        {{"run", "--settle=-1"}, "--settle needs seconds from 0 to 60, got '-1'"},
        {{"run", "--settle", "0.1s"}, "--settle needs seconds from 0 to 60, got '0.1s'"},
        {{"run", "--sequential", "--settle=0.1"}, "--settle runs before each sample of a round"},
        {{"run", "--suite", "forkathon", "--settle=0"}, "--settle applies to suites timed"},
        {{"run", "--repetitions=5"}, "--repetitions needs a count from 6 to 1000 (fewer than 6"},
        {{"run", "--repetitions", "1001"}, "--repetitions needs a count from 6 to 1000"},
        {{"run", "--repetitions", "20x"}, "--repetitions needs a count from 6 to 1000"},
        {{"run", "--suite", "forkathon", "--repetitions=10"},
         "--repetitions applies to suites timed"},
        {{"run", "--fan-out", "0"}, "--fan-out needs up to 8 increasing child counts from 1 to"},
        {{"run", "--fan-out", "16,16"}, "--fan-out needs up to 8 increasing child counts"},
        {{"run", "--fan-out=65537"}, "from 1 to 65536, comma-separated (e.g. 16,256,4096), got"},
        {{"run", "--fan-out", "1,2,3,4,5,6,7,8,9"}, "--fan-out needs up to 8 increasing"},
        {{"run", "--fan-out", "16,,64"}, "got '16,,64'"},
        {{"run", "--suite", "phases", "--fan-out", "16"}, "it does not apply to the phases suite"},
        {{"run", "--bogus"}, "run: unknown option '--bogus'"},
        {{"run", "stray"}, "run: unexpected argument 'stray'"},
        {{"report", fixture, "--out="}, "--out needs a directory"},
        {{"report", fixture, fixture}, "the same file as"}, /* many files: a table of them */
        {{"report", fixture, "--out"}, "--out needs a value"},
        {{"compare", fixture, fixture, "--format=xml"}, "--format needs text, md or json"},
        {{"compare", fixture, fixture, "--alpha=0"}, "--alpha needs a number in (0, 1)"},
        {{"compare", fixture, fixture, "--threshold=abc"}, "--threshold needs a percentage"},
        {{"compare", fixture, fixture, "--cv-limit=-1"}, "--cv-limit needs a percentage"},
        {{"compare", fixture, fixture, "--out="}, "--out needs a file name"},
        {{"compare", fixture, "--baseline-contender="}, "--baseline-contender needs"},
        {{"compare", fixture, fixture, "--env-keys"}, "--env-keys needs a value"},
        {{"compare", fixture, fixture, "--filter=("}, "not a valid extended regular expression"},
        {{"compare", fixture, fixture, "--nope"}, "compare: unknown option '--nope'"},
        {{"check", "--baseline="}, "--baseline needs a value"},
        {{"check", "--baseline", fixture, "--suite="}, "--suite needs a value"},
        {{"check", "--baseline", fixture, "--profile=slow"}, "--profile needs full or quick"},
        {{"check", "--baseline", file}, "cannot read"},
        {{"check", "--baseline", fixture, "--alpha=1"}, "--alpha needs a number in (0, 1)"},
        {{"check", "--baseline", fixture, "--settle=1s"}, "--settle needs seconds from 0 to 60"},
        {{"check", "--baseline", fixture, "--repetitions=3"}, "--repetitions needs a count from 6"},
        {{"list", "extra"}, "list: takes no arguments"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_result r;
        int code = pkbench(cases[i].args, &r);
        const char *err = r.err.data ? r.err.data : "";
        if (code != 1 || strstr(err, cases[i].says) == NULL || strncmp(err, "pkbench: ", 9) != 0)
            pk_test_fail(__FILE__, __LINE__, "case %zu (%s %s): exit %d, stderr: %s", i,
                         cases[i].args[0], cases[i].args[1] ? cases[i].args[1] : "", code, err);
        /* One line says what was wrong; the usage follows for a usage error. */
        pk_result_release(&r);
    }
    /* --help anywhere in a command: the usage on stdout, exit 0. */
    pk_result r;
    ASSERT_EQ(PKBENCH(&r, "run", "--help"), 0);
    ASSERT(strstr(r.out.data, "usage: pkbench run") != NULL);
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "compare", "--help"), 0);
    ASSERT(strstr(r.out.data, "usage: pkbench compare") != NULL);
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "check", "--help"), 0);
    ASSERT(strstr(r.out.data, "usage: pkbench check") != NULL);
    pk_result_release(&r);
}
