/*
 * The phases suite: the reconciliation's arithmetic and its flagging rule on synthetic numbers;
 * the composition table covers every composite and names only primitives that exist; a snapshot
 * walk sees at least the threads a direct walk of the same process sees; every series runs,
 * reaps and leaves no cgroup leaf; a hand-built phases results file renders the phase,
 * primitives and reconciliation tables and the stacked-bar figures; and `pkbench run --suite
 * phases` end to end writes a file that matches the schema and renders.
 */
#define _GNU_SOURCE
#include "test.h"

#include "phases/attribution/phases.h"
#include "phases/attribution/walk.h"
#include "common/stats.h"
#include "suites/suite.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_TINY_PATH
#define PK_TINY_PATH ""
#endif
#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

#define PYTHON "/usr/bin/python3"

static void assert_near(double got, double want, const char *what, int line)
{
    if (!(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want))))
        pk_test_fail(__FILE__, line, "%s: got %.12g, want %.12g", what, got, want);
}

#define NEAR(got, want) assert_near((got), (want), #got, __LINE__)

/* ==== Reconciliation ========================================================================= */

static pkb_reconciliation reconcile(
    double c, double c_sd, double plain, double plain_sd, const pkb_recon_term *parts, size_t n)
{
    pkb_reconciliation out;
    ASSERT_OK(pkb_reconcile((pkb_recon_term){c, c_sd}, (pkb_recon_term){plain, plain_sd}, parts, n,
                            &out));
    return out;
}

TEST_IMPL(phases_reconcile_arithmetic)
{
    /* The arithmetic: 100 + 10 + 15 = 125 against 130. */
    const pkb_recon_term two[] = {{10, 0.5}, {15, 0.5}};
    pkb_reconciliation r = reconcile(130, 2, 100, 1, two, 2);
    NEAR(r.predicted_ns, 125);
    NEAR(r.measured_ns, 130);
    NEAR(r.residual_ns, 5);
    NEAR(r.residual_fraction, 5.0 / 130);
    NEAR(r.combined_sd_ns, sqrt(4 + 1 + 0.25 + 0.25));
    NEAR(r.threshold_ns, 0.05 * 130); /* 6.5 > 2 x 2.345 */
    ASSERT(!r.flagged);

    /* Beyond both limits: flagged, above and below the sum. */
    const pkb_recon_term one[] = {{10, 0}};
    r = reconcile(150, 1, 100, 1, one, 1);
    NEAR(r.residual_ns, 40);
    NEAR(r.threshold_ns, 7.5);
    ASSERT(r.flagged);
    r = reconcile(80, 1, 100, 1, one, 1);
    NEAR(r.residual_ns, -30);
    NEAR(r.residual_fraction, -30.0 / 80);
    ASSERT(r.flagged);

    /* Over 5% but inside twice the combined sd: the sd rule wins, not flagged. */
    r = reconcile(150, 30, 100, 20, one, 1);
    NEAR(r.combined_sd_ns, sqrt(900 + 400));
    NEAR(r.threshold_ns, 2 * sqrt(1300));
    ASSERT(fabs(r.residual_fraction) > 0.05);
    ASSERT(!r.flagged);

    /* Over twice the combined sd but inside 5%: the 5% rule wins, not flagged. */
    r = reconcile(1000, 1, 950, 1, one, 1); /* residual 40 = 4%, 2 sd = 2.83 */
    NEAR(r.residual_ns, 40);
    NEAR(r.threshold_ns, 50);
    ASSERT(fabs(r.residual_ns) > 2 * r.combined_sd_ns);
    ASSERT(!r.flagged);
    /* The same with the residual just past 5%: flagged. */
    r = reconcile(1000, 1, 939, 1, one, 1); /* residual 51 */
    ASSERT(r.flagged);
    /* Exactly at the limit is not past it. */
    r = reconcile(1000, 0, 940, 0, one, 1); /* residual 50 = 5% */
    NEAR(r.residual_ns, 50);
    ASSERT(!r.flagged);

    /* One sample: its sd is NaN and counts as 0; no parts at all is the plain spawn alone. */
    r = reconcile(110, NAN, 100, NAN, NULL, 0);
    NEAR(r.combined_sd_ns, 0);
    NEAR(r.threshold_ns, 5.5);
    ASSERT(r.flagged);

    /* Bad input. */
    pkb_reconciliation out;
    ASSERT_EQ(pkb_reconcile((pkb_recon_term){0, 1}, (pkb_recon_term){1, 1}, NULL, 0, &out),
              -EINVAL);
    ASSERT_EQ(pkb_reconcile((pkb_recon_term){NAN, 1}, (pkb_recon_term){1, 1}, NULL, 0, &out),
              -EINVAL);
    ASSERT_EQ(pkb_reconcile((pkb_recon_term){1, -1}, (pkb_recon_term){1, 1}, NULL, 0, &out),
              -EINVAL);
    ASSERT_EQ(pkb_reconcile((pkb_recon_term){1, 1}, (pkb_recon_term){1, INFINITY}, NULL, 0, &out),
              -EINVAL);
    ASSERT_EQ(pkb_reconcile((pkb_recon_term){1, 1}, (pkb_recon_term){1, 1}, NULL, 1, &out),
              -EINVAL);
    const pkb_recon_term bad[] = {{-3, 0}};
    ASSERT_EQ(pkb_reconcile((pkb_recon_term){1, 1}, (pkb_recon_term){1, 1}, bad, 1, &out), -EINVAL);
}

