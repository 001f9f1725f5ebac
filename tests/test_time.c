/*
 * Time limits and cancellation (processkit.md §5, behaviours 5–7): which limit fired is typed,
 * output read so far is kept, the grace escalates to SIGKILL, and a cancel is never a timeout.
 * Lower bounds on time say a limit did not fire early (a loaded machine only makes things later);
 * upper bounds only guard against a hang, far above what any load makes of these runs and below
 * the test's own timeout, so a failure says what went wrong instead of just timing out. Whether
 * a grace was cut short is shown by a grace far longer than that bound. A limit that must fire
 * only after the child has printed (or installed its handler) is 1 s or more: under ASan on a
 * loaded machine a helper's start alone took over 300 ms.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t sigchld_count;

static void on_sigchld(int sig)
{
    (void)sig;
    sigchld_count++;
}

TEST_IMPL(timeout_grace_escalates_to_kill)
{
    /* Behaviour 5: a child ignoring TERM is KILLed `grace` after the timeout. */
    pk_result r;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("ignore-term", "100000"),
                                   .timeout_ms = 1000,
                                   .grace_ms = 1000},
                     &r));
    int64_t took = pk_test_now_ms() - t0;
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_TIMED_OUT);
    ASSERT_EQ(r.outcome.signo, SIGKILL);
    ASSERT_STR_EQ(r.out.data, "ready\n"); /* output read so far is kept */
    ASSERT_GE(took, 2000);
    ASSERT_LT(took, 8000); /* the child sleeps 100 s: without the escalation this would hang */
    pk_result_release(&r);
}

TEST_IMPL(timeout_child_exiting_on_term_ends_grace)
{
    pk_result r;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(pk_run(
        &(pk_command){.argv = HELPER("term-exits", "3"), .timeout_ms = 1000, .grace_ms = 60000},
        &r));
    int64_t took = pk_test_now_ms() - t0;
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_TIMED_OUT);
    ASSERT_EQ(r.outcome.code, 3); /* how it actually ended: its own exit on TERM */
    ASSERT_EQ(r.outcome.signo, 0);
    ASSERT_LT(took, 8000); /* far below the 60 s grace */
    pk_result_release(&r);
}

TEST_IMPL(timeout_without_grace_kills_at_once)
{
    pk_result r;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(
        pk_run(&(pk_command){.argv = HELPER("say-then-sleep", "100000"), .timeout_ms = 1000}, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_TIMED_OUT);
    ASSERT_EQ(r.outcome.signo, SIGKILL);
    ASSERT_STR_EQ(r.out.data, "partial output\n");
    ASSERT_GE(pk_test_now_ms() - t0, 1000);
    ASSERT_LT(pk_test_now_ms() - t0, 8000); /* a hang guard: the child sleeps 100 s */
    pk_result_release(&r);
    /* A run that finishes in time is not touched. */
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "4"), .timeout_ms = 5000}, &r));
    ASSERT_EXITED(r, 4);
    pk_result_release(&r);
}

TEST_IMPL(idle_timeout_reset_by_output)
{
    /* Behaviour 6: 15 lines 100 ms apart under a 1 s inactivity limit run to completion (1.5 s
     * in all, longer than the limit); silence after one line fires it. The limit counts from the
     * spawn, so the children are sh scripts, which print within a few hundred ms however loaded
     * the machine, not helpers of this binary, which under ASan on a loaded machine took over a
     * second to their first line (reports/notes/2026-12-05-tests-under-load.md). */
    pk_result r;
    const char *const drip[] = {
        "sh", "-c", "i=0; while [ $i -lt 15 ]; do echo drip $i; sleep 0.1; i=$((i + 1)); done",
        NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = drip, .idle_timeout_ms = 1000}, &r));
    ASSERT_EXITED(r, 0);
    ASSERT_EQ(r.out.total_lines, 15);
    pk_result_release(&r);
    int64_t t0 = pk_test_now_ms();
    const char *const say[] = {"sh", "-c", "echo partial output; exec sleep 100", NULL};
    ASSERT_OK(pk_run(&(pk_command){.argv = say, .idle_timeout_ms = 1000}, &r));
    int64_t took = pk_test_now_ms() - t0;
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_IDLE_TIMED_OUT);
    ASSERT_STR_EQ(r.out.data, "partial output\n");
    ASSERT_GE(took, 1000);
    ASSERT_LT(took, 8000); /* a hang guard */
    pk_result_release(&r);
}

