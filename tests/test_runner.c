/*
 * The runner checks itself: each deliberately broken fixture must be reported as a failure with
 * the right reason, so a green run means the hygiene checks and the timeout are live.
 */
#define _GNU_SOURCE
#include "test.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void expect_failure(const char *fixture, const char *reason)
{
    const char *const argv[] = {pk_test_self(), fixture, NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .err.kind = PK_STDIO_MERGE}, &r));
    ASSERT_EXITED(r, 1);
    if (r.out.data == NULL || strstr(r.out.data, reason) == NULL || !strstr(r.out.data, "not ok"))
        pk_test_fail(__FILE__, __LINE__, "%s: expected '%s' in:\n%s", fixture, reason,
                     r.out.data ? r.out.data : "");
    ASSERT(strstr(r.out.data, "0 passed, 1 failed") != NULL);
    pk_result_release(&r);
}

TEST_IMPL(runner_flags_leaked_fd)
{
    expect_failure("fixture_leak_fd", "leaked file descriptor");
}

TEST_IMPL(runner_flags_left_child)
{
    expect_failure("fixture_leave_child", "left a running child");
    expect_failure("fixture_leave_zombie", "unreaped child (zombie");
}

TEST_IMPL(runner_enforces_timeout)
{
    expect_failure("fixture_hang", "timeout: killed after");
}

TEST_IMPL(runner_asan_catches_leak)
{
    /* The ASan run is what proves that error paths free what they took; make sure its leak
     * checker is really on. */
    if (!PK_TEST_UNDER_ASAN)
        pk_test_skip_gate("build", "not an AddressSanitizer build (the asan preset runs this)");
    expect_failure("fixture_leak_memory", "LeakSanitizer");
}

TEST_IMPL(runner_reports_unknown_test)
{
    const char *const argv[] = {pk_test_self(), "no_such_test", NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 2);
    ASSERT(strstr(r.err.data, "no test named 'no_such_test'") != NULL);
    pk_result_release(&r);
}

/* The load average file the runner reads for the "quiet" gate (NULL: /proc/loadavg). */
static const char *fixture_loadavg;

/* Runs one fixture through the outer runner with CI set to `ci` (NULL: unset). */
static void run_fixture(const char *fixture, const char *ci, pk_result *r)
{
    const char *const argv[] = {pk_test_self(), fixture, NULL};
    const char *set[] = {NULL, NULL, NULL}, *unset[] = {"CI", NULL};
    char entry[64], loadavg[600];
    size_t n = 0;
    if (ci != NULL) {
        snprintf(entry, sizeof entry, "CI=%s", ci);
        set[n++] = entry;
    }
    if (fixture_loadavg != NULL) {
        snprintf(loadavg, sizeof loadavg, "PK_TEST_LOADAVG=%s", fixture_loadavg);
        set[n++] = loadavg;
    }
    ASSERT_OK(pk_run(&(pk_command){.argv = argv,
                                   .env = {.set = n ? set : NULL, .unset = ci ? NULL : unset},
                                   .err.kind = PK_STDIO_MERGE},
                     &r[0]));
}

static void expect_skip(const char *fixture, const char *ci, const char *shown)
{
    pk_result r;
    run_fixture(fixture, ci, &r);
    if (r.outcome.code != 0 || r.out.data == NULL || strstr(r.out.data, shown) == NULL ||
        strstr(r.out.data, "0 passed, 0 failed, 1 skipped") == NULL)
        pk_test_fail(__FILE__, __LINE__,
                     "%s (CI=%s): expected a skip showing '%s', got exit %d:\n%s", fixture,
                     ci ? ci : "unset", shown, r.outcome.code, r.out.data ? r.out.data : "");
    pk_result_release(&r);
}

