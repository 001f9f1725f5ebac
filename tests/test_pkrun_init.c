/*
 * pkrun as the first process of a new PID namespace, as a container's entrypoint runs it
 * (`unshare --pid --fork [--mount-proc] pkrun ...`): the limit's signal arrives (with and without
 * the namespace's own /proc, whose absence once hid every member of the cgroup from the signal);
 * a signal sent to pkrun from outside reaches the command; the orphans the kernel hands PID 1 are
 * reaped, as tini or dumb-init would.
 */
#define _GNU_SOURCE
#include "pkrun_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_PKRUN_PATH
#error "tests/CMakeLists.txt passes the pkrun binary's path"
#endif

/* unshare's options for a new PID namespace (root needs no user namespace; anyone else maps
 * themselves to root in one), or a skip when there is none to be had. */
static int unshare_argv(const char **argv, bool mount_proc)
{
    int n = 0;
    argv[n++] = "unshare";
    argv[n++] = "--pid";
    argv[n++] = "--fork";
    if (mount_proc)
        argv[n++] = "--mount-proc";
    if (geteuid() != 0)
        argv[n++] = "--map-root-user";
    argv[n] = NULL;
    const char *probe[8];
    memcpy(probe, argv, sizeof(char *) * (size_t)n);
    probe[n] = "true";
    probe[n + 1] = NULL;
    pk_result r;
    if (pk_run(&(pk_command){.argv = probe, .err.kind = PK_STDIO_NULL}, &r) != 0 ||
        r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0) {
        pk_result_release(&r);
        pk_test_skip("unshare --pid --fork%s is unavailable here",
                     mount_proc ? " --mount-proc" : "");
    }
    pk_result_release(&r);
    return n;
}

static const char *const containments[] = {"--containment=cgroup", "--containment=pgroup"};

static bool usable(const char *containment)
{
    return strcmp(containment, "--containment=cgroup") != 0 ||
           pk_host_containment() == PK_CONTAIN_CGROUP;
}

/* The limit: `pkrun .1 sleep 10` as PID 1 exits 124 at once (it used to wait out a 2 s grace and
 * exit 137 without the namespace's own /proc: the SIGTERM never reached the leaf's members). */
TEST_IMPL(pkrun_as_pid1_limit)
{
    for (int mp = 0; mp < 2; mp++) {
        for (int c = 0; c < 2; c++) {
            if (!usable(containments[c]))
                continue;
            const char *argv[16];
            int n = unshare_argv(argv, mp == 1);
            const char *const rest[] = {PK_PKRUN_PATH, "-k",    "5",  containments[c],
                                        ".1",          "sleep", "10", NULL};
            memcpy(argv + n, rest, sizeof rest);
            int64_t t0 = pk_test_now_ms();
            pk_result r;
            ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 30000}, &r));
            int64_t ms = pk_test_now_ms() - t0;
            if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 124 || ms > 4000)
                pk_test_fail(__FILE__, __LINE__, "%s%s: %s %d after %lld ms: %s",
                             mp ? "--mount-proc " : "", containments[c],
                             pk_outcome_kind_name(r.outcome.kind), r.outcome.code, (long long)ms,
                             r.err.data ? r.err.data : "");
            pk_result_release(&r);
        }
    }
}

/* The pid of pkrun: unshare's only child. */
static int child_of(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
    for (int i = 0; i < 500; i++, usleep(10000)) {
        FILE *f = fopen(path, "r");
        int child = 0;
        if (f != NULL && fscanf(f, "%d", &child) != 1)
            child = 0;
        if (f != NULL)
            fclose(f);
        if (child > 0)
            return child;
    }
    pk_test_fail(__FILE__, __LINE__, "unshare %d has no child", pid);
}

/* A signal to pkrun from outside the namespace (what `docker stop` sends the entrypoint) reaches
 * the command, whose trap answers; pkrun exits with the command's status. */
TEST_IMPL(pkrun_as_pid1_forwards_signals)
{
    const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
    for (int mp = 0; mp < 2; mp++) {
        for (size_t s = 0; s < 3; s++) {
            const char *argv[16];
            int n = unshare_argv(argv, mp == 1);
            const char *const rest[] = {
                PK_PKRUN_PATH,
                "30",
                "sh",
                "-c",
                "trap 'echo got it; exit 3' TERM INT HUP; echo ready; while :; do sleep 0.05; done",
                NULL};
            memcpy(argv + n, rest, sizeof rest);
            pk_process *p;
            ASSERT_OK(pk_spawn(&(pk_command){.argv = argv}, &p, NULL));
            pk_line line;
            ASSERT_OK(pk_process_read_line(p, &line));
            ASSERT_STR_EQ(line.data, "ready");
            ASSERT_EQ(kill(child_of(pk_process_pid(p)), sigs[s]), 0);
            pk_result r;
            ASSERT_OK(pk_process_wait(p, &r));
            pk_process_free(p);
            if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 3 ||
                strcmp(r.out.data ? r.out.data : "", "ready\ngot it\n") != 0)
                pk_test_fail(__FILE__, __LINE__, "%ssignal %d: %s %d, printed '%s'",
                             mp ? "--mount-proc, " : "", sigs[s],
                             pk_outcome_kind_name(r.outcome.kind), r.outcome.code,
                             r.out.data ? r.out.data : "");
            pk_result_release(&r);
        }
    }
}

/* Orphans: processes whose parent exited are handed to PID 1, pkrun, which reaps them when they
 * exit; none stays a zombie while the command runs on (seen in the namespace's own /proc). */
TEST_IMPL(pkrun_as_pid1_reaps_orphans)
{
    for (int c = 0; c < 2; c++) {
        if (!usable(containments[c]))
            continue;
        const char *argv[16];
        int n = unshare_argv(argv, true);
        const char *const rest[] = {
            PK_PKRUN_PATH,
            containments[c],
            "30",
            "sh",
            "-c",
            "(sleep 0.1 &); (sleep 0.1 &); (sh -c 'sleep 0.2 & exit' &); sleep 1; "
            "for f in /proc/[0-9]*/stat; do read -r pid comm state rest < $f; "
            "[ \"$state\" = Z ] && echo \"zombie $pid $comm\"; done; echo checked",
            NULL};
        memcpy(argv + n, rest, sizeof rest);
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 30000}, &r));
        if (r.outcome.kind != PK_OUTCOME_EXITED || r.outcome.code != 0 ||
            strcmp(r.out.data ? r.out.data : "", "checked\n") != 0)
            pk_test_fail(__FILE__, __LINE__, "%s: %s %d, printed:\n%s", containments[c],
                         pk_outcome_kind_name(r.outcome.kind), r.outcome.code,
                         r.out.data ? r.out.data : "");
        pk_result_release(&r);
    }
}