/* ==== The composition table ================================================================== */

static bool lists(const char *const *composition, const char *name)
{
    for (; composition != NULL && *composition != NULL; composition++)
        if (strcmp(*composition, name) == 0)
            return true;
    return false;
}

static size_t count(const char *const *composition)
{
    size_t n = 0;
    while (composition != NULL && composition[n] != NULL)
        n++;
    return n;
}

TEST_IMPL(phases_composition_covers_composites)
{
    size_t baselines = 0, composites = 0;
    for (size_t i = 0; i < pkb_phase_def_count; i++) {
        const pkb_phase_def *d = &pkb_phase_defs[i];
        /* Names are unique and findable. */
        ASSERT(pkb_phase_find(d->group, d->name) == d);
        ASSERT(d->run != NULL && d->description != NULL);
        if (d->kind != PKB_KIND_PHASE) {
            if (d->composition != NULL)
                pk_test_fail(__FILE__, __LINE__, "%s/%s is not a phase but declares parts",
                             d->group, d->name);
            continue;
        }
        ASSERT_STR_EQ(d->group, "phase");
        if (d->baseline) {
            baselines++;
            ASSERT_STR_EQ(d->name, "os_spawn_plain");
            ASSERT(d->composition == NULL);
            continue;
        }
        /* Every composite declares its parts (possibly none), each an existing primitive (one
         * the composite takes twice is listed twice), and builds on os_spawn_plain or on a phase
         * series earlier in the table, so the base is measured first and no chain loops. */
        composites++;
        if (d->composition == NULL)
            pk_test_fail(__FILE__, __LINE__, "phase/%s declares no composition", d->name);
        for (size_t k = 0; d->composition[k] != NULL; k++)
            if (pkb_phase_find("primitive", d->composition[k]) == NULL)
                pk_test_fail(__FILE__, __LINE__, "phase/%s lists %s, which is no primitive",
                             d->name, d->composition[k]);
        if (d->base != NULL) {
            const pkb_phase_def *b = pkb_phase_find("phase", d->base);
            if (b == NULL || b >= d)
                pk_test_fail(__FILE__, __LINE__, "phase/%s builds on %s, no earlier phase series",
                             d->name, d->base);
        }
        if (d->oneshot != 0) {
            /* A one-shot step with a child-less primitive lists it; the others are residuals. */
            ASSERT_EQ(lists(d->composition, "pidfd_open"), (d->oneshot & PKB_ONESHOT_PIDFD) != 0);
            ASSERT_EQ(lists(d->composition, "held_procs_read"),
                      (d->oneshot & (PKB_ONESHOT_POOLED_LEAF | PKB_ONESHOT_PROCS_JOIN)) != 0);
            ASSERT_EQ(d->walk, PKB_WALK_NONE);
            continue;
        }
        if (d->steps == 0)
            continue; /* the library's own spawns, the capture path */
        /* A ladder series lists the primitive of each of its steps and of its walk, no more. */
        size_t want = 0;
        static const struct {
            unsigned step;
            const char *part;
        } step_parts[] = {{PKB_STEP_PIDFD, "pidfd_open"},
                          {PKB_STEP_PGROUP, "setpgid"},
                          {PKB_STEP_PDEATHSIG, "pdeathsig_prctl"},
                          {PKB_STEP_CGROUP, "cgroup_create_rmdir"},
                          {PKB_STEP_CGROUP, "cgroup_kill"}};
        for (size_t k = 0; k < sizeof step_parts / sizeof step_parts[0]; k++) {
            if (!(d->steps & step_parts[k].step))
                continue;
            want++;
            if (!lists(d->composition, step_parts[k].part))
                pk_test_fail(__FILE__, __LINE__, "phase/%s misses %s", d->name, step_parts[k].part);
        }
        const char *walk = d->walk == PKB_WALK_SNAPSHOT        ? "thread_snapshot_walk"
                           : (d->steps & PKB_STEP_CGROUP) != 0 ? "cgroup_procs_read"
                                                               : "direct_thread_walk";
        ASSERT(d->walk != PKB_WALK_NONE);
        if (!lists(d->composition, walk))
            pk_test_fail(__FILE__, __LINE__, "phase/%s misses its walk %s", d->name, walk);
        ASSERT_EQ(count(d->composition), want + 1);
        /* Its twin differs only in the walk. */
        char twin[96];
        const char *suffix = d->walk == PKB_WALK_DIRECT ? "_direct" : "_snapshot";
        size_t stem = strlen(d->name) - strlen(suffix);
        ASSERT(strcmp(d->name + stem, suffix) == 0);
        snprintf(twin, sizeof twin, "%.*s%s", (int)stem, d->name,
                 d->walk == PKB_WALK_DIRECT ? "_snapshot" : "_direct");
        const pkb_phase_def *t = pkb_phase_find("phase", twin);
        if (t == NULL)
            pk_test_fail(__FILE__, __LINE__, "phase/%s has no twin %s", d->name, twin);
        ASSERT_EQ(t->steps, d->steps);
        ASSERT_NE(t->walk, d->walk);
    }
    ASSERT_EQ(baselines, 1);
    ASSERT_GE(composites, 19);
    /* The one-shot ladder reconciles the contained spawn step by step down to os_spawn_plain. */
    const char *chain[] = {"processkit_contained", "clone3_contained", "clone3_close_range",
                           "clone3_by_pid"};
    for (size_t i = 0; i + 1 < sizeof chain / sizeof chain[0]; i++)
        ASSERT_STR_EQ(pkb_phase_find("phase", chain[i])->base, chain[i + 1]);
    ASSERT(pkb_phase_find("phase", "clone3_by_pid")->base == NULL);
    ASSERT_STR_EQ(pkb_phase_find("phase", "processkit_defaults")->base, "vfork_pipes_poll");
    /* The primitives and the lock pair exist. */
    static const char *const primitives[] = {"cgroup_create_rmdir",
                                             "pidfd_open",
                                             "pipe2_pair",
                                             "direct_thread_walk",
                                             "thread_snapshot_walk",
                                             "program_lookup_absolute_path",
                                             "program_lookup_bare_name",
                                             "setpgid"};
    for (size_t i = 0; i < sizeof primitives / sizeof primitives[0]; i++)
        if (pkb_phase_find("primitive", primitives[i]) == NULL)
            pk_test_fail(__FILE__, __LINE__, "no primitive %s", primitives[i]);
    ASSERT(pkb_phase_find("spawn_lock", "parallel16_locked")->locked);
    ASSERT(!pkb_phase_find("spawn_lock", "parallel16_unlocked")->locked);
}

