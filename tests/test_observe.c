/*
 * The observer-cost study (pkbench run --suite observe): single cells in a fresh network
 * namespace, each observer's view joined with the workload's own ledger of socket inodes.
 *
 *   - the workload reports the truth its schedule implies: how many connections churned and
 *     how many are open at the freeze (checked against the arithmetic of rate × duration and
 *     hold, and against the server's own count);
 *   - the pollers attribute every long-lived connection, and their open-at-end is the truth;
 *   - the eBPF observers attribute every churned connection, lose nothing (zero drops) and
 *     their open-at-end is the truth;
 *   - a deliberately tiny ring overflows, and the drops are counted;
 *   - the eBPF join takes a socket's owner only from events in the owner's own system call, and
 *     starts a new lifecycle when the kernel reuses a socket's address;
 *   - the map the joins use keeps every key through inserts and deletions.
 *
 * Cells need root (or a user namespace) for the network namespace; the eBPF observers need
 * BPF and BTF. A test that cannot run says why. No timing is asserted anywhere.
 */
#define _GNU_SOURCE
#include "test.h"

#include "suites/observe/cell.h"
#include "suites/observe/obsmap.h"
#include "suites/observe/observers/ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_CHURN_PATH
#define PK_CHURN_PATH ""
#endif

static const pkb_observer *observer(const char *name)
{
    const pkb_observer *ob = pkb_observer_find(name);
    if (ob == NULL)
        pk_test_fail(__FILE__, __LINE__, "no observer named %s", name);
    return ob;
}

/* Skips (saying why) unless the observer can run here. */
static void need(const pkb_observer *ob, const pkb_obs_options *o)
{
    if (PK_CHURN_PATH[0] == '\0')
        pk_test_skip("pk_churn is built only with PK_BUILD_BENCH");
    pkb_obs_options d = pkb_obs_defaults(o);
    char why[512] = "";
    if (ob->probe(ob, &d, why, sizeof why) != 0)
        pk_test_skip("%s: %s", ob->name, why);
}

static void run_cell(const pkb_cell_config *c, const pkb_observer *ob, pkb_cell_result *res)
{
    char why[512] = "";
    int rc = pkb_cell_run(c, ob, res, why, sizeof why);
    if (rc == -EPERM)
        pk_test_skip("%s: %s", ob->name, why);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "%s: cell failed: %s (%s)", ob->name, why,
                     pk_strerror(rc));
    fprintf(stderr,
            "# %-20s churned %llu seen %llu attributed %llu (misattributed %llu), long-lived "
            "%llu/%llu, "
            "open %llu of %llu, events %llu, drops %llu, polls %llu, cpu %.4f s, bpf %llu runs "
            "%.4f s; %s\n",
            ob->name, (unsigned long long)res->churned, (unsigned long long)res->seen,
            (unsigned long long)res->attributed, (unsigned long long)res->misattributed,
            (unsigned long long)res->long_attributed, (unsigned long long)res->long_lived,
            (unsigned long long)res->open_observed, (unsigned long long)res->open_truth,
            (unsigned long long)res->view.events, (unsigned long long)res->view.drops,
            (unsigned long long)res->view.polls, res->cpu_s,
            (unsigned long long)res->view.bpf_run_cnt, (double)res->view.bpf_run_ns / 1e9,
            res->view.hooks);
}

