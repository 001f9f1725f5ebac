/*
 * Outcomes and spawn failures: exit codes are data, signals are typed, and every way a start can
 * fail names its stage and errno and leaves no child behind.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static volatile sig_atomic_t sigchld_count;

static void on_sigchld(int sig)
{
    (void)sig;
    sigchld_count++;
}

TEST_IMPL(exit_codes)
{
    static const char *const codes[] = {"0", "1", "255"};
    for (int i = 0; i < 3; i++) {
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", codes[i])}, &r));
        ASSERT_EXITED(r, atoi(codes[i]));
        ASSERT_GT(r.outcome.pid, 0);
        ASSERT_GT(r.outcome.wall_ns, 0);
        pk_result_release(&r);
    }
}

TEST_IMPL(signaled)
{
    static const int sigs[] = {SIGTERM, SIGKILL, SIGSEGV};
    for (int i = 0; i < 3; i++) {
        char num[8];
        snprintf(num, sizeof num, "%d", sigs[i]);
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("signal", num)}, &r));
        ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
        ASSERT_EQ(r.outcome.signo, sigs[i]);
        ASSERT_EQ(r.outcome.code, 0); /* never 128+sig folded into a code */
        pk_result_release(&r);
    }
}

TEST_IMPL(not_found_creates_no_child)
{
    struct sigaction sa = {.sa_handler = on_sigchld};
    sigaction(SIGCHLD, &sa, NULL);
    pk_result r;
    const char *const set[] = {"PATH=/nonexistent-a:/nonexistent-b", NULL};
    int rc = pk_run(&(pk_command){.program = "pk-no-such-program", .env.set = set}, &r);
    ASSERT_EQ(rc, PK_ENOTFOUND);
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SPAWN_FAILED);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_RESOLVE);
    ASSERT_EQ(r.outcome.error, PK_ENOTFOUND);
    ASSERT_EQ(r.outcome.pid, 0);
    ASSERT_STR_EQ(r.searched, "/nonexistent-a:/nonexistent-b");
    pk_result_release(&r);
    /* No child was ever created: no SIGCHLD arrived. The control run below proves the counter
     * does count a real child. */
    ASSERT_EQ(sigchld_count, 0);
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0")}, &r));
    pk_result_release(&r);
    ASSERT_GE(sigchld_count, 1);
    ASSERT_STR_EQ(pk_errname(PK_ENOTFOUND), "PK_ENOTFOUND");
}

TEST_IMPL(not_executable_is_eacces_at_exec)
{
    char path[512];
    snprintf(path, sizeof path, "%s/plain-file", pk_test_tmpdir());
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "#!/bin/sh\n", 10), 10);
    close(fd);
    pk_result r;
    ASSERT_EQ(pk_run(&(pk_command){.program = path}, &r), -EACCES);
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SPAWN_FAILED);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_EXEC);
    ASSERT_EQ(r.outcome.error, -EACCES);
    ASSERT_EQ(r.outcome.pid, 0);
    pk_result_release(&r);
}

TEST_IMPL(missing_absolute_path_is_enoent_at_exec)
{
    pk_result r;
    ASSERT_EQ(pk_run(&(pk_command){.program = "/nonexistent/program"}, &r), -ENOENT);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_EXEC);
    pk_result_release(&r);
}

TEST_IMPL(bad_cwd_is_enoent_at_chdir)
{
    pk_result r;
    int rc = pk_run(&(pk_command){.argv = HELPER("cwd"), .cwd = "/nonexistent-dir"}, &r);
    ASSERT_EQ(rc, -ENOENT);
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SPAWN_FAILED);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_CHDIR);
    ASSERT_EQ(r.outcome.error, -ENOENT);
    pk_result_release(&r);

    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("cwd"), .cwd = pk_test_tmpdir()}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_STR_EQ(r.out.data, pk_test_tmpdir());
    pk_result_release(&r);
}