/* ==== Walks ================================================================================== */

struct gate {
    pthread_mutex_t m;
    pthread_cond_t c;
    bool open;
};

static void *wait_at_gate(void *arg)
{
    struct gate *g = arg;
    pthread_mutex_lock(&g->m);
    while (!g->open)
        pthread_cond_wait(&g->c, &g->m);
    pthread_mutex_unlock(&g->m);
    return NULL;
}

TEST_IMPL(phases_snapshot_walk_sees_direct_threads)
{
    struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    pthread_t threads[4];
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(pthread_create(&threads[i], NULL, wait_at_gate, &g), 0);
    pkb_walk_counts direct, snap;
    ASSERT_OK(pkb_walk_direct((int)getpid(), &direct));
    ASSERT_OK(pkb_walk_snapshot((int)getpid(), &snap));
    pthread_mutex_lock(&g.m);
    g.open = true;
    pthread_cond_broadcast(&g.c);
    pthread_mutex_unlock(&g.m);
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);

    ASSERT_EQ(direct.processes, 1);
    ASSERT_GE(direct.threads, 5); /* this thread and the four at the gate */
    ASSERT_EQ(direct.target_threads, direct.threads);
    ASSERT_GE(snap.target_threads, direct.threads);
    ASSERT_GE(snap.threads, snap.target_threads);
    ASSERT_GE(snap.threads, snap.processes);
    ASSERT_GE(snap.processes, 2); /* at least the runner and this test */
    ASSERT_EQ(pkb_walk_direct(0x7ffffff0, &direct), -ENOENT);
}

/* ==== Every series runs once ================================================================= */

