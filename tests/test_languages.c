/*
 * The contenders in other languages (contenders/README.md, "Contenders in other languages"):
 * each registry worker, through the same adapter the scenarios suite uses, in every scenario —
 * started, set up, the one-iteration check every contender passes before it is timed (exact
 * bytes, lines and children), then one batch of three iterations — reporting its own timing and
 * CPU, the fan-out's peaks, and a runtime of its language, leaving no child behind. A worker
 * whose toolchain is not installed skips, naming the Debian package (with CI=true the runner
 * then checks that the package is indeed absent).
 *
 * A worker that runs the fan-out at scale (remote.h's PKB_REMOTE_AT_SCALE) does it once at a tiny
 * N, started with a soft RLIMIT_NOFILE below what N children in flight hold: it passes only if it
 * raised the limit (contenders/README.md), as it must to hold 4096 children where the soft limit
 * is 1024.
 */
#define _GNU_SOURCE
#include "test.h"

#include "contenders/registry.h"
#include "suites/scenarios/scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#ifdef PK_TINY_PATH
static const char *const tiny_path = PK_TINY_PATH;
#else
static const char *const tiny_path = NULL;
#endif

static const pkb_contender *find(const char *name)
{
    for (size_t i = 0; i < pkb_contender_count; i++)
        if (strcmp(pkb_contenders[i]->name, name) == 0)
            return pkb_contenders[i];
    pk_test_fail(__FILE__, __LINE__, "no contender %s in the registry", name);
}

/* The fan-out at scale's tiny N, and the soft RLIMIT_NOFILE its worker starts with: N children
 * in flight hold two pipe ends each, more than the limit, so a worker must raise it. */
enum { SCALE_N = 40, SCALE_NOFILE = 64 };

/* Sets the soft RLIMIT_NOFILE (the worker started meanwhile inherits it); the old one in *old.
 * False when the hard limit is below it. */
static bool soft_nofile(rlim_t soft, struct rlimit *old)
{
    ASSERT_OK(getrlimit(RLIMIT_NOFILE, old));
    if (old->rlim_max < soft)
        return false;
    struct rlimit rl = {soft, old->rlim_max};
    ASSERT_OK(setrlimit(RLIMIT_NOFILE, &rl));
    return true;
}