TEST_IMPL(observe_workload_reports_the_truth)
{
    const pkb_observer *ob = observer("none");
    need(ob, NULL);
    /* 100/s for 0.5 s: connects due at 0, 10, ..., 490 ms, so 50. Held 200 ms, the ones due
     * before 300 ms have closed by the freeze at 500 ms and the last 20 are open. */
    pkb_cell_config c = {.churn_path = PK_CHURN_PATH,
                         .rate = 100,
                         .hold_ms = 200,
                         .duration_ms = 500,
                         .long_lived = 7};
    pkb_cell_result res;
    run_cell(&c, ob, &res);
    ASSERT_EQ(res.failures, 0);
    ASSERT_EQ(res.churned, 50);
    ASSERT_EQ(res.open_truth, 7 + 20);
    ASSERT_EQ(res.long_lived, 7);
    ASSERT_EQ(res.accepted, 50);
    ASSERT_GT(res.client_pid, 0);
    ASSERT_GT(res.server_pid, 0);
    ASSERT_NE(res.client_pid, res.server_pid);
    /* `none` sees nothing. */
    ASSERT_EQ(res.seen, 0);
    ASSERT_EQ(res.open_observed, 0);
    pkb_cell_result_free(&res);

    /* Hold 0: every churned connection is closed at once; only the long-lived stay. */
    c.hold_ms = 0;
    run_cell(&c, ob, &res);
    ASSERT_EQ(res.churned, 50);
    ASSERT_EQ(res.open_truth, 7);
    pkb_cell_result_free(&res);
}

static void pollers_see(const char *name)
{
    const pkb_observer *ob = observer(name);
    /* Held 2 s in a 1 s window: every churned connection is still open at the freeze, so the
     * final look must find and attribute each one, however the looks before it were timed. */
    pkb_cell_config c = {.churn_path = PK_CHURN_PATH,
                         .rate = 50,
                         .hold_ms = 2000,
                         .duration_ms = 1000,
                         .long_lived = 10,
                         .obs = {.poll_ms = 250}};
    need(ob, &c.obs);
    pkb_cell_result res;
    run_cell(&c, ob, &res);
    ASSERT_EQ(res.churned, 50);
    ASSERT_EQ(res.open_truth, 60);
    ASSERT_EQ(res.open_observed, res.open_truth);
    ASSERT_EQ(res.long_attributed, 10);
    ASSERT_EQ(res.seen, res.churned);
    ASSERT_EQ(res.attributed, res.churned);
    ASSERT_EQ(res.misattributed, 0);
    /* A look every 250 ms from just before T0 to the freeze at 1 s, then the final one. */
    ASSERT_GE(res.view.polls, 2);
    ASSERT_LE(res.view.polls, 6);
    pkb_cell_result_free(&res);

    /* With hold 0 a connection lives microseconds: a poller attributes (next to) none, while the
     * long-lived ones and what is open at the end stay exact. */
    c.hold_ms = 0;
    run_cell(&c, ob, &res);
    ASSERT_EQ(res.long_attributed, 10);
    ASSERT_EQ(res.open_observed, res.open_truth);
    ASSERT_EQ(res.misattributed, 0);
    ASSERT_LT(res.attributed, res.churned / 2);
    pkb_cell_result_free(&res);
}

TEST_IMPL(observe_proc_poller_sees_long_lived_and_open)
{
    pollers_see("proc_poller");
}

TEST_IMPL(observe_diag_poller_sees_long_lived_and_open)
{
    pollers_see("diag_poller");
}

TEST_IMPL(observe_iter_poller_sees_long_lived_and_open)
{
    pollers_see("iter_poller");
}

static void ebpf_attributes_all(const char *name)
{
    const pkb_observer *ob = observer(name);
    pkb_cell_config c = {.churn_path = PK_CHURN_PATH,
                         .rate = 100,
                         .hold_ms = 0,
                         .duration_ms = 500,
                         .long_lived = 5};
    need(ob, &c.obs);
    for (int hold = 0; hold <= 150; hold += 150) {
        c.hold_ms = hold;
        pkb_cell_result res;
        run_cell(&c, ob, &res);
        ASSERT_EQ(res.churned, 50);
        ASSERT_EQ(res.view.drops, 0);
        ASSERT_EQ(res.view.events, res.view.submitted);
        ASSERT_EQ(res.seen, res.churned);
        ASSERT_EQ(res.attributed, res.churned);
        ASSERT_EQ(res.misattributed, 0);
        ASSERT_EQ(res.long_attributed, 5);
        ASSERT_EQ(res.server_attributed, res.accepted);
        ASSERT_EQ(res.open_observed, res.open_truth);
        /* Both ends of every connection change state several times. */
        ASSERT_GE(res.view.events, 8 * res.churned);
        ASSERT(res.view.hooks[0] != '\0');
        pkb_cell_result_free(&res);
    }
}