TEST_IMPL(phases_series_run_and_leave_nothing)
{
    if (PK_TINY_PATH[0] == '\0')
        pk_test_skip_gate("build", "no tiny helper for this architecture");
    pkb_phases_env *env;
    ASSERT_OK(pkb_phases_env_open(PK_TINY_PATH, &env));
    bool cgroup = pk_host_containment() == PK_CONTAIN_CGROUP;
    size_t ran = 0;
    for (size_t i = 0; i < pkb_phase_def_count; i++) {
        const pkb_phase_def *d = &pkb_phase_defs[i];
        pkb_phase_run *run;
        char why[256] = "";
        int rc = pkb_phase_run_open(d, env, &run, why, sizeof why);
        if (rc != 0) {
            /* Only a host without a delegated cgroup (or as a session leader) may refuse. */
            if (cgroup && (d->needs & PKB_NEED_CGROUP))
                pk_test_fail(__FILE__, __LINE__, "%s/%s refused: %s", d->group, d->name, why);
            ASSERT(d->needs != 0 && why[0] != '\0');
            printf("# %s/%s refused here: %s\n", d->group, d->name, why);
            json_decref(pkb_phase_extra(d, NULL));
            continue;
        }
        for (int k = 0; k < 2; k++) {
            pkb_sample s;
            memset(&s, 0, sizeof s);
            rc = pkb_phase_iterate(run, &s);
            if (rc != 0)
                pk_test_fail(__FILE__, __LINE__, "%s/%s: %s", d->group, d->name, s.error);
            ASSERT_EQ(s.children, d->children);
        }
        json_t *extra = pkb_phase_extra(d, run);
        ASSERT_STR_EQ(json_string_value(json_object_get(extra, "kind")),
                      pkb_phase_kind_name(d->kind));
        ASSERT_EQ(json_array_size(json_object_get(extra, "composition")), count(d->composition));
        json_decref(extra);
        pkb_phase_run_close(run);
        ran++;
    }
    json_t *host = pkb_phases_env_json(env);
    ASSERT(json_is_integer(json_object_get(host, "path_entries")));
    ASSERT_GE(json_integer_value(json_object_get(host, "machine_threads")), 1);
    json_decref(host);
    pkb_phases_env_close(env);
    pk_cleanup();
    ASSERT_GE(ran, 10);
    /* Only this process's leaves: another pkbench (or test) may be using its own beside us. */
    char mine[64];
    snprintf(mine, sizeof mine, "pkb-phases-%d-", (int)getpid());
    if (cgroup)
        ASSERT_EQ(pk_test_count_leaves(mine), 0);
}

/* ==== The report ============================================================================= */

static json_t *series(const char *group, const char *name, bool baseline, double us, double calls)
{
    json_t *samples = json_array();
    for (int i = -1; i <= 1; i++) /* mean us x calls, sd us x calls / 10 */
        json_array_append_new(samples, json_real((us + i * us / 10) * calls * 1e3));
    char full[128];
    snprintf(full, sizeof full, "%s/%s", group, name);
    json_t *s = json_pack("{s:s, s:s, s:s, s:b, s:s, s:s, s:f, s:o}", "name", full, "scenario",
                          group, "contender", name, "baseline", baseline, "status", "measured",
                          "unit", "runs/s", "work_per_iteration", 1.0, "samples_ns", samples);
    json_object_set_new(s, "kind",
                        json_string(strcmp(group, "primitive") == 0    ? "primitive"
                                    : strcmp(group, "spawn_lock") == 0 ? "lock"
                                                                       : "phase"));
    if (calls > 1)
        json_object_set_new(s, "calls_per_iteration", json_integer((json_int_t)calls));
    return s;
}

static void compose(json_t *s, const char *const *parts)
{
    json_t *a = json_array();
    for (; *parts != NULL; parts++)
        json_array_append_new(a, json_string(*parts));
    json_object_set_new(s, "composition", a);
}

