/*
 * `pkbench history` (harness/report/history.h) end to end, on synthetic results files written
 * here (no benchmarking): a real git repository of 20 commits made in the test's directory, a
 * results file per commit whose start times run backwards (so only the repository's ancestry
 * orders them right), three series with 2% noise per repetition.
 *
 *  - one series 5% slower from the 13th revision on: exactly one change point, between the
 *    12th and the 13th revisions, with a CI around +5%, and none in the other series (medians
 *    and --ratio); the figures are drawn;
 *  - 20 A/A revisions: no change point anywhere;
 *  - without the repository: ordered by commit date, said so; a kernel that changed with the step
 *    is named beside it;
 *  - two hosts make two histories, --host keeps one, a missing one is named; bad options.
 */
#define _GNU_SOURCE
#include "test.h"

#include "synth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

#define NREV 20

#define ASSERT_HAS(hay, needle)                                                                    \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        if (h_ == NULL || strstr(h_, n_) == NULL)                                                  \
            pk_test_fail(__FILE__, __LINE__, "expected \"%s\" in:\n%s", n_, h_ ? h_ : "(null)");   \
    } while (0)

static void need_pkbench_and_git(void)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = (const char *const[]){"git", "--version", NULL},
                                  .out.kind = PK_STDIO_NULL},
                    &r);
    bool ok = rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0;
    pk_result_release(&r);
    if (!ok)
        pk_test_skip_gate("package:git", "git is not installed");
}

/* git ARGS in `dir` with `in` on stdin and no user configuration; its stdout (malloc'd). */
static char *git(const char *dir, const char *const *args, const char *in)
{
    const char *argv[16] = {"git", "-C", dir};
    int n = 3;
    for (; args[n - 3] != NULL && n < 15; n++)
        argv[n] = args[n - 3];
    argv[n] = NULL;
    const char *const env[] = {"GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent", NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv,
                                   .env.set = env,
                                   .in = {.kind = in ? PK_STDIO_BYTES : PK_STDIO_NULL,
                                          .data = in,
                                          .len = in ? strlen(in) : 0},
                                   .timeout_ms = 30000},
                     &r));
    if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0)
        pk_test_fail(__FILE__, __LINE__, "git %s failed: %s", args[0],
                     r.err.data ? r.err.data : "");
    char *out = r.out.data != NULL ? r.out.data : strdup("");
    r.out.data = NULL;
    pk_result_release(&r);
    return out;
}

/* A repository of NREV empty commits a minute apart, made by one git fast-import; their hashes
 * in order. */
static void make_repo(const char *repo, char commits[NREV][64])
{
    ASSERT_EQ(mkdir(repo, 0755), 0);
    free(git(repo, (const char *const[]){"init", "-q", NULL}, NULL));
    char stream[NREV * 160];
    size_t len = 0;
    for (int i = 0; i < NREV; i++)
        len += (size_t)snprintf(stream + len, sizeof stream - len,
                                "commit refs/heads/main\ncommitter pk <pk@example.org> %d +0000\n"
                                "data 12\nrevision %02d\n\n",
                                1767225600 + 60 * i, i + 1);
    free(git(repo, (const char *const[]){"fast-import", "--quiet", NULL}, stream));
    char *list = git(repo, (const char *const[]){"rev-list", "--reverse", "main", NULL}, NULL);
    char *line = list;
    for (int i = 0; i < NREV; i++) {
        size_t n = strcspn(line, "\n");
        ASSERT_EQ(n, 40);
        snprintf(commits[i], sizeof commits[i], "%.40s", line);
        line += n + 1;
    }
    free(list);
}

/* Revision i's results file: posix_spawn (the baseline), processkit and vfork_exec, 20 rounds of
 * 2% lognormal noise each; processkit `step` times slower from revision `at` on. Its start time
 * runs backwards with i, its commit date is the same for all (only ancestry orders them). */