/* One scenario: set-up, check, a batch of 3 (of 1 at scale). */
static void
scenario(const pkb_contender *c, pkb_scenario s, const char *package, const char *runtime_prefix)
{
    char *cat;
    ASSERT_OK(pk_resolve_program("cat", NULL, &cat, NULL));
    pkb_workload w;
    ASSERT_OK(pkb_workload_build(s, cat, tiny_path, &w));
    bool scale = s == PKB_FAN_OUT_SCALE, limited = false;
    struct rlimit old;
    char name[64];
    snprintf(name, sizeof name, "%s", pkb_scenario_name(s));
    if (scale) {
        w.children = SCALE_N;
        pkb_scenario_fan_out_name(w.children, name, sizeof name);
        limited = soft_nofile(SCALE_NOFILE, &old);
        if (!limited)
            printf("# %s / %s: the hard RLIMIT_NOFILE is below %d: run without the limit\n",
                   c->name, name, SCALE_NOFILE);
    }
    void *state = NULL;
    char why[400];
    int rc = pkb_contender_setup(c, &state, &w, why, sizeof why);
    if (limited) /* the worker is started: ours back */
        ASSERT_OK(setrlimit(RLIMIT_NOFILE, &old));
    if (rc == -ENOENT || rc == PK_ENOTFOUND)
        pk_test_skip_gate(package, "%s", why);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "%s / %s: %s", c->name, pkb_scenario_name(s), why);
    char runtime[128]; /* the worker's, gone with it at teardown */
    snprintf(runtime, sizeof runtime, "%s", c->runtime(state));
    if (strncmp(runtime, runtime_prefix, strlen(runtime_prefix)) != 0)
        pk_test_fail(__FILE__, __LINE__, "%s says it runs on \"%s\"", c->name, runtime);
    if (pkb_check_contender(c, state, &w, why, sizeof why) != 0)
        pk_test_fail(__FILE__, __LINE__, "%s / %s: %s", c->name, pkb_scenario_name(s), why);
    pkb_sample out;
    memset(&out, 0, sizeof out);
    uint32_t batch = scale ? 1 : 3;
    out.batch = batch;
    if (c->run(state, &w, &out) != 0)
        pk_test_fail(__FILE__, __LINE__, "%s / %s: %s", c->name, pkb_scenario_name(s), out.error);
    ASSERT(out.self_timed);
    ASSERT_EQ(out.iterations, batch);
    uint64_t children = batch * (uint64_t)w.children;
    ASSERT_EQ(out.children, children);
    ASSERT_EQ(out.failures, 0);
    ASSERT_EQ(out.bytes, w.expect_bytes * children);
    ASSERT_EQ(out.lines, w.expect_lines * children);
    /* Three starts take time, and use a process's CPU: its own at the least. */
    ASSERT_GT(out.wall_ns, 0);
    ASSERT_GT(out.self_cpu_ns + out.child_cpu_ns, 0);
    if (pkb_scenario_fans_out(s)) {
        ASSERT_GT(out.peak_rss_kib, 0);
        ASSERT_GT(out.idle_fds, 0);
        /* Every child in flight holds pipes of its own: at least one descriptor each. */
        ASSERT_GE(out.peak_fds, out.idle_fds + (uint32_t)w.children);
        /* Started under the low limit, it held more: it raised the limit. */
        if (limited)
            ASSERT_GT(out.peak_fds, SCALE_NOFILE);
    } else {
        ASSERT_EQ(out.peak_rss_kib, 0);
    }
    c->teardown(state);
    siginfo_t si = {0};
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
        pk_test_fail(__FILE__, __LINE__, "%s left a child (pid %d)", c->name, si.si_pid);
    pkb_workload_free(&w);
    free(cat);
    printf("# %s / %s: %u iteration%s in %.2f ms on %s", c->name, name, batch,
           batch == 1 ? "" : "s", (double)out.wall_ns / 1e6, runtime);
    if (pkb_scenario_fans_out(s))
        printf("; %u descriptors with every child started", out.peak_fds);
    if (limited)
        printf(", started with a soft RLIMIT_NOFILE of %d", SCALE_NOFILE);
    printf("\n");
}

static void language(const char *name, const char *package, const char *runtime_prefix)
{
    const pkb_contender *c = find(name);
    ASSERT(c->prepare != NULL && c->runtime != NULL);
    for (int s = 0; s < PKB_SCENARIO_COUNT; s++) {
        if ((c->scenarios & PKB_SCENARIO_BIT(s)) == 0)
            continue;
        if (s == PKB_SPAWN_ONLY && tiny_path == NULL) {
            printf("# spawn_only skipped: no tiny helper for this architecture\n");
            continue;
        }
        scenario(c, (pkb_scenario)s, package, runtime_prefix);
    }
    pk_cleanup();
}

TEST_IMPL(language_rust_std)
{
    language("rust_std", "package:cargo", "rustc-");
}

TEST_IMPL(language_rust_tokio)
{
    language("rust_tokio", "package:librust-tokio-dev", "rustc-");
}

TEST_IMPL(language_go_exec)
{
    language("go_exec", "package:golang-go", "go1.");
}

TEST_IMPL(language_python_subprocess)
{
    language("python_subprocess", "package:python3", "python-3.");
}

TEST_IMPL(language_python_asyncio)
{
    language("python_asyncio", "package:python3", "python-3.");
}

TEST_IMPL(language_node_child_process)
{
    language("node_child_process", "package:nodejs", "node-v");
}