/* A phases results file: the compare fixture's envelope around synthetic series. */
static void write_phases_fixture(const char *path)
{
    json_error_t jerr;
    json_t *doc = json_load_file(PK_TEST_DATA_DIR "/compare-fixture.json", 0, &jerr);
    if (doc == NULL)
        pk_test_fail(__FILE__, __LINE__, "compare-fixture.json: %s", jerr.text);
    json_object_set_new(doc, "suite", json_string("phases"));
    json_object_set_new(doc, "benchmarks", json_array());
    json_object_set_new(doc, "phases",
                        json_pack("{s:s, s:b, s:b, s:b, s:i, s:i, s:i}", "child", "/x/pk_tiny",
                                  "clone3", 1, "cgroup", 1, "setpgid", 0, "path_entries", 6,
                                  "machine_processes", 80, "machine_threads", 95));
    json_t *all = json_array();
    json_array_append_new(all, series("phase", "os_spawn_plain", true, 100, 1));
    json_t *s = series("phase", "pidfd_direct", false, 112, 1); /* 100 + 4 + 5 = 109: within */
    compose(s, (const char *const[]){"pidfd_open", "direct_thread_walk", NULL});
    json_object_set_new(s, "steps", json_pack("[s]", "pidfd"));
    json_object_set_new(s, "walk", json_string("direct"));
    json_array_append_new(all, s);
    s = series("phase", "pgroup_direct", false, 120, 1); /* setpgid refused: not reconciled */
    compose(s, (const char *const[]){"pidfd_open", "setpgid", "direct_thread_walk", NULL});
    json_array_append_new(all, s);
    s = series("phase", "containment_sequence_direct", false, 220, 1); /* 154: flagged */
    compose(s, (const char *const[]){"pidfd_open", "cgroup_create_rmdir", NULL});
    json_array_append_new(all, s);
    s = series("phase", "clone3_by_pid", false, 101, 1); /* plain + nothing: +1, within */
    compose(s, (const char *const[]){NULL});
    json_array_append_new(all, s);
    s = series("phase", "clone3_pidfd", false, 106, 1); /* its base 101 + 4 = 105 */
    compose(s, (const char *const[]){"pidfd_open", NULL});
    json_object_set_new(s, "base", json_string("clone3_by_pid"));
    json_array_append_new(all, s);
    s = series("phase", "processkit_contained", false, 110, 1); /* its base is not in the file */
    compose(s, (const char *const[]){NULL});
    json_object_set_new(s, "base", json_string("clone3_contained"));
    json_array_append_new(all, s);
    json_array_append_new(all, series("primitive", "pidfd_open", false, 4, 1));
    json_array_append_new(all, series("primitive", "direct_thread_walk", false, 5, 4));
    json_array_append_new(all, series("primitive", "cgroup_create_rmdir", false, 50, 1));
    s = series("primitive", "setpgid", false, 1, 1);
    json_object_set_new(s, "status", json_string("refused"));
    json_object_set_new(s, "samples_ns", json_array());
    json_object_set_new(s, "reason", json_string("pkbench is a session leader"));
    json_array_append_new(all, s);
    s = series("spawn_lock", "parallel16_unlocked", false, 1500, 1);
    json_object_set_new(s, "locked", json_false());
    json_array_append_new(all, s);
    s = series("spawn_lock", "parallel16_locked", false, 2500, 1);
    json_object_set_new(s, "locked", json_true());
    json_array_append_new(all, s);
    json_object_set_new(doc, "series", all);
    ASSERT_EQ(json_dump_file(doc, path, JSON_INDENT(1)), 0);
    json_decref(doc);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        pk_test_fail(__FILE__, __LINE__, "cannot open %s", path);
    static char buf[1 << 17];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void expect_in(const char *text, const char *want, int line)
{
    if (strstr(text, want) == NULL)
        pk_test_fail(__FILE__, line, "the report lacks: %s", want);
}

#define EXPECT_IN(text, want) expect_in((text), (want), __LINE__)

/* Validates a results file against the schema with Python's jsonschema (each test that validates
 * checks for it first). */
static void validate(const char *path)
{
    (void)pk_test_validate_results(path);
}

TEST_IMPL(phases_report_reconciles_synthetic_file)
{
    pk_test_need_jsonschema();
    char file[512], out[512], md[600], err[512];
    snprintf(file, sizeof file, "%s/phases-fixture.json", pk_test_tmpdir());
    snprintf(out, sizeof out, "%s/reports", pk_test_tmpdir());
    write_phases_fixture(file);
    validate(file);
    int rc = pkb_report_render(file, out, &(pkb_report_options){.no_plots = true}, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "render: %d: %s", rc, err);
    snprintf(md, sizeof md, "%s/phases-fixture.md", out);
    const char *text = slurp(md);
    EXPECT_IN(text, "## Phase series");
    EXPECT_IN(text, "| `pidfd_direct` | +pidfd, direct walk | ");
    EXPECT_IN(text, "| 112.0 ± 11.2 µs | 112.0 µs | +12.00 µs (+12.0%) |");
    /* Per call: 4 calls per iteration. */
    EXPECT_IN(text, "| `direct_thread_walk` |  | 5.000 ± 0.500 µs | 5.000 µs | 4 |");
    EXPECT_IN(text, "| `pidfd_direct` | `os_spawn_plain` + `pidfd_open` + `direct_thread_walk` | "
                    "109.0 µs | 112.0 µs | +3.000 µs | +2.7% |");
    EXPECT_IN(text, "| `containment_sequence_direct` | `os_spawn_plain` + `pidfd_open` + "
                    "`cgroup_create_rmdir` | 154.0 µs | 220.0 µs | +66.00 µs | +30.0% |");
    EXPECT_IN(text, "+30.0% | 49.36 µs | **flagged** |"); /* 2 x sqrt(22² + 10² + .4² + 5²) */
    /* pidfd_direct: |+3| is inside max(5% = 5.6, 2 x sqrt(11.2² + 10² + .4² + .5²) = 30.06) */
    EXPECT_IN(text, "+2.7% | 30.06 µs | within |");
    EXPECT_IN(text, "not reconciled: `setpgid` refused");
    EXPECT_IN(text, "| `clone3_pidfd` | `clone3_by_pid` + `pidfd_open` | 105.0 µs | 106.0 µs "
                    "| +1.000 µs | +0.9% |");
    EXPECT_IN(text, "| `clone3_by_pid` | `os_spawn_plain` | 100.0 µs | 101.0 µs | +1.000 µs");
    EXPECT_IN(text, "not reconciled: `clone3_contained` not in this file");
    EXPECT_IN(text, "4 of 6 composites reconciled; 1 flagged.");
    EXPECT_IN(text, "`setpgid`: refused — pkbench is a session leader");
    EXPECT_IN(text, "Locked against unlocked: +1.000 ms (+66.7%)");
    EXPECT_IN(text, "| `machine_threads` | 95 |");

    /* A malformed phases field is named. */
    json_t *doc = json_load_file(file, 0, NULL);
    json_object_set_new(json_array_get(json_object_get(doc, "series"), 1), "composition",
                        json_string("pidfd_open"));
    ASSERT_EQ(json_dump_file(doc, file, 0), 0);
    json_decref(doc);
    rc = pkb_report_render(file, out, &(pkb_report_options){.no_plots = true}, err, sizeof err);
    ASSERT_EQ(rc, -EBADMSG);
    ASSERT(strstr(err, "series[1].composition") != NULL);
}

/* The fixture with the capture path's pair, 20 rounds of it on a machine whose speed swings by
 * ±30% from round to round: processkit_defaults is `factor` × vfork_pipes_poll in every round,
 * give or take 0.5%. Renders it and returns the report's text. */
static const char *render_capture_target(const char *name, double factor, bool with_pipes)
{
    char file[512], out[512], md[700], err[512];
    snprintf(file, sizeof file, "%s/%s.json", pk_test_tmpdir(), name);
    snprintf(out, sizeof out, "%s/reports", pk_test_tmpdir());
    write_phases_fixture(file);
    json_t *doc = json_load_file(file, 0, NULL);
    ASSERT(doc != NULL);
    json_t *all = json_object_get(doc, "series");
    json_t *xp = json_array(), *xd = json_array(), *rounds = json_array();
    pks_rng rng;
    pks_rng_seed(&rng, 3);
    for (int i = 0; i < 20; i++) {
        double level = 300e3 * (1 + 0.3 * sin(i * 2.1));
        json_array_append_new(xp, json_real(level * exp(0.005 * pks_rng_normal(&rng))));
        json_array_append_new(xd, json_real(level * factor * exp(0.005 * pks_rng_normal(&rng))));
        json_array_append_new(rounds, json_integer(i + 1));
    }
    json_t *p = series("phase", "vfork_pipes_poll", false, 300, 1);
    json_object_set_new(p, "samples_ns", xp);
    json_object_set(p, "round", rounds);
    json_t *d = series("phase", "processkit_defaults", false, 300, 1);
    compose(d, (const char *const[]){"pidfd_open", NULL});
    json_object_set_new(d, "base", json_string("vfork_pipes_poll"));
    json_object_set_new(d, "samples_ns", xd);
    json_object_set_new(d, "round", rounds);
    if (with_pipes)
        json_array_append_new(all, p);
    else
        json_decref(p);
    json_array_append_new(all, d);
    ASSERT_EQ(json_dump_file(doc, file, JSON_INDENT(1) | JSON_REAL_PRECISION(17)), 0);
    json_decref(doc);
    int rc = pkb_report_render(file, out, &(pkb_report_options){.no_plots = true}, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "render: %d: %s", rc, err);
    snprintf(md, sizeof md, "%s/%s.md", out, name);
    return slurp(md);
}

TEST_IMPL(phases_report_states_the_capture_target)
{
    /* Apart, each series spreads by a quarter and the pair is too noisy; paired by round, the
     * ratio is 1.05 give or take a little: within 1.10×, met. */
    const char *text = render_capture_target("capture-met", 1.05, true);
    EXPECT_IN(text, "## Targets");
    EXPECT_IN(text, "| `processkit_defaults` within 1.10× of `vfork_pipes_poll` | 1.0");
    EXPECT_IN(text, "] | met |");
    /* The terminal view (the end of `pkbench run --suite phases`) states it too. */
    char file[512], out[512], md[700], err[512];
    snprintf(file, sizeof file, "%s/capture-met.json", pk_test_tmpdir());
    pkb_buf term = {0};
    ASSERT_OK(pkb_report_print(file, false, &term, err, sizeof err));
    EXPECT_IN(term.data, "processkit_defaults within 1.10× of vfork_pipes_poll  1.0");
    EXPECT_IN(term.data, "]  met\n");
    pkb_buf_free(&term);
    /* 1.25×: the whole CI misses the target. */
    text = render_capture_target("capture-missed", 1.25, true);
    EXPECT_IN(text, "| `processkit_defaults` within 1.10× of `vfork_pipes_poll` | 1.2");
    EXPECT_IN(text, "] | not met |");
    /* Without the loop to compare with, the target is not checked, and says why. */
    text = render_capture_target("capture-alone", 1.05, false);
    EXPECT_IN(text, "| no measured `vfork_pipes_poll` series | not checked |");
    /* A file with neither series has no targets section. */
    snprintf(file, sizeof file, "%s/no-capture.json", pk_test_tmpdir());
    snprintf(out, sizeof out, "%s/reports", pk_test_tmpdir());
    write_phases_fixture(file);
    ASSERT_EQ(
        pkb_report_render(file, out, &(pkb_report_options){.no_plots = true}, err, sizeof err), 0);
    snprintf(md, sizeof md, "%s/no-capture.md", out);
    ASSERT(strstr(slurp(md), "## Targets") == NULL);
}

/* The terminal view of the same file: the phase table and the reconciliation, cell by cell the
 * Markdown's numbers (see phases_report_reconciles_synthetic_file). */
TEST_IMPL(phases_terminal_tables_synthetic_file)
{
    char file[512], err[512];
    snprintf(file, sizeof file, "%s/phases-fixture.json", pk_test_tmpdir());
    write_phases_fixture(file);
    pkb_buf out = {0};
    int rc = pkb_report_print(file, false, &out, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "print: %d: %s", rc, err);
    printf("%s", out.data);
    EXPECT_IN(out.data, "phases: full profile, ");
    EXPECT_ROW(out.data, "series", "median", "mean ± sd", "vs os_spawn_plain");
    EXPECT_ROW(out.data, "os_spawn_plain", "100.0 µs", "100.0 ± 10.0 µs", "baseline");
    EXPECT_ROW(out.data, "pidfd_direct", "112.0 µs", "112.0 ± 11.2 µs", "+12.00 µs (+12.0%)");
    const char *recon = strstr(out.data, "\nreconciliation (");
    ASSERT(recon != NULL);
    EXPECT_ROW(recon, "composite", "parts", "sum", "measured", "residual", "residual %", "limit");
    EXPECT_ROW(recon, "pidfd_direct", "2", "109.0 µs", "112.0 µs", "+3.000 µs", "+2.7%", "30.06 µs",
               "within");
    EXPECT_ROW(recon, "containment_sequence_direct", "2", "154.0 µs", "220.0 µs", "+66.00 µs",
               "+30.0%", "49.36 µs", "flagged");
    EXPECT_ROW(recon, "pgroup_direct", "3", "n/a", "n/a", "n/a", "n/a", "n/a",
               "not reconciled: setpgid refused");
    /* Composites built on another series: its median + the primitives they add. */
    EXPECT_ROW(recon, "clone3_pidfd", "1", "105.0 µs", "106.0 µs", "+1.000 µs", "+0.9%", "29.29 µs",
               "within");
    EXPECT_ROW(recon, "processkit_contained", "0", "n/a", "n/a", "n/a", "n/a", "n/a",
               "not reconciled: clone3_contained not in this file");
    EXPECT_IN(out.data, "  4 of 6 composites reconciled; 1 flagged");
    ASSERT(strstr(out.data, "\033[") == NULL);
    pkb_buf_free(&out);
    /* With colour: the flag in yellow, the header bold; the same text underneath. */
    ASSERT_OK(pkb_report_print(file, true, &out, err, sizeof err));
    EXPECT_IN(out.data, "\033[33mflagged\033[0m");
    EXPECT_IN(out.data, "\033[1mcomposite\033[0m");
    pkb_buf_free(&out);
    /* A malformed phases field is named, as by the Markdown. */
    json_t *doc = json_load_file(file, 0, NULL);
    json_object_set_new(json_array_get(json_object_get(doc, "series"), 1), "composition",
                        json_string("pidfd_open"));
    ASSERT_EQ(json_dump_file(doc, file, 0), 0);
    json_decref(doc);
    ASSERT_EQ(pkb_report_print(file, false, &out, err, sizeof err), -EBADMSG);
    ASSERT(strstr(err, "series[1].composition") != NULL);
    pkb_buf_free(&out);
}

static void need_plot_tools(void)
{
    pk_result r;
    ASSERT_OK(
        pk_run(&(pk_command){.argv = (const char *const[]){"gnuplot", "--version", NULL}}, &r));
    bool gnuplot = r.outcome.code == 0;
    pk_result_release(&r);
    ASSERT_OK(pk_run(
        &(pk_command){.argv = (const char *const[]){PYTHON, "-c", "import matplotlib", NULL}}, &r));
    bool mpl = r.outcome.code == 0;
    pk_result_release(&r);
    if (!gnuplot)
        pk_test_skip_gate("package:gnuplot-nox", "gnuplot cannot run (Debian: gnuplot-nox)");
    if (!mpl)
        pk_test_skip_gate("package:python3-matplotlib",
                          "%s cannot import matplotlib (Debian: python3-matplotlib)", PYTHON);
}

static void assert_figure(const char *dir, const char *name, const char *magic)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        pk_test_fail(__FILE__, __LINE__, "no figure %s", path);
    char head[16] = "";
    size_t n = fread(head, 1, strlen(magic), f);
    fclose(f);
    if (n != strlen(magic) || memcmp(head, magic, n) != 0)
        pk_test_fail(__FILE__, __LINE__, "%s does not start with its magic", path);
}