TEST_IMPL(pre_cancelled_spawns_nothing)
{
    /* Behaviour 7, first half. No child means no SIGCHLD; the control run proves it counts. */
    struct sigaction sa = {.sa_handler = on_sigchld};
    sigaction(SIGCHLD, &sa, NULL);
    pk_cancel *c;
    ASSERT_OK(pk_cancel_new(&c));
    pk_cancel_trigger(c);
    ASSERT(pk_cancel_triggered(c));
    pk_result r;
    ASSERT_EQ(pk_run(&(pk_command){.argv = HELPER("exit", "0"), .cancel = c}, &r), PK_ECANCELLED);
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_CANCELLED);
    ASSERT_EQ(r.outcome.pid, 0);
    pk_result_release(&r);
    pk_process *p = (pk_process *)1;
    ASSERT_EQ(pk_spawn(&(pk_command){.argv = HELPER("exit", "0"), .cancel = c}, &p, NULL),
              PK_ECANCELLED);
    ASSERT(p == NULL);
    ASSERT_EQ(sigchld_count, 0);
    ASSERT_OK(pk_run(&(pk_command){.argv = HELPER("exit", "0")}, &r));
    pk_result_release(&r);
    ASSERT_GE(sigchld_count, 1);
    pk_cancel_free(c);
}

struct canceller {
    pk_cancel *c;
    int delay_ms;
};

static void *cancel_later(void *arg)
{
    struct canceller *k = arg;
    usleep((useconds_t)k->delay_ms * 1000);
    pk_cancel_trigger(k->c);
    return NULL;
}

TEST_IMPL(cancel_mid_run_kills_tree)
{
    /* Behaviour 7, second half: from another thread, the whole tree dies and the outcome is
     * CANCELLED even though a timeout was also set (and would have fired later). */
    pk_cancel *c;
    ASSERT_OK(pk_cancel_new(&c));
    struct canceller k = {c, 1000}; /* after the shell has printed, however slow its start */
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, cancel_later, &k), 0);
    pk_process *p;
    const char *const argv[] = {"sh", "-c", "sleep 1000 & echo $!; sleep 1000", NULL};
    ASSERT_OK(pk_spawn(&(pk_command){.argv = argv, .cancel = c, .timeout_ms = 20000}, &p, NULL));
    pk_line line;
    ASSERT_OK(pk_process_read_line(p, &line));
    int bg = atoi(line.data);
    ASSERT_GT(bg, 0);
    pk_result r;
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_LT(pk_test_now_ms() - t0, 8000); /* a hang guard: the timeout is 20 s */
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_CANCELLED);
    ASSERT_EQ(r.outcome.signo, SIGKILL);
    pk_result_release(&r);
    pk_process_free(p);
    ASSERT(pk_test_wait_dead(bg, 5000));
    pthread_join(th, NULL);
    pk_cancel_free(c);
}

TEST_IMPL(cancel_uses_its_signal_and_grace)
{
    /* The first signal of a cancel can be chosen (pkrun forwards SIGINT this way). */
    pk_cancel *c;
    ASSERT_OK(pk_cancel_new(&c));
    pk_process *p;
    ASSERT_OK(pk_spawn(
        &(pk_command){.argv = HELPER("sleep", "100000"), .cancel = c, .grace_ms = 5000}, &p, NULL));
    pk_cancel_trigger_signal(c, SIGINT);
    pk_result r;
    ASSERT_OK(pk_process_wait(p, &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_CANCELLED);
    ASSERT_EQ(r.outcome.signo, SIGINT);
    pk_result_release(&r);
    pk_process_free(p);
    pk_cancel_free(c);
}
