/*
 * The benchmark contenders (contenders/, contenders/contender.h): every contender in
 * the registry passes the harness's own correctness check in every scenario it supports, iteration
 * after iteration, leaking no descriptor and no child; the check refuses wrong counts with a reason
 * (including the rule for contenders that discard their output); the registry is well formed.
 *
 * Each contender runs in a child forked by the test. libuv keeps descriptors for the life of the
 * process once a loop has been made (a pipe pair behind its signal handling), which the runner's
 * per-test hygiene check would report as a leak although nothing leaks per iteration. So the leak
 * check here is per contender and across iterations: the open descriptors after one complete
 * round (setup, check, teardown: whatever a library keeps for good exists by then) must be
 * exactly those after a second round of several iterations, and no child may be left after any
 * iteration. The forked child is reaped, so the runner's own check still sees a clean test.
 */
#define _GNU_SOURCE
#include "test.h"

#include "contenders/registry.h"
#include "suites/scenarios/scenario.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The tiny static helper, built in phases/ on x86_64 only. */
#ifdef PK_TINY_PATH
static const char *const tiny_path = PK_TINY_PATH;
#else
static const char *const tiny_path = NULL;
#endif

enum { MAX_FDS = 4096, ITERATIONS = 5 };

static void fd_snapshot(unsigned char *set)
{
    memset(set, 0, MAX_FDS);
    DIR *d = opendir("/proc/self/fd");
    ASSERT(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        if (isdigit((unsigned char)e->d_name[0]) && fd != dirfd(d) && fd < MAX_FDS)
            set[fd] = 1;
    }
    closedir(d);
}

static void assert_no_child(const pkb_contender *c, pkb_scenario s)
{
    siginfo_t si = {0};
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
        pk_test_fail(__FILE__, __LINE__, "%s / %s left a child (pid %d, %s)", c->name,
                     pkb_scenario_name(s), si.si_pid, si.si_pid != 0 ? "a zombie" : "running");
    ASSERT_EQ(errno, ECHILD);
}

static const char *usable_tiny(void)
{
    if (tiny_path == NULL)
        printf("spawn_only skipped: no tiny helper for this architecture (phases/tiny.<arch>.S)\n");
    else if (access(tiny_path, X_OK) != 0)
        printf("spawn_only skipped: %s: %s\n", tiny_path, strerror(errno));
    else
        return tiny_path;
    return NULL;
}

/* Two rounds of setup, checked iterations and teardown; the second must leave the descriptors
 * exactly as the first left them. */
static void exercise(const pkb_contender *c, pkb_scenario s, const char *cat, const char *tiny)
{
    static unsigned char before[MAX_FDS], after[MAX_FDS];
    pkb_workload w;
    ASSERT_OK(pkb_workload_build(s, cat, tiny, &w));
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            pk_cleanup(); /* processkit's pool of cgroup leaves is kept on purpose */
            fd_snapshot(before);
        }
        void *state = NULL;
        char refused[256];
        if (pkb_contender_setup(c, &state, &w, refused, sizeof refused) != 0)
            pk_test_fail(__FILE__, __LINE__, "%s", refused);
        for (int i = 0; i < (round == 0 ? 1 : ITERATIONS); i++) {
            char why[256] = "";
            if (pkb_check_contender(c, state, &w, why, sizeof why) != 0)
                pk_test_fail(__FILE__, __LINE__, "%s / %s, round %d, iteration %d: %s", c->name,
                             pkb_scenario_name(s), round, i, why);
            assert_no_child(c, s);
        }
        if (c->teardown != NULL)
            c->teardown(state);
    }
    pk_cleanup();
    fd_snapshot(after);
    for (int fd = 0; fd < MAX_FDS; fd++)
        if (before[fd] != after[fd])
            pk_test_fail(__FILE__, __LINE__, "%s / %s: descriptor %d %s across iterations", c->name,
                         pkb_scenario_name(s), fd, after[fd] ? "leaked" : "vanished");
    pkb_workload_free(&w);
}

TEST_IMPL(contenders_pass_check_every_scenario)
{
    char *cat;
    ASSERT_OK(pk_resolve_program("cat", NULL, &cat, NULL));
    const char *tiny = usable_tiny();
    for (size_t i = 0; i < pkb_contender_count; i++) {
        const pkb_contender *c = pkb_contenders[i];
        if (c->prepare != NULL) /* a worker in another language: test_languages.c */
            continue;
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            for (int s = 0; s < PKB_SCENARIO_COUNT; s++) {
                if ((c->scenarios & PKB_SCENARIO_BIT(s)) == 0)
                    continue;
                if (s == PKB_SPAWN_ONLY && tiny == NULL)
                    continue;
                exercise(c, (pkb_scenario)s, cat, tiny);
            }
            free(cat);
            fflush(stdout);
            exit(0);
        }
        int status;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            pk_test_fail(__FILE__, __LINE__, "contender %s failed (wait status %#x), see above",
                         c->name, (unsigned)status);
    }
    free(cat);
}

/* ---- the check itself ------------------------------------------------------------------------ */

static int claims_output(void *state, const pkb_workload *w, pkb_sample *out)
{
    (void)state;
    out->bytes = (uint64_t)w->expect_bytes * (uint64_t)w->children;
    out->lines = (uint64_t)w->expect_lines * (uint64_t)w->children;
    out->children = w->children;
    return 0;
}

static int reads_nothing(void *state, const pkb_workload *w, pkb_sample *out)
{
    (void)state;
    out->children = w->children;
    return 0;
}

static int one_failure(void *state, const pkb_workload *w, pkb_sample *out)
{
    claims_output(state, w, out);
    out->failures = 1;
    return 0;
}