static void expect_refused(const char *fixture, const char *why)
{
    pk_result r;
    run_fixture(fixture, "true", &r);
    if (r.outcome.code != 1 || r.out.data == NULL || strstr(r.out.data, why) == NULL ||
        strstr(r.out.data, "0 passed, 1 failed, 0 skipped") == NULL)
        pk_test_fail(__FILE__, __LINE__,
                     "%s (CI=true): expected a failure saying '%s', got exit "
                     "%d:\n%s",
                     fixture, why, r.outcome.code, r.out.data ? r.out.data : "");
    pk_result_release(&r);
}

TEST_IMPL(runner_ci_refuses_skips_the_machine_could_run)
{
    /* Outside CI every skip is a skip, shown with its gate. */
    expect_skip("fixture_skip_root", NULL, "# SKIP [root] fixture: pretends to need root");
    expect_skip("fixture_skip_unnamed", NULL, "# SKIP [no gate] fixture: names no gate");
    expect_skip("fixture_skip_unknown", "false", "# SKIP [moon-phase]");
    /* With CI=true, a skip stands only when the runner's own probe agrees the machine lacks the
     * thing (or the gate is the build's). */
    expect_skip("fixture_skip_absent", "true", "# SKIP [package:pk-no-such-package]");
    expect_skip("fixture_skip_build", "true", "# SKIP [build]");
    if (geteuid() == 0)
        expect_refused("fixture_skip_root", "CI=true: skipped, but this machine has what its gate "
                                            "names (gate 'root')");
    else
        expect_skip("fixture_skip_root", "true", "# SKIP [root]");
    /* cmake built this binary: dpkg has it. */
    expect_refused("fixture_skip_package", "has what its gate names (gate 'package:cmake')");
    if (pk_host_containment() == PK_CONTAIN_CGROUP)
        expect_refused("fixture_skip_cgroup", "has what its gate names (gate 'cgroup')");
    else
        expect_skip("fixture_skip_cgroup", "true", "# SKIP [cgroup]");
    expect_refused("fixture_skip_unnamed", "skipped without naming its gate");
    expect_refused("fixture_skip_unknown", "a gate the runner does not know (gate 'moon-phase')");

    /* "quiet": the runner reads the processes running now (loadavg's 4th field) against the CPUs.
     */
    char loadavg[512];
    snprintf(loadavg, sizeof loadavg, "%s/loadavg", pk_test_tmpdir());
    fixture_loadavg = loadavg;
    FILE *f = fopen(loadavg, "w");
    ASSERT(f != NULL);
    fprintf(f, "0.10 1.00 1.00 %ld/200 12345\n", sysconf(_SC_NPROCESSORS_ONLN) + 1);
    ASSERT_EQ(fclose(f), 0);
    expect_skip("fixture_skip_quiet", "true", "# SKIP [quiet] fixture: pretends the machine");
    f = fopen(loadavg, "w");
    ASSERT(f != NULL);
    fprintf(f, "9.00 9.00 9.00 %ld/200 12345\n", sysconf(_SC_NPROCESSORS_ONLN));
    ASSERT_EQ(fclose(f), 0);
    expect_refused("fixture_skip_quiet", "has what its gate names (gate 'quiet')");
    fixture_loadavg = NULL;
}

/* Each test starts with default signal dispositions and nothing blocked, even when the runner
 * was started with signals ignored (as `pk_tests &` in a script does to SIGINT and SIGQUIT). */
TEST_IMPL(runner_tests_start_with_default_signals)
{
    const char *const argv[] = {"sh", "-c",
                                "trap '' INT QUIT TERM HUP; exec \"$0\" fixture_default_signals",
                                pk_test_self(), NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .err.kind = PK_STDIO_MERGE}, &r));
    if (r.outcome.code != 0 || r.out.data == NULL ||
        strstr(r.out.data, "1 passed, 0 failed, 0 skipped") == NULL)
        pk_test_fail(__FILE__, __LINE__, "a runner started with signals ignored: exit %d:\n%s",
                     r.outcome.code, r.out.data ? r.out.data : "");
    pk_result_release(&r);
}