TEST_IMPL(bad_input)
{
    pk_result r;
    ASSERT_EQ(pk_run(NULL, &r), -EINVAL);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_VALIDATE);
    pk_result_release(&r);
    ASSERT_EQ(pk_run(&(pk_command){0}, &r), -EINVAL);
    pk_result_release(&r);
    ASSERT_EQ(pk_run(&(pk_command){.program = ""}, &r), -EINVAL);
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SPAWN_FAILED);
    pk_result_release(&r);
    ASSERT_EQ(pk_run(&(pk_command){.program = "true"}, NULL), -EINVAL);

    const char *const bad_set[] = {"NO_EQUALS_SIGN", NULL};
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .env.set = bad_set}, &r), PK_EBADENV);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_VALIDATE);
    pk_result_release(&r);
    const char *const bad_unset[] = {"A=B", NULL};
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .env.unset = bad_unset}, &r), PK_EBADENV);
    pk_result_release(&r);

    /* Stream kinds that make no sense for the stream. */
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .in.kind = PK_STDIO_CAPTURE}, &r), -EINVAL);
    pk_result_release(&r);
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .out.kind = PK_STDIO_MERGE}, &r), -EINVAL);
    pk_result_release(&r);
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .out.kind = PK_STDIO_FILE}, &r), -EINVAL);
    pk_result_release(&r);

    /* Limits and signals out of range; the last real-time signal (64) is a valid pdeathsig. */
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .timeout_ms = -1}, &r), -EINVAL);
    pk_result_release(&r);
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .pdeathsig = 65}, &r), -EINVAL);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_VALIDATE);
    pk_result_release(&r);
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .pdeathsig = 64}, &r), 0);
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_EXITED);
    pk_result_release(&r);
    ASSERT_EQ(pk_run(&(pk_command){.program = "true", .containment = PK_CONTAIN_JOB + 1}, &r),
              -EINVAL);
    pk_result_release(&r);

    /* One argument longer than MAX_ARG_STRLEN (32 pages): execve says E2BIG. */
    size_t big = 200 * 1024;
    char *arg = malloc(big + 1);
    memset(arg, 'x', big);
    arg[big] = '\0';
    const char *const argv[] = {"true", arg, NULL};
    ASSERT_EQ(pk_run(&(pk_command){.argv = argv}, &r), -E2BIG);
    ASSERT_EQ(r.outcome.stage, PK_STAGE_EXEC);
    ASSERT_EQ(r.outcome.error, -E2BIG);
    pk_result_release(&r);
    free(arg);
}

TEST_IMPL(error_names)
{
    ASSERT_STR_EQ(pk_errname(-ENOENT), "ENOENT");
    ASSERT_STR_EQ(pk_errname(PK_EBADENV), "PK_EBADENV");
    ASSERT_STR_EQ(pk_errname(0), "OK");
    ASSERT_STR_EQ(pk_strerror(-ENOENT), "No such file or directory");
    ASSERT_STR_EQ(pk_strerror(PK_ENOTFOUND), "program not found in any PATH directory");
    ASSERT_STR_EQ(pk_stage_name(PK_STAGE_EXEC), "exec");
    ASSERT_STR_EQ(pk_stage_name(PK_STAGE_CHDIR), "chdir");
    ASSERT_STR_EQ(pk_outcome_kind_name(PK_OUTCOME_SIGNALED), "signaled");
    ASSERT_STR_EQ(pk_errname(-99999), "E99999");
}

TEST_IMPL(spawn_signal_wait)
{
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "10000")}, &p, NULL));
    ASSERT_GT(pk_process_pid(p), 0);
    ASSERT_GE(pk_process_pidfd(p), 0);
    ASSERT_OK(pk_process_signal(p, SIGTERM));
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
    ASSERT_EQ(r.outcome.signo, SIGTERM);
    pk_result_release(&r);
    /* After the reap the pid may be recycled: the handle refuses to signal anything. */
    ASSERT_EQ(pk_process_signal(p, SIGTERM), -ESRCH);
    pk_process_free(p);
}

TEST_IMPL(free_kills_and_reaps)
{
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "10000")}, &p, NULL));
    pk_process_free(p); /* the hygiene check fails this test if a zombie or child remains */
    pk_process_free(NULL);
}

TEST_IMPL(spawn_failure_typed)
{
    pk_process *p = (pk_process *)1;
    pk_result f;
    ASSERT_EQ(pk_spawn(&(pk_command){.program = "/nonexistent/x"}, &p, &f), -ENOENT);
    ASSERT(p == NULL);
    ASSERT_EQ(f.outcome.kind, PK_OUTCOME_SPAWN_FAILED);
    ASSERT_EQ(f.outcome.stage, PK_STAGE_EXEC);
    pk_result_release(&f);
}

TEST_IMPL(child_cpu_time_reported)
{
    /* A child that burns CPU shows it in the outcome's rusage-derived times. */
    const char *const argv[] = {"sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
                                NULL};
    pk_result r;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_GT(r.outcome.user_us + r.outcome.sys_us, 1000);
    pk_result_release(&r);
}
