/*
 * A host that ignores SIGCHLD (SIG_IGN, or a handler with SA_NOCLDWAIT) has its children reaped
 * by the kernel as they exit, so waitid finds nothing. The library still reports the real exit
 * status and signal (wait.linux.c reads it from the pidfd), through every way of waiting: pk_run
 * with and without pipes, pk_spawn + pk_process_wait, and the event loop. These tests need the
 * kernel to record exits on the pidfd (PIDFD_INFO_EXIT, Linux 6.15) and skip, saying so, without
 * it. A stopped tree acts on a limit's signal: SIGCONT follows it.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct probe_info {
    uint64_t mask, cgroupid;
    uint32_t ids[11];
    int32_t exit_code;
};

/* Whether the kernel keeps a reaped child's exit status on its pidfd (independent of the
 * library: a fork, a pidfd, waitpid, then the ioctl). */
static bool kernel_records_exit(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(7);
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    waitpid(pid, NULL, 0);
    if (fd < 0)
        return false;
    struct probe_info info = {.mask = 1ULL << 3};
    bool ok = ioctl(fd, _IOWR(0xFF, 11, struct probe_info), &info) == 0 && (info.mask & (1 << 3)) &&
              info.exit_code == 7 << 8;
    close(fd);
    return ok;
}

static void ignore_sigchld(bool nocldwait)
{
    if (!kernel_records_exit())
        pk_test_skip("this kernel does not keep a reaped child's status on its pidfd "
                     "(PIDFD_INFO_EXIT, Linux 6.15); the library reports -ECHILD there");
    struct sigaction sa = {.sa_handler = SIG_IGN};
    if (nocldwait) {
        sa.sa_handler = SIG_DFL;
        sa.sa_flags = SA_NOCLDWAIT;
    }
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGCHLD, &sa, NULL), 0);
}

/* The control: with SIGCHLD ignored, the kernel really does reap a child by itself. */
static void assert_kernel_autoreaps(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    ASSERT_EQ(waitpid(pid, NULL, 0), -1);
    ASSERT_EQ(errno, ECHILD);
}

static void check_every_wait(void)
{
    assert_kernel_autoreaps();
    pk_result r;
    /* pk_run, no pipes: the driver blocks in waitid, which fails once the kernel reaped. */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "3"),
                                   .out.kind = PK_STDIO_NULL,
                                   .err.kind = PK_STDIO_NULL},
                     &r));
    ASSERT_EXITED(r, 3);
    pk_result_release(&r);
    /* pk_run with pipes and a signal death. */
    ASSERT_OK(pk_run(
        &(pk_command){.argv = (const char *const[]){"sh", "-c", "echo hi; kill -TERM $$", NULL}},
        &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
    ASSERT_EQ(r.outcome.signo, SIGTERM);
    ASSERT_STR_EQ(r.out.data, "hi\n");
    pk_result_release(&r);
    /* pk_spawn + pk_process_wait, uncontained. */
    pk_process *p;
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("exit", "42"), .containment = PK_CONTAIN_NONE},
                       &p, NULL));
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EXITED(r, 42);
    pk_result_release(&r);
    pk_process_free(p);
}

static int loop_code = -1;

static void on_done(void *user, int rc, pk_result *res)
{
    (void)user;
    if (rc == 0 && res->outcome.kind == PK_OUTCOME_EXITED)
        loop_code = res->outcome.code;
    pk_result_release(res);
}

TEST_IMPL(sigchld_ignored_host_gets_real_status)
{
    ignore_sigchld(false);
    check_every_wait();
    /* The event loop. */
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    ASSERT_OK(pk_loop_start(loop, &(pk_command){.argv = HELPER("exit", "5")}, on_done, NULL, NULL));
    ASSERT_OK(pk_loop_run(loop));
    pk_loop_free(loop);
    ASSERT_EQ(loop_code, 5);
}

TEST_IMPL(sigchld_nocldwait_host_gets_real_status)
{
    ignore_sigchld(true);
    check_every_wait();
}

/* A stopped child acts on a limit's SIGTERM because SIGCONT follows it: the run ends at the
 * limit, not after the grace with SIGKILL. The same for pk_group_shutdown. */
TEST_IMPL(stopped_child_gets_sigcont_after_limit_signal)
{
    pk_result r;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(pk_run(&(pk_command){.argv = (const char *const[]){"sh", "-c", "kill -STOP $$", NULL},
                                   .timeout_ms = 200,
                                   .grace_ms = 5000},
                     &r));
    int64_t ms = pk_test_now_ms() - t0;
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_TIMED_OUT);
    ASSERT_EQ(r.outcome.signo, SIGTERM);
    ASSERT_LT(ms, 3000);
    pk_result_release(&r);

    pk_group *g;
    ASSERT_OK(pk_group_new(NULL, &g));
    pk_process *p;
    ASSERT_OK(pk_spawn(
        &(pk_command){.argv = (const char *const[]){"sh", "-c", "kill -STOP $$", NULL}, .group = g},
        &p, NULL));
    /* Stopped once /proc says so. */
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pk_process_pid(p));
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(path, "re");
        ASSERT(f != NULL);
        ASSERT(fgets(stat, sizeof stat, f) != NULL);
        fclose(f);
        if (strstr(strrchr(stat, ')'), ") T ") != NULL)
            break;
        usleep(10000);
    }
    ASSERT(strstr(strrchr(stat, ')'), ") T ") != NULL);
    t0 = pk_test_now_ms();
    ASSERT_OK(pk_group_shutdown(g, 5000, true));
    ASSERT_LT(pk_test_now_ms() - t0, 3000);
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_SIGNALED);
    ASSERT_EQ(r.outcome.signo, SIGTERM);
    pk_result_release(&r);
    pk_process_free(p);
    pk_group_free(g);
}
