/*
 * The runner checks itself: each deliberately broken fixture must be reported as a failure with
 * the right reason, so a green run means the hygiene checks and the timeout are live.
 */
#define _GNU_SOURCE
#include "test.h"

#include <string.h>

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

#if defined(__SANITIZE_ADDRESS__)
static const bool under_asan = true;
#else
static const bool under_asan = false;
#endif

TEST_IMPL(runner_asan_catches_leak)
{
    /* The ASan run is what proves that error paths free what they took; make sure its leak
     * checker is really on. */
    if (!under_asan)
        pk_test_skip("not an AddressSanitizer build (the asan preset runs this)");
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
