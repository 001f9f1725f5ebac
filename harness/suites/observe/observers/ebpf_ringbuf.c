/*
 * ebpf_ringbuf — the seed's eBPF backend: the socket-state tracepoint plus process-context
 * connect and accept hooks (attach order fentry, tp_btf, raw_tp, classic tracepoint; bpf.linux.c),
 * events through a BPF ring buffer with a wake-up whenever the reader has caught up — one per
 * event at these rates — and the reader blocked in epoll between them (ring.c joins the events).
 */
#define _GNU_SOURCE
#include "suites/observe/observers/ring.h"

#include "run/run.h"

#include <errno.h>

static int probe(const pkb_obs_options *o, char *why, size_t cap)
{
    return pkb__ring_probe(o, why, cap);
}

static int setup(const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    return pkb__ring_setup(o, false, state, why, cap);
}

static int run(void *state, int64_t until, pkb_obs_view *v, char *why, size_t cap)
{
    for (int64_t now = pkb_obs_now_ns(); now < until; now = pkb_obs_now_ns()) {
        if (pkb_interrupted)
            return -EINTR;
        int64_t ms = (until - now + 999999) / 1000000;
        int n = pkb__ring_take(state, v, ms > 200 ? 200 : (int)ms, why, cap);
        if (n < 0)
            return n;
    }
    return 0;
}

static int final(void *state, pkb_obs_view *v, char *why, size_t cap)
{
    return pkb__ring_final(state, v, why, cap);
}

const pkb_observer pkb_observer_ebpf_ringbuf = {
    .name = "ebpf_ringbuf",
    .description = "socket-state tracepoint + connect/accept hooks, a BPF ring buffer, woken per "
                   "event",
    .probe = probe,
    .setup = setup,
    .run = run,
    .final = final,
    .report = pkb__ring_report,
    .free = pkb__ring_free,
};
