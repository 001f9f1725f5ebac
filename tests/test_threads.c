/*
 * Concurrency and host integration: many threads spawning at once, descriptors that never leak
 * across threads' children, a host with its own SIGCHLD reaper, and the mechanism probe.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct worker {
    int spawns;
    const char *const *argv;
    const char *expect; /* NULL: only the exit status is checked */
    int failures;
    char detail[256];
};

static void *spawn_loop(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < w->spawns; i++) {
        pk_result r;
        int rc = pk_run(&(pk_command){.argv = w->argv}, &r);
        bool ok = rc == 0 && r.outcome.kind == PK_OUTCOME_EXITED && r.outcome.code == 0;
        if (ok && w->expect != NULL)
            ok = r.out.data != NULL && strcmp(r.out.data, w->expect) == 0;
        if (!ok && w->failures++ == 0)
            snprintf(w->detail, sizeof w->detail, "rc=%s kind=%s out=%.100s", pk_errname(rc),
                     pk_outcome_kind_name(r.outcome.kind), r.out.data ? r.out.data : "");
        pk_result_release(&r);
    }
    return NULL;
}

static void run_workers(int nthreads, int spawns, const char *const *argv, const char *expect)
{
    pthread_t th[16];
    struct worker w[16];
    for (int i = 0; i < nthreads; i++) {
        w[i] = (struct worker){.spawns = spawns, .argv = argv, .expect = expect};
        ASSERT_EQ(pthread_create(&th[i], NULL, spawn_loop, &w[i]), 0);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < nthreads; i++)
        if (w[i].failures)
            pk_test_fail(__FILE__, __LINE__, "thread %d: %d failures, first: %s", i, w[i].failures,
                         w[i].detail);
}

TEST_IMPL(threads_16x200_spawns)
{
    /* 3,200 spawns from 16 threads; the runner's hygiene check then proves no descriptor leaked
     * and no zombie is left. */
    const char *const argv[] = {"true", NULL};
    run_workers(16, 200, argv, NULL);
}

TEST_IMPL(threads_no_fd_crosses_to_children)
{
    /* While 16 threads create pipes and spawn, every child must still see only 0, 1, 2. */
    run_workers(16, 12, HELPER("list-fds"), "0\n1\n2\n");
}

static pid_t own_child;
static volatile sig_atomic_t own_reaped;

static void reap_own(int sig)
{
    (void)sig;
    int saved = errno;
    /* A careful host reaps only the pids it started. */
    if (own_child > 0 && waitpid(own_child, NULL, WNOHANG) == own_child)
        own_reaped = 1;
    errno = saved;
}

TEST_IMPL(host_sigchld_handler_coexists)
{
    struct sigaction sa = {.sa_handler = reap_own, .sa_flags = SA_RESTART};
    sigaction(SIGCHLD, &sa, NULL);
    own_child = fork();
    if (own_child == 0) {
        usleep(200 * 1000);
        _exit(0);
    }
    ASSERT_GT(own_child, 0);
    /* Our runs keep working while the host's handler runs for every SIGCHLD, ours included. */
    for (int i = 0; i < 50; i++) {
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "7")}, &r));
        ASSERT_EXITED(r, 7);
        pk_result_release(&r);
    }
    for (int i = 0; i < 100 && !own_reaped; i++)
        usleep(10 * 1000);
    ASSERT(own_reaped); /* and the host still reaped its own child itself */
}

TEST_IMPL(mechanism_probe_picks_clone3)
{
    /* This project's machines run kernel >= 5.5 on x86_64: clone3 with CLONE_CLEAR_SIGHAND. */
    ASSERT_STR_EQ(pk_mechanism_name(pk_spawn_mechanism()), "clone3");
    ASSERT(pk_spawn_clears_sighand());
}

/* The same core behaviours under every mechanism of the fallback chain (forced by the
 * environment variable the probe reads, in this fresh test process). */
static void core_behaviours(const char *mech)
{
    setenv("PK_SPAWN_MECHANISM", mech, 1);
    ASSERT_STR_EQ(pk_mechanism_name(pk_spawn_mechanism()), mech);

    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "42")}, &r));
    ASSERT_EXITED(r, 42);
    pk_result_release(&r);

    ASSERT_OK(pk_run(
        &(pk_command){.program = "cat", .in = {.kind = PK_STDIO_BYTES, .data = "abc\n", .len = 4}},
        &r));
    ASSERT_STR_EQ(r.out.data, "abc\n");
    pk_result_release(&r);

    ASSERT_OK(
        pk_run(&(pk_command){.argv = HELPER("interleave", "2"), .err.kind = PK_STDIO_MERGE}, &r));
    ASSERT_STR_EQ(r.out.data, "out 0\nerr 0\nout 1\nerr 1\n");
    pk_result_release(&r);

    ASSERT_EQ(pk_run(&(pk_command){.argv = HELPER("cwd"), .cwd = "/nonexistent"}, &r), -ENOENT);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_CHDIR);
    pk_result_release(&r);

    ASSERT_EQ(pk_run(&(pk_command){.program = "/nonexistent/x"}, &r), -ENOENT);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_EXEC);
    pk_result_release(&r);

    int leaked = dup(0); /* no O_CLOEXEC */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("list-fds")}, &r));
    ASSERT_STR_EQ(r.out.data, "0\n1\n2\n");
    pk_result_release(&r);
    close(leaked);

    /* A handler installed by the parent must not survive into the child. */
    struct sigaction sa = {.sa_handler = reap_own};
    sigaction(SIGUSR1, &sa, NULL);
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("signal", "10")}, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
    ASSERT_EQ(r.outcome.signo, SIGUSR1);
    pk_result_release(&r);

    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "5000")}, &p, NULL));
    ASSERT_OK(pk_process_signal(p, SIGKILL));
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EQ(r.outcome.signo, SIGKILL);
    pk_result_release(&r);
    pk_process_free(p);
}

TEST_IMPL(mechanism_clone)
{
    core_behaviours("clone");
}

TEST_IMPL(mechanism_vfork)
{
    core_behaviours("vfork");
}

TEST_IMPL(mechanism_posix_spawn)
{
    core_behaviours("posix_spawn");
}

TEST_IMPL(mechanism_clone3_default)
{
    core_behaviours("clone3");
}
