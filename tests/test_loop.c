/*
 * The event loop: one thread, many runs (processkit.md §5, behaviour 18): each run captures only
 * its own output, and one run's timeout leaves the others alone. Also the embedding path: the
 * loop's descriptor in a host's own poll.
 */
#define _GNU_SOURCE
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct slot {
    int index;
    int rc;
    bool done;
    pk_result res;
};

static void on_done(void *user, int rc, pk_result *res)
{
    struct slot *s = user;
    s->rc = rc;
    s->done = true;
    s->res = *res; /* take ownership */
}

TEST_IMPL(loop_16_runs_isolated)
{
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    struct slot slots[16];
    char payload[16][64];
    for (int i = 0; i < 16; i++) {
        slots[i] = (struct slot){.index = i};
        int n = snprintf(payload[i], sizeof payload[i], "child %d says hello\n", i);
        /* Every third run also dies of a timeout; its neighbours must not notice. It prints
         * through /bin/sh, not this binary: sixteen of these (ASan-instrumented) starting at once
         * beside two CPU hogs took longer than the limit before printing, and a run killed
         * before its first line has nothing to show. The sh's sleep is killed with it. */
        static const char *const say_then_sleep[] = {"/bin/sh", "-c",
                                                     "echo partial output; exec sleep 100", NULL};
        bool slow = i % 3 == 0;
        pk_command cmd = {
            .argv = slow ? say_then_sleep : HELPER("echo-stdin"),
            .in = {.kind = PK_STDIO_BYTES, .data = payload[i], .len = (size_t)n},
            .timeout_ms = slow ? 2000 : 0,
        };
        ASSERT_OK(pk_loop_start(loop, &cmd, on_done, &slots[i], NULL));
    }
    ASSERT_EQ(pk_loop_active(loop), 16);
    ASSERT_OK(pk_loop_run(loop));
    ASSERT_EQ(pk_loop_active(loop), 0);
    for (int i = 0; i < 16; i++) {
        struct slot *s = &slots[i];
        ASSERT(s->done);
        if (i % 3 == 0) {
            ASSERT_EQ(s->res.outcome.kind, PK_OUTCOME_TIMED_OUT);
            ASSERT_STR_EQ(s->res.out.data, "partial output\n");
        } else {
            ASSERT_OK(s->rc);
            ASSERT_EXITED(s->res, 0);
            ASSERT_STR_EQ(s->res.out.data, payload[i]);
        }
        pk_result_release(&s->res);
    }
    pk_loop_free(loop);
}

TEST_IMPL(loop_lines_idle_and_cancel)
{
    /* The same engine as pk_run: line callbacks, the inactivity limit and cancellation. */
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    pk_cancel *c;
    ASSERT_OK(pk_cancel_new(&c));
    struct slot a = {0}, b = {0}, d = {0};
    ASSERT_OK(pk_loop_start(
        loop, &(pk_command){.argv = HELPER("drip", "6", "50"), .idle_timeout_ms = 3000}, on_done,
        &a, NULL));
    /* Taken before b starts: its limit cannot fire earlier than 200 ms after this, however long
     * the starts take on a loaded machine. */
    int64_t t0 = pk_test_now_ms();
    ASSERT_OK(pk_loop_start(
        loop, &(pk_command){.argv = HELPER("say-then-sleep", "100000"), .idle_timeout_ms = 200},
        on_done, &b, NULL));
    ASSERT_OK(pk_loop_start(loop, &(pk_command){.argv = HELPER("sleep", "100000"), .cancel = c},
                            on_done, &d, NULL));
    while (!b.done)
        ASSERT_GE(pk_loop_step(loop, -1), 0);
    ASSERT_EQ(b.res.outcome.kind, PK_OUTCOME_IDLE_TIMED_OUT);
    ASSERT_GE(pk_test_now_ms() - t0, 200);
    pk_cancel_trigger(c);
    ASSERT_OK(pk_loop_run(loop));
    ASSERT_EXITED(a.res, 0);
    ASSERT_EQ(a.res.out.total_lines, 6);
    ASSERT_EQ(d.res.outcome.kind, PK_OUTCOME_CANCELLED);
    pk_result_release(&a.res);
    pk_result_release(&b.res);
    pk_result_release(&d.res);
    pk_cancel_free(c);
    pk_loop_free(loop);
}

