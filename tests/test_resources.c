/*
 * Containment when the caller runs out of descriptors. A run that cannot set up its cgroup
 * because the process hit RLIMIT_NOFILE must say so (stage contain, -EMFILE) rather than fall
 * back to a process group, and the failure must not be remembered: once descriptors are free
 * again, runs get their cgroup.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

TEST_IMPL(containment_emfile_reported_then_retried)
{
    /* The test's own view of the host, so that the library's probe first runs under the limit. */
    const char *dir = pk_test_cgroup_dir();
    if (dir == NULL || access(dir, W_OK | X_OK) != 0)
        pk_test_skip_gate("cgroup", "no writable cgroup v2 directory for this process");
    /* The spawn mechanism's own probe needs descriptors too; it is not what is tested here. */
    (void)pk_spawn_mechanism();
    struct rlimit old;
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
    /* The lowest free descriptor becomes the limit: no new descriptor can be made. */
    int lowest = fcntl(0, F_DUPFD, 0);
    ASSERT_GE(lowest, 0);
    close(lowest);
    struct rlimit tight = {(rlim_t)lowest, old.rlim_max};
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);

    const char *const argv[] = {"/bin/true", NULL};
    pk_command cmd = {.argv = argv,
                      .in.kind = PK_STDIO_INHERIT,
                      .out.kind = PK_STDIO_INHERIT,
                      .err.kind = PK_STDIO_INHERIT};
    pk_result r;
    int rc = pk_run(&cmd, &r);
    ASSERT_EQ(rc, -EMFILE);
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SPAWN_FAILED);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_CONTAIN);
    pk_result_release(&r);

    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
    ASSERT_EQ(pk_host_containment(), PK_CONTAIN_CGROUP);
    ASSERT_OK(pk_run(&cmd, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_EQ(r.containment, PK_CONTAIN_CGROUP);
    pk_result_release(&r);
}
