/*
 * Both time limits on one run (a deadline and an inactivity limit): the earlier one wins and the
 * outcome names the one that fired, through both drivers (pk_run's ppoll loop and pk_loop's
 * epoll/timerfd loop). Output keeps an inactivity limit from firing, never a deadline.
 *
 * The limits are far apart (1 s against 20 s), so which one fires does not depend on the machine's
 * load: a slow machine only makes the run later, never the later limit earlier. The children are
 * sh scripts, not this test binary's helpers: both limits count from the spawn, and the first
 * line must come before the earlier limit; a helper of this 19 MB binary took a second or more
 * to its first line in 8 of 60 starts under ASan on a loaded machine, sh in none
 * (reports/notes/2026-12-05-tests-under-load.md). Upper bounds on time are hang guards only (the
 * test's timeout and the 20 s limit).
 */
#define _GNU_SOURCE
#include "test.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/* One line, then silence. */
#define SAY_THEN_SLEEP "echo partial output; exec sleep 100"
/* A line every 50 ms, for ever (until a limit ends it). */
#define DRIP_FOREVER "while :; do echo drip; sleep 0.05; done"
/* 50 lines, 50 ms apart. */
#define DRIP_50 "i=0; while [ $i -lt 50 ]; do echo drip $i; sleep 0.05; i=$((i + 1)); done"

struct limits_case {
    const char *what;
    const char *script; /* what sh -c runs */
    int64_t timeout_ms, idle_ms;
    pk_outcome_kind want;
    int64_t at_least_ms; /* the limit that must fire cannot fire before this */
};

/* The argv of case c's child, in storage the caller provides. */
static const char *const *argv_of(const struct limits_case *c, const char *argv[4])
{
    argv[0] = "sh";
    argv[1] = "-c";
    argv[2] = c->script;
    argv[3] = NULL;
    return argv;
}

static void check_result(const struct limits_case *c, const pk_result *r, int64_t took)
{
    printf("%s: %s after %lld ms\n", c->what, pk_outcome_kind_name(r->outcome.kind),
           (long long)took);
    if (r->outcome.kind != c->want)
        pk_test_fail(__FILE__, __LINE__, "%s: outcome %s, want %s", c->what,
                     pk_outcome_kind_name(r->outcome.kind), pk_outcome_kind_name(c->want));
    ASSERT_EQ(r->outcome.signo, SIGKILL); /* no grace: killed at once */
    ASSERT_GE(took, c->at_least_ms);
}

static const struct limits_case cases[] = {
    /* Silent after one line: the 1 s deadline comes before the 20 s inactivity limit. */
    {"deadline first", SAY_THEN_SLEEP, 1000, 20000, PK_OUTCOME_TIMED_OUT, 1000},
    /* The same child, the limits swapped: now the inactivity limit is the earlier one. */
    {"idle first", SAY_THEN_SLEEP, 20000, 1000, PK_OUTCOME_IDLE_TIMED_OUT, 1000},
    /* A line every 50 ms under a 1.5 s inactivity limit and a 3 s deadline: output keeps pushing
     * the inactivity limit back, never the deadline. */
    {"output defers idle, not the deadline", DRIP_FOREVER, 3000, 1500, PK_OUTCOME_TIMED_OUT, 3000},
    /* The inactivity limit counts from the last output, not from the start: 50 lines 50 ms
     * apart (2.5 s in all) under a 2 s inactivity limit run to their end. */
    {"idle counts from the last line", DRIP_50, 20000, 2000, PK_OUTCOME_EXITED, 0},
};

TEST_IMPL(limits_earlier_wins_run)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct limits_case *c = &cases[i];
        pk_result r;
        const char *argv[4];
        int64_t t0 = pk_test_now_ms();
        ASSERT_OK(pk_run(&(pk_command){.argv = argv_of(c, argv),
                                       .timeout_ms = c->timeout_ms,
                                       .idle_timeout_ms = c->idle_ms},
                         &r));
        int64_t took = pk_test_now_ms() - t0;
        if (c->want == PK_OUTCOME_EXITED) {
            ASSERT_EXITED(r, 0);
            ASSERT_EQ(r.out.total_lines, 50);
        } else {
            check_result(c, &r, took);
            ASSERT(r.out.total_lines >= 1); /* output read so far is kept */
        }
        pk_result_release(&r);
    }
}

struct slot {
    bool done;
    int rc;
    pk_result res;
    int64_t at;
};

static void on_done(void *user, int rc, pk_result *res)
{
    struct slot *s = user;
    s->done = true;
    s->rc = rc;
    s->res = *res;
    s->at = pk_test_now_ms();
}

TEST_IMPL(limits_earlier_wins_loop)
{
    /* All the cases at once in one loop: each run's own limits decide its outcome. */
    enum { K = sizeof cases / sizeof cases[0] };
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    struct slot slots[K] = {{0}};
    const char *argv[K][4];
    int64_t t0 = pk_test_now_ms();
    for (size_t i = 0; i < K; i++)
        ASSERT_OK(pk_loop_start(loop,
                                &(pk_command){.argv = argv_of(&cases[i], argv[i]),
                                              .timeout_ms = cases[i].timeout_ms,
                                              .idle_timeout_ms = cases[i].idle_ms},
                                on_done, &slots[i], NULL));
    ASSERT_OK(pk_loop_run(loop));
    for (size_t i = 0; i < K; i++) {
        ASSERT(slots[i].done);
        ASSERT_OK(slots[i].rc);
        if (cases[i].want == PK_OUTCOME_EXITED) {
            ASSERT_EXITED(slots[i].res, 0);
            ASSERT_EQ(slots[i].res.out.total_lines, 50);
        } else {
            check_result(&cases[i], &slots[i].res, slots[i].at - t0);
        }
        pk_result_release(&slots[i].res);
    }
    pk_loop_free(loop);
}