static void write_revision(const char *dir,
                           const char *host,
                           int i,
                           const char *commit,
                           int at,
                           double step,
                           const char *kernel)
{
    static const char *const names[] = {"spawn_only/posix_spawn", "spawn_only/processkit",
                                        "spawn_only/vfork_exec"};
    static const double median[] = {100e3, 80e3, 75e3};
    double x[3][20];
    pk_test_series s[3];
    pks_rng rng;
    pks_rng_seed(&rng, 1000 + (uint64_t)i * 7 + (uint64_t)(host[0]));
    for (int k = 0; k < 3; k++) {
        pk_test_lognormal(&rng, x[k], 20, median[k] * (k == 1 && i >= at ? step : 1), 0.02);
        s[k] = (pk_test_series){names[k], x[k], 20, NULL};
    }
    json_t *doc = pk_test_results_doc(s, 3);
    json_object_set_new(doc, "suite", json_string("scenarios"));
    char created[64];
    snprintf(created, sizeof created, "2026-02-01T%02d:00:00Z", NREV - i);
    json_object_set_new(doc, "created", json_string(created));
    json_t *env = json_object_get(doc, "environment");
    json_object_set_new(env, "host", json_string(host));
    json_object_set_new(env, "host_id", json_string("00000000000a"));
    json_object_set_new(env, "git_commit", json_string(commit));
    json_object_set_new(env, "git_commit_time", json_string("2026-01-01T00:00:00Z"));
    if (kernel != NULL)
        json_object_set_new(env, "kernel", json_string(kernel));
    size_t k;
    json_t *series;
    json_array_foreach(json_object_get(doc, "series"), k, series)
    {
        json_t *round = json_array();
        for (int r = 1; r <= 20; r++)
            json_array_append_new(round, json_integer(r));
        json_object_set_new(series, "round", round);
    }
    char path[700];
    snprintf(path, sizeof path, "%s/%s-rev%02d.json", dir, host, i);
    pk_test_write_doc(doc, path);
}

static int pkbench(const char *const *args, pk_result *r)
{
    const char *argv[32] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 31; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 120000}, r));
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    printf("# pkbench history: exit %d\n# stdout: %s\n# stderr: %s\n", r->outcome.code,
           r->out.data ? r->out.data : "", r->err.data ? r->err.data : "");
    return r->outcome.code;
}

static json_t *load_json(const char *dir, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (j == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", path, err.text);
    return j;
}

/* The series of host 0 named `name` in a history's JSON. */
static json_t *series_named(json_t *h, size_t host, const char *name)
{
    json_t *hosts = json_object_get(h, "hosts");
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(json_array_get(hosts, host), "series"), i, s)
    {
        if (strcmp(json_string_value(json_object_get(s, "name")), name) == 0)
            return s;
    }
    pk_test_fail(__FILE__, __LINE__, "no series %s", name);
    return NULL;
}

struct study {
    char dir[512], repo[600], files[600], out[600];
    char commits[NREV][64];
};

static void study_setup(struct study *st, int at, double step)
{
    need_pkbench_and_git();
    snprintf(st->dir, sizeof st->dir, "%s", pk_test_tmpdir());
    snprintf(st->repo, sizeof st->repo, "%s/repo", st->dir);
    snprintf(st->files, sizeof st->files, "%s/results", st->dir);
    snprintf(st->out, sizeof st->out, "%s/reports", st->dir);
    make_repo(st->repo, st->commits);
    ASSERT_EQ(mkdir(st->files, 0755), 0);
    for (int i = 0; i < NREV; i++)
        write_revision(st->files, "ci", i, st->commits[i], at, step, NULL);
}