TEST_IMPL(loop_embeds_in_host_poll)
{
    /* A host waits on pk_loop_fd in its own poll and calls pk_loop_step(loop, 0). */
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    struct slot s = {0};
    ASSERT_OK(pk_loop_start(loop, &(pk_command){.argv = HELPER("emit-lines", "1000", "50")},
                            on_done, &s, NULL));
    int wakeups = 0;
    while (!s.done) {
        struct pollfd pfd = {pk_loop_fd(loop), POLLIN, 0};
        ASSERT_EQ(poll(&pfd, 1, 5000), 1);
        wakeups++;
        ASSERT_GE(pk_loop_step(loop, 0), 0);
    }
    ASSERT_GT(wakeups, 0);
    ASSERT_EQ(s.res.out.total_lines, 1000);
    ASSERT_EQ(s.res.out.len, 1000 * 51);
    pk_result_release(&s.res);
    pk_loop_free(loop);
}

/* The descriptors pk_loop's epoll set still watches, read from /proc/self/fdinfo. */
static int epoll_registrations(int epfd)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", epfd);
    FILE *f = fopen(path, "r");
    ASSERT(f != NULL);
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL)
        n += strncmp(line, "tfd:", 4) == 0;
    fclose(f);
    return n;
}

TEST_IMPL(loop_forgets_descriptors_a_copy_outlives)
{
    /* epoll drops a registration only when the open file description is gone, and a copy of
     * our descriptors can outlive our close: here a forked process holds one of everything, as a
     * host thread's fork or a leaf's holder being born would. A run that ends must leave nothing
     * registered, or the copy's events would name the freed run (use after free). */
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    struct slot s[2] = {{0}, {0}};
    /* Output only: a copy of a stdin pipe's write end would keep the child from its EOF. */
    for (int i = 0; i < 2; i++)
        ASSERT_OK(pk_loop_start(loop, &(pk_command){.argv = HELPER("emit-lines", "100", "80")},
                                on_done, &s[i], NULL));
    int gate[2];
    ASSERT_EQ(pipe2(gate, O_CLOEXEC), 0);
    pid_t copy = fork();
    ASSERT_GE(copy, 0);
    if (copy == 0) {
        char c;
        close(gate[1]);
        (void)read(gate[0], &c, 1); /* until the test is done */
        _exit(0);
    }
    close(gate[0]);
    ASSERT_OK(pk_loop_run(loop));
    for (int i = 0; i < 2; i++) {
        ASSERT(s[i].done);
        ASSERT_OK(s[i].rc);
        ASSERT_EQ(s[i].res.out.len, 100 * 81);
        pk_result_release(&s[i].res);
    }
    ASSERT_EQ(epoll_registrations(pk_loop_fd(loop)), 0);
    /* Stepping on finds nothing of theirs. */
    ASSERT_EQ(pk_loop_step(loop, 0), 0);
    close(gate[1]);
    int st;
    ASSERT_EQ(waitpid(copy, &st, 0), copy);
    pk_loop_free(loop);
}

TEST_IMPL(loop_free_kills_remaining_runs)
{
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    struct slot s = {0};
    const char *const argv[] = {"sh", "-c", "sleep 1000 & echo $!; sleep 1000", NULL};
    ASSERT_OK(pk_loop_start(loop, &(pk_command){.argv = argv}, on_done, &s, NULL));
    /* Let the shell start its background sleep. */
    for (int i = 0; i < 20; i++)
        pk_loop_step(loop, 10);
    pk_loop_free(loop); /* kill-on-close, no callback; hygiene checks the reap */
    ASSERT(!s.done);
}