TEST_IMPL(observe_ebpf_ringbuf_attributes_every_connection)
{
    ebpf_attributes_all("ebpf_ringbuf");
}

TEST_IMPL(observe_ebpf_batched_attributes_every_connection)
{
    ebpf_attributes_all("ebpf_ringbuf_batched");
}

TEST_IMPL(observe_tiny_ring_counts_its_drops)
{
    const pkb_observer *ob = observer("ebpf_ringbuf_batched");
    /* A 4 KiB ring holds 128 records; 400 connections/s of about 11 events each, consumed every
     * 250 ms, bring about 1,100 per batch. */
    pkb_cell_config c = {.churn_path = PK_CHURN_PATH,
                         .rate = 400,
                         .hold_ms = 0,
                         .duration_ms = 500,
                         .long_lived = 5,
                         .obs = {.ring_bytes = 4096, .batch_ms = 250}};
    need(ob, &c.obs);
    pkb_cell_result res;
    run_cell(&c, ob, &res);
    ASSERT_EQ(res.churned, 200);
    ASSERT_GT(res.view.drops, 0);
    /* Every record submitted was consumed: what is missing is exactly what was dropped. */
    ASSERT_EQ(res.view.events, res.view.submitted);
    ASSERT_LT(res.attributed, res.churned);
    pkb_cell_result_free(&res);
}

/* A kernel-address-like key: aligned, in the direct map. */
#define ADDR(k) (0xffff888000000000ULL + ((uint64_t)(k) << 12))

TEST_IMPL(observe_obsmap_keeps_every_key)
{
    pkb_obsmap m = {0};
    /* Sequential keys (inodes) and aligned ones (kernel addresses), with deletions between, so
     * backward shifts happen inside long probe runs. */
    for (uint64_t k = 1; k <= 5000; k++) {
        ASSERT(pkb_obsmap_put(&m, k) != NULL);
        pkb_obsmap_get(&m, k)->pid = (uint32_t)k;
        ASSERT(pkb_obsmap_put(&m, ADDR(k)) != NULL);
    }
    ASSERT_EQ(m.n, 10000);
    for (uint64_t k = 1; k <= 5000; k += 3) {
        pkb_obsmap_del(&m, k);
        pkb_obsmap_del(&m, ADDR(k));
    }
    for (uint64_t k = 1; k <= 5000; k++) {
        bool gone = (k - 1) % 3 == 0;
        pkb_obs_entry *e = pkb_obsmap_get(&m, k);
        ASSERT_EQ(e == NULL, gone);
        ASSERT_EQ(pkb_obsmap_get(&m, ADDR(k)) == NULL, gone);
        if (!gone)
            ASSERT_EQ(e->pid, k);
    }
    ASSERT_EQ(pkb_obsmap_put(&m, 0) == NULL, true);
    /* note keeps the first known owner and never forgets one. */
    ASSERT_OK(pkb_obsmap_note(&m, 77777, 0));
    ASSERT_OK(pkb_obsmap_note(&m, 77777, 12));
    ASSERT_OK(pkb_obsmap_note(&m, 77777, 0));
    ASSERT_OK(pkb_obsmap_note(&m, 77777, 13));
    ASSERT_EQ(pkb_obsmap_get(&m, 77777)->pid, 12);
    pkb_obsmap_clear(&m);
    ASSERT_EQ(m.n, 0);
    ASSERT(pkb_obsmap_get(&m, 2) == NULL);
    pkb_obsmap_free(&m);
}