TEST_IMPL(history_finds_a_5_percent_step_at_its_revision)
{
    struct study st;
    study_setup(&st, 12, 1.05); /* slower from the 13th revision (index 12) on */
    pk_result r;
    ASSERT_EQ(pkbench((const char *const[]){"history", st.files, "--repo", st.repo, "--out", st.out,
                                            "--print", NULL},
                      &r),
              0);
    ASSERT_HAS(r.out.data, "history  ");
    ASSERT_HAS(r.out.data, "results-history.md");
    ASSERT_HAS(r.out.data, "figures  ");
    ASSERT_HAS(r.out.data, "1 change point");
    pk_result_release(&r);
    json_t *h = load_json(st.out, "results-history");
    json_t *host = json_array_get(json_object_get(h, "hosts"), 0);
    ASSERT(json_is_true(json_object_get(host, "ancestry")));
    /* In the repository's order, although the files started in the opposite one. */
    json_t *files = json_object_get(host, "files");
    ASSERT_EQ(json_array_size(files), NREV);
    for (int i = 0; i < NREV; i++)
        ASSERT_STR_EQ(
            json_string_value(json_object_get(json_array_get(files, (size_t)i), "commit")),
            st.commits[i]);
    json_t *changes = json_object_get(series_named(h, 0, "spawn_only/processkit"), "changes");
    ASSERT_EQ(json_array_size(changes), 1);
    json_t *c = json_array_get(changes, 0);
    char before[16], after[16];
    snprintf(before, sizeof before, "%.12s", st.commits[11]);
    snprintf(after, sizeof after, "%.12s", st.commits[12]);
    ASSERT_STR_EQ(json_string_value(json_object_get(c, "revision_before")), before);
    ASSERT_STR_EQ(json_string_value(json_object_get(c, "revision_after")), after);
    ASSERT_EQ(json_integer_value(json_object_get(c, "file_after")), 12);
    double ratio = json_real_value(json_object_get(c, "ratio"));
    double lo = json_real_value(json_object_get(c, "lo")),
           hi = json_real_value(json_object_get(c, "hi"));
    printf("# the step: %.4f [%.4f, %.4f], p %g\n", ratio, lo, hi,
           json_real_value(json_object_get(c, "p")));
    ASSERT(lo < 1.05 && hi > 1.05 && lo > 1.02 && hi < 1.08);
    ASSERT_EQ(json_array_size(json_object_get(c, "also_changed")), 0);
    /* No false change point in the series that did not move. */
    ASSERT_EQ(
        json_array_size(json_object_get(series_named(h, 0, "spawn_only/posix_spawn"), "changes")),
        0);
    ASSERT_EQ(
        json_array_size(json_object_get(series_named(h, 0, "spawn_only/vfork_exec"), "changes")),
        0);
    json_decref(h);

    /* The Markdown names the range git log takes, and links the figure it drew. */
    char path[700];
    snprintf(path, sizeof path, "%s/results-history.md", st.out);
    char *md = pk_test_slurp(path);
    char range[64];
    snprintf(range, sizeof range, "`%s..%s` (files 12→13)", before, after);
    ASSERT_HAS(md, range);
    ASSERT_HAS(md, "No change point in the other 2 series");
    ASSERT_HAS(md, "results-history-ci-Linux-scenarios-spawn_only.gnuplot.svg");
    free(md);
    snprintf(path, sizeof path, "%s/results-history-ci-Linux-scenarios-spawn_only.matplotlib.png",
             st.out);
    struct stat sb;
    ASSERT(stat(path, &sb) == 0 && sb.st_size > 1000);

    /* --ratio: processkit over posix_spawn in each file finds the same step. */
    ASSERT_EQ(pkbench((const char *const[]){"history", st.files, "--repo", st.repo, "--out", st.out,
                                            "--ratio", "--no-plots", "--name", "ratio", NULL},
                      &r),
              0);
    pk_result_release(&r);
    h = load_json(st.out, "ratio");
    ASSERT_STR_EQ(json_string_value(json_object_get(h, "value")), "ratio");
    changes = json_object_get(series_named(h, 0, "spawn_only/processkit"), "changes");
    ASSERT_EQ(json_array_size(changes), 1);
    ASSERT_EQ(json_integer_value(json_object_get(json_array_get(changes, 0), "file_after")), 12);
    ASSERT_EQ(
        json_array_size(json_object_get(series_named(h, 0, "spawn_only/vfork_exec"), "changes")),
        0);
    json_decref(h);
}

TEST_IMPL(history_of_aa_revisions_has_no_change_point)
{
    struct study st;
    study_setup(&st, NREV, 1.0); /* nothing changes */
    pk_result r;
    ASSERT_EQ(pkbench((const char *const[]){"history", st.files, "--repo", st.repo, "--out", st.out,
                                            "--no-plots", "--name", "aa", NULL},
                      &r),
              0);
    pk_result_release(&r);
    json_t *h = load_json(st.out, "aa");
    json_t *host = json_array_get(json_object_get(h, "hosts"), 0);
    ASSERT(json_is_true(json_object_get(host, "ancestry")));
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(host, "series"), i, s)
    {
        ASSERT_EQ(json_array_size(json_object_get(s, "points")), NREV);
        if (json_array_size(json_object_get(s, "changes")) != 0)
            pk_test_fail(__FILE__, __LINE__, "a false change point in %s",
                         json_string_value(json_object_get(s, "name")));
    }
    ASSERT_EQ(i, 3);
    json_decref(h);
}