TEST_IMPL(loop_start_failure_reports)
{
    pk_loop *loop;
    ASSERT_OK(pk_loop_new(&loop));
    struct slot s = {0};
    pk_result f;
    ASSERT_EQ(
        pk_loop_start(loop, &(pk_command){.program = "pk-not-there-anywhere"}, on_done, &s, &f),
        PK_ENOTFOUND);
    ASSERT_EQ(f.outcome.stage, PK_STAGE_RESOLVE);
    pk_result_release(&f);
    ASSERT_EQ(pk_loop_active(loop), 0);
    ASSERT_EQ(pk_loop_step(loop, 0), 0);
    ASSERT_EQ(pk_loop_start(loop, &(pk_command){.program = "true"}, NULL, NULL, NULL), -EINVAL);
    pk_loop_free(loop);
}

TEST_IMPL(wait_any_returns_first_exit)
{
    pk_process *p[3];
    /* p[0] outlives the test (it is killed at the end), so it can never be "first". */
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("sleep", "100000")}, &p[0], NULL));
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("exit", "5")}, &p[1], NULL));
    ASSERT_OK(pk_spawn(&(pk_command){.argv = HELPER("emit-lines", "200000", "100")}, &p[2],
                       NULL)); /* 20 MB: only finishes if wait_any keeps draining it */
    size_t idx = 99;
    ASSERT_OK(pk_wait_any(p, 3, 15000, &idx));
    ASSERT(idx == 1 || idx == 2);
    pk_result r;
    ASSERT_OK(pk_process_wait(p[idx], &r));
    pk_result_release(&r);
    size_t other = idx == 1 ? 2 : 1;
    ASSERT_OK(pk_wait_any(p, 3, 15000, &idx));
    ASSERT_EQ(idx, other);
    ASSERT_OK(pk_process_wait(p[other], &r));
    ASSERT_EQ(r.outcome.kind, PK_OUTCOME_EXITED);
    if (other == 2)
        ASSERT_EQ(r.out.total_lines, 200000);
    pk_result_release(&r);
    ASSERT_EQ(pk_wait_any(p, 3, 50, &idx), -ETIMEDOUT);
    for (int i = 0; i < 3; i++)
        pk_process_free(p[i]);
}

static int note_pid(void *user, const pk_line *line)
{
    int *pid = user;
    if (*pid == 0 && line->stream == 1)
        *pid = atoi(line->data);
    return 0;
}

TEST_IMPL(loop_free_kills_background_grandchild)
{
    /* pk_loop_free ends every tree it still drives: the shell and the sleep it put in the
     * background, whether the run's private group is a cgroup or a process group. */
    static const pk_containment modes[] = {PK_CONTAIN_AUTO, PK_CONTAIN_PGROUP};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        pk_loop *loop;
        ASSERT_OK(pk_loop_new(&loop));
        struct slot s = {0};
        int bg = 0;
        const char *const argv[] = {"sh", "-c", "sleep 300 & echo $!; sleep 300", NULL};
        ASSERT_OK(pk_loop_start(
            loop,
            &(pk_command){
                .argv = argv, .containment = modes[m], .on_line = note_pid, .line_user = &bg},
            on_done, &s, NULL));
        for (int64_t t0 = pk_test_now_ms(); bg == 0 && pk_test_now_ms() - t0 < 30000;)
            ASSERT_GE(pk_loop_step(loop, 100), 0);
        ASSERT_GT(bg, 0);
        ASSERT(pk_test_pid_alive(bg));
        pk_loop_free(loop);
        ASSERT(!s.done); /* no callback */
        bool dead = pk_test_wait_dead(bg, 5000);
        if (!dead)
            kill(bg, SIGKILL); /* do not leave it behind when the check fails */
        if (!dead)
            pk_test_fail(__FILE__, __LINE__, "%s: the background sleep %d outlived pk_loop_free",
                         pk_containment_name(modes[m]), bg);
    }
}