static struct pkb_obs_event
ev(uint64_t sk, int kind, int from, int to, uint64_t inode, uint32_t pid, bool process)
{
    return (struct pkb_obs_event){.sk = sk,
                                  .inode = inode,
                                  .pid = pid,
                                  .kind = (__u8)kind,
                                  .oldstate = (__u8)from,
                                  .newstate = (__u8)to,
                                  .process = process};
}

/* The kernel's TCP states (include/net/tcp_states.h). */
enum {
    EST = 1,
    SYN_SENT,
    SYN_RECV,
    FIN_WAIT1,
    FIN_WAIT2,
    TIME_WAIT,
    CLOSE,
    CLOSE_WAIT,
    LAST_ACK,
    LISTEN
};

static uint32_t owner(const pkb_obs_view *v, uint64_t inode)
{
    const pkb_obs_entry *e = pkb_obsmap_get(&v->seen, inode);
    ASSERT(e != NULL);
    return e->pid;
}

TEST_IMPL(observe_ring_join_trusts_only_process_context)
{
    pkb_obsmap live = {0};
    pkb_obs_view v = {0};
    const uint64_t A = ADDR(1), B = ADDR(2);
    /* The client's connect: in its own syscall, so it names the owner (100). */
    struct pkb_obs_event seq[] = {
        ev(A, PKB_OBS_EV_STATE, CLOSE, SYN_SENT, 11, 100, true),
        /* The SYN-ACK lands in softirq while the server (200) runs: not an owner. */
        ev(A, PKB_OBS_EV_STATE, SYN_SENT, EST, 11, 200, false),
        /* The server's child socket, created in softirq in the client's context: no file yet. */
        ev(B, PKB_OBS_EV_STATE, LISTEN, SYN_RECV, 0, 100, false),
        ev(B, PKB_OBS_EV_STATE, SYN_RECV, EST, 0, 100, false),
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
        ASSERT_OK(pkb__ring_join(&live, &v, &seq[i]));
    ASSERT_EQ(owner(&v, 11), 100);
    ASSERT(pkb_obsmap_get(&v.seen, 22) == NULL);
    /* Accepted (inode 22), then a softirq state change naming the client: the socket is seen,
     * its owner still unknown... */
    struct pkb_obs_event fin = ev(B, PKB_OBS_EV_STATE, EST, CLOSE_WAIT, 22, 100, false);
    ASSERT_OK(pkb__ring_join(&live, &v, &fin));
    ASSERT_EQ(owner(&v, 22), 0);
    /* ...until the accept hook, in the server's syscall, names it. */
    struct pkb_obs_event acc = ev(B, PKB_OBS_EV_ACCEPT, 0, 0, 22, 200, true);
    ASSERT_OK(pkb__ring_join(&live, &v, &acc));
    ASSERT_EQ(owner(&v, 22), 200);
    ASSERT_EQ(pkb_obsmap_get(&live, B)->events, 4);
    /* The client's socket ends; the kernel reuses its address for a new connection by 101. */
    struct pkb_obs_event end = ev(A, PKB_OBS_EV_STATE, FIN_WAIT2, CLOSE, 0, 200, false);
    ASSERT_OK(pkb__ring_join(&live, &v, &end));
    ASSERT(pkb_obsmap_get(&live, A) == NULL);
    struct pkb_obs_event again = ev(A, PKB_OBS_EV_STATE, CLOSE, SYN_SENT, 33, 101, true);
    ASSERT_OK(pkb__ring_join(&live, &v, &again));
    ASSERT_EQ(owner(&v, 33), 101);
    ASSERT_EQ(owner(&v, 11), 100);
    ASSERT_EQ(pkb_obsmap_get(&live, A)->events, 1);
    ASSERT_EQ(pkb_obsmap_get(&live, A)->state, SYN_SENT);
    pkb_obsmap_free(&live);
    pkb_obs_view_free(&v);
}