TEST_IMPL(history_without_repository_orders_by_time_and_names_what_changed)
{
    need_pkbench_and_git();
    char dir[512], files[600], out[600];
    snprintf(dir, sizeof dir, "%s", pk_test_tmpdir());
    snprintf(files, sizeof files, "%s/results", dir);
    snprintf(out, sizeof out, "%s/reports", dir);
    ASSERT_EQ(mkdir(files, 0755), 0);
    /* Commits no repository knows, their dates in order; the kernel changes with the step. */
    for (int i = 0; i < NREV; i++) {
        char commit[64];
        snprintf(commit, sizeof commit, "%040d", i + 1);
        write_revision(files, "ci", i, commit, 10, 1.08, i >= 10 ? "6.2.0" : "6.1.0");
        char path[700];
        snprintf(path, sizeof path, "%s/ci-rev%02d.json", files, i);
        json_error_t err;
        json_t *doc = json_load_file(path, 0, &err);
        char date[64];
        snprintf(date, sizeof date, "2026-01-%02dT12:00:00+02:00", i + 1);
        json_object_set_new(json_object_get(doc, "environment"), "git_commit_time",
                            json_string(date));
        pk_test_write_doc(doc, path);
    }
    /* A second host's files make a second history. */
    for (int i = 0; i < 8; i++) {
        char commit[64];
        snprintf(commit, sizeof commit, "%040d", i + 1);
        write_revision(files, "laptop", i, commit, 99, 1, NULL);
    }
    pk_result r;
    ASSERT_EQ(pkbench((const char *const[]){"history", files, "--repo", dir, "--out", out,
                                            "--no-plots", "--name", "t", NULL},
                      &r),
              0);
    ASSERT_HAS(r.err.data, "no git repository at");
    pk_result_release(&r);
    json_t *h = load_json(out, "t");
    json_t *hosts = json_object_get(h, "hosts");
    ASSERT_EQ(json_array_size(hosts), 2);
    json_t *host = json_array_get(hosts, 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(host, "host")), "ci");
    ASSERT(json_is_false(json_object_get(host, "ancestry")));
    ASSERT_HAS(json_string_value(json_object_get(host, "order_note")), "commit date");
    json_t *f0 = json_array_get(json_object_get(host, "files"), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(f0, "commit_time")),
                  "2026-01-01T12:00:00+02:00");
    json_t *c =
        json_array_get(json_object_get(series_named(h, 0, "spawn_only/processkit"), "changes"), 0);
    ASSERT(c != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(c, "file_after")), 10);
    json_t *also = json_object_get(c, "also_changed");
    ASSERT(json_array_size(also) == 1);
    ASSERT_STR_EQ(json_string_value(json_array_get(also, 0)), "kernel");
    json_decref(h);

    /* --host keeps one history; a host no file has is named with those there are. */
    ASSERT_EQ(
        pkbench((const char *const[]){"history", files, "--repo", dir, "--out", out, "--no-plots",
                                      "--name", "one", "--host", "laptop", NULL},
                &r),
        0);
    pk_result_release(&r);
    h = load_json(out, "one");
    ASSERT_EQ(json_array_size(json_object_get(h, "hosts")), 1);
    json_decref(h);
    ASSERT_EQ(pkbench((const char *const[]){"history", files, "--host", "desk", "--no-plots",
                                            "--out", out, NULL},
                      &r),
              1);
    ASSERT_HAS(r.err.data, "--host: no file of host 'desk' (the files' hosts: ci, laptop)");
    pk_result_release(&r);

    /* Bad options are named. */
    ASSERT_EQ(pkbench((const char *const[]){"history", files, "--alpha", "2", NULL}, &r), 1);
    ASSERT_HAS(r.err.data, "--alpha needs a number in (0, 1), got '2'");
    pk_result_release(&r);
    ASSERT_EQ(pkbench((const char *const[]){"history", files, "--min-size", "1", NULL}, &r), 1);
    ASSERT_HAS(r.err.data, "--min-size needs a count from 2 to 1000");
    pk_result_release(&r);
    ASSERT_EQ(pkbench((const char *const[]){"history", NULL}, &r), 1);
    ASSERT_HAS(r.err.data, "history: no results DIR or FILE given");
    pk_result_release(&r);
    ASSERT_EQ(pkbench((const char *const[]){"history", files, "--filter", "(", NULL}, &r), 1);
    ASSERT_HAS(r.err.data, "--filter");
    pk_result_release(&r);
    ASSERT_EQ(pkbench((const char *const[]){"history", "--help", NULL}, &r), 0);
    ASSERT_HAS(r.out.data, "usage: pkbench history");
    pk_result_release(&r);
}