static int one_unreaped(void *state, const pkb_workload *w, pkb_sample *out)
{
    claims_output(state, w, out);
    out->children--;
    return 0;
}

static int iteration_error(void *state, const pkb_workload *w, pkb_sample *out)
{
    (void)state;
    (void)w;
    snprintf(out->error, sizeof out->error, "pipe2: too many open files");
    return -EMFILE;
}

static void expect_refused(
    const pkb_contender *c, const pkb_workload *w, int want, const char *a, const char *b)
{
    char why[256] = "";
    ASSERT_EQ(pkb_check_contender(c, NULL, w, why, sizeof why), want);
    if (strstr(why, a) == NULL || strstr(why, b) == NULL)
        pk_test_fail(__FILE__, __LINE__, "reason \"%s\" lacks \"%s\" or \"%s\"", why, a, b);
}

TEST_IMPL(contenders_check_refuses_wrong_counts)
{
    /* A real contender against a workload that expects one line more (or one byte more) than
     * cat gives back: refused, and the reason names both counts. */
    const pkb_contender *base = NULL;
    for (size_t i = 0; i < pkb_contender_count; i++)
        if (pkb_contenders[i]->baseline)
            base = pkb_contenders[i];
    ASSERT(base != NULL);
    char *cat;
    ASSERT_OK(pk_resolve_program("cat", NULL, &cat, NULL));
    pkb_workload w;
    ASSERT_OK(pkb_workload_build(PKB_SPAWN_CAPTURE_SMALL, cat, NULL, &w));
    void *state = NULL;
    if (base->setup != NULL)
        ASSERT_OK(base->setup(&state, &w));
    char why[256] = "";
    w.expect_lines++;
    ASSERT_EQ(pkb_check_contender(base, state, &w, why, sizeof why), -EBADMSG);
    if (strstr(why, "read 32 bytes in 3 lines") == NULL ||
        strstr(why, "workload is 32 bytes in 4 lines") == NULL)
        pk_test_fail(__FILE__, __LINE__, "unclear reason: %s", why);
    w.expect_lines--;
    w.expect_bytes++;
    ASSERT_EQ(pkb_check_contender(base, state, &w, why, sizeof why), -EBADMSG);
    ASSERT(strstr(why, "workload is 33 bytes in 3 lines") != NULL);
    w.expect_bytes--;
    ASSERT_OK(pkb_check_contender(base, state, &w, why, sizeof why));
    if (base->teardown != NULL)
        base->teardown(state);

    /* Stand-ins for broken contenders: children not reaped, a non-zero exit, a failed iteration.
     * And the discard rule: a contender that discards its output must claim none, and one that
     * does not discard must have read it all. */
    pkb_contender fake = {.name = "fake", .description = "a stand-in", .run = one_unreaped};
    expect_refused(&fake, &w, -ECHILD, "fake: 0 of 1 children reaped", "0 did not exit 0");
    fake.run = one_failure;
    expect_refused(&fake, &w, -ECHILD, "1 of 1 children reaped", "1 did not exit 0");
    fake.run = iteration_error;
    expect_refused(&fake, &w, -EMFILE, "the iteration failed", "too many open files");
    fake.run = reads_nothing;
    expect_refused(&fake, &w, -EBADMSG, "read 0 bytes in 0 lines",
                   "the workload is 32 bytes in 3 lines");
    fake.discards_output = true;
    ASSERT_OK(pkb_check_contender(&fake, NULL, &w, why, sizeof why));
    fake.run = claims_output;
    expect_refused(&fake, &w, -EBADMSG, "the workload is 0 bytes in 0 lines",
                   "its output is discarded");
    fake.run = one_failure;
    expect_refused(&fake, &w, -ECHILD, "1 of 1 children reaped", "1 did not exit 0");
    pkb_workload_free(&w);
    free(cat);
}

/* ---- the registry -------------------------------------------------------------------------- */

TEST_IMPL(contenders_registry_well_formed)
{
    static const char *const seed[] = {"processkit",
                                       "processkit_resolved_program",
                                       "processkit_discard_stdout",
                                       "posix_spawn",
                                       "vfork_exec",
                                       "fork_exec",
                                       "libuv",
                                       "glib"};
    size_t baselines = 0, found = 0;
    for (size_t i = 0; i < pkb_contender_count; i++) {
        const pkb_contender *c = pkb_contenders[i];
        ASSERT(c->name != NULL && c->name[0] != '\0');
        if (strspn(c->name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(c->name))
            pk_test_fail(__FILE__, __LINE__, "name \"%s\" is not [a-z0-9_]+", c->name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(pkb_contenders[j]->name, c->name) == 0)
                pk_test_fail(__FILE__, __LINE__, "name \"%s\" registered twice", c->name);
        if (c->description == NULL || c->description[0] == '\0' ||
            strchr(c->description, '\n') != NULL)
            pk_test_fail(__FILE__, __LINE__, "%s: the description must be one line", c->name);
        ASSERT(c->run != NULL);
        ASSERT_NE(c->scenarios, 0);
        ASSERT_EQ(c->scenarios & ~((1u << PKB_SCENARIO_COUNT) - 1), 0);
        baselines += c->baseline;
        /* The seed's contenders, in the seed's report order. */
        if (found < sizeof seed / sizeof seed[0] && strcmp(c->name, seed[found]) == 0)
            found++;
    }
    ASSERT_EQ(baselines, 1);
    for (size_t i = 0; i < pkb_contender_count; i++)
        if (pkb_contenders[i]->baseline)
            ASSERT_STR_EQ(pkb_contenders[i]->name, "posix_spawn");
    if (found != sizeof seed / sizeof seed[0])
        pk_test_fail(__FILE__, __LINE__, "\"%s\" is missing or out of report order", seed[found]);
}