TEST_IMPL(phases_report_stacked_bar_plots)
{
    need_plot_tools();
    char file[512], out[512], err[512];
    snprintf(file, sizeof file, "%s/phases-fixture.json", pk_test_tmpdir());
    snprintf(out, sizeof out, "%s/reports", pk_test_tmpdir());
    write_phases_fixture(file);
    int rc = pkb_report_render(file, out, NULL, err, sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "render: %d: %s", rc, err);
    assert_figure(out, "phases-fixture-reconciliation.gnuplot.png", "\x89PNG");
    assert_figure(out, "phases-fixture-reconciliation.matplotlib.png", "\x89PNG");
    assert_figure(out, "phases-fixture-reconciliation.gnuplot.svg", "<?xml");
    char dat[1024];
    snprintf(dat, sizeof dat, "%s/phases-fixture-reconciliation.dat", out);
    const char *text = slurp(dat);
    /* Four reconciled bars; the flagged one's residual is its own segment, 154 to 220 µs. The
     * kinds: os_spawn_plain, the primitives and other bases in order of appearance, residual. */
    EXPECT_IN(text, "bar\t1\tcontainment_sequence_direct\t220.000000\t22.000000\t154.000000\n");
    EXPECT_IN(text, "seg\t1\t3\tcgroup_create_rmdir\t104.000000\t154.000000\n");
    EXPECT_IN(text, "seg\t1\t5\tresidual\t154.000000\t220.000000\n");
    EXPECT_IN(text, "seg\t0\t0\tos_spawn_plain\t0\t100.000000\n");
    /* A composite with a base of its own stands on it. */
    EXPECT_IN(text, "seg\t3\t4\tclone3_by_pid\t0\t101.000000\n");
    EXPECT_IN(text, "seg\t3\t1\tpidfd_open\t101.000000\t105.000000\n");
    char md[600];
    snprintf(md, sizeof md, "%s/phases-fixture.md", out);
    EXPECT_IN(slurp(md), "](phases-fixture-reconciliation.gnuplot.svg)");
}

/* ==== pkbench end to end ===================================================================== */

TEST_IMPL(pkbench_phases_quick_run_renders)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    pk_test_need_jsonschema();
    char file[512], out[512], md[600];
    snprintf(file, sizeof file, "%s/phases.json", pk_test_tmpdir());
    snprintf(out, sizeof out, "%s/reports", pk_test_tmpdir());
    pk_result r;
    ASSERT_OK(pk_run(
        &(pk_command){.argv = (const char *const[]){PK_PKBENCH_PATH, "run", "--suite", "phases",
                                                    "--profile", "quick", "--no-prime", "--filter",
                                                    "^(phase/(os_spawn_plain|pidfd_direct)|"
                                                    "primitive/(pidfd_open|direct_thread_walk))$",
                                                    "--settle", "0.01", "--repetitions", "10",
                                                    "--out", file, NULL},
                      .timeout_ms = 120000},
        &r));
    ASSERT_EXITED(r, 0);
    /* While it ran, a line per series, per call; at its end, the reconciliation. */
    const char *err = r.err.data != NULL ? r.err.data : "";
    EXPECT_IN(err, "pkbench: [1/4] phase/os_spawn_plain ");
    EXPECT_IN(err, "  baseline");
    EXPECT_IN(err, " vs os_spawn_plain");
    EXPECT_IN(err, " per call (1 per iteration)");
    EXPECT_IN(r.out.data, "reconciliation (a composite's base, os_spawn_plain or the series");
    EXPECT_IN(r.out.data, "  1 of 1 composite reconciled; ");
    pk_result_release(&r);
    validate(file);
    json_t *doc = json_load_file(file, 0, NULL);
    ASSERT(doc != NULL);
    ASSERT_STR_EQ(json_string_value(json_object_get(doc, "suite")), "phases");
    ASSERT(json_is_object(json_object_get(doc, "phases")));
    json_t *all = json_object_get(doc, "series");
    ASSERT_EQ(json_array_size(all), 4);
    json_t *pidfd = json_array_get(all, 1);
    ASSERT_STR_EQ(json_string_value(json_object_get(pidfd, "name")), "phase/pidfd_direct");
    ASSERT_STR_EQ(json_string_value(json_object_get(pidfd, "status")), "measured");
    ASSERT_EQ(json_array_size(json_object_get(pidfd, "composition")), 2);
    json_decref(doc);

    ASSERT_OK(pk_run(&(pk_command){.argv = (const char *const[]){PK_PKBENCH_PATH, "report", file,
                                                                 "--out", out, "--no-plots", NULL},
                                   .timeout_ms = 60000},
                     &r));
    ASSERT_EXITED(r, 0);
    pk_result_release(&r);
    snprintf(md, sizeof md, "%s/phases.md", out);
    const char *text = slurp(md);
    EXPECT_IN(text, "## Reconciliation");
    EXPECT_IN(text, "| `pidfd_direct` | `os_spawn_plain` + `pidfd_open` + `direct_thread_walk` | ");
    EXPECT_IN(text, "1 of 1 composite reconciled");
}
