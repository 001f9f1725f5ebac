/*
 * ring — the eBPF observers' user-space half (ring.h). Every record names a kernel socket
 * address; a lifecycle runs from a transition out of CLOSE to the transition into CLOSE, so an
 * address the kernel reuses starts a new one. Per lifecycle we keep the inode (known while a
 * file holds the socket: from connect on the client, from accept on the server) and the owner,
 * taken only from events that run in the owner's syscall (event.h's `process`): a state change
 * in softirq carries whoever was interrupted. Every inode, with its owner once known, goes into
 * view->seen; the lifecycles still open at the end give view->open.
 */
#define _GNU_SOURCE
#include "suites/observe/observers/ring.h"

#include "run/run.h"
#include "suites/observe/observers/bpf.h"
#include "suites/observe/observers/poll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring_obs {
    pkb_bpf *bpf;
    int64_t period_ns;  /* PKB_RING_BATCHED: batch_ms; 0: woken per event */
    pkb_obsmap live;    /* kernel socket address -> its current lifecycle */
    pkb_obs_view *view; /* where this take's events land */
    uint64_t events;
    int error; /* the first failure inside the callback (out of memory) */
};

int pkb__ring_join(pkb_obsmap *live, pkb_obs_view *v, const struct pkb_obs_event *e)
{
    pkb_obs_entry *l = pkb_obsmap_get(live, e->sk);
    bool starts = e->kind == PKB_OBS_EV_STATE && e->oldstate == PKB_TCP_CLOSE;
    if (l == NULL || starts) {
        if ((l = pkb_obsmap_put(live, e->sk)) == NULL)
            return -ENOMEM;
        *l = (pkb_obs_entry){0};
    }
    l->events++;
    if (e->inode != 0)
        l->inode = e->inode;
    /* Only an event in the owner's own system call names the owner: in softirq the current
     * task is whoever was interrupted. */
    if (e->process)
        l->pid = e->pid;
    if (e->kind == PKB_OBS_EV_STATE)
        l->state = e->newstate;
    if (l->inode != 0 && pkb_obsmap_note(&v->seen, l->inode, l->pid) != 0)
        return -ENOMEM;
    if (e->kind == PKB_OBS_EV_STATE && e->newstate == PKB_TCP_CLOSE)
        pkb_obsmap_del(live, e->sk);
    return 0;
}

static void on_event(void *ctx, const struct pkb_obs_event *e)
{
    struct ring_obs *r = ctx;
    r->events++;
    int rc = pkb__ring_join(&r->live, r->view, e);
    if (rc != 0 && r->error == 0)
        r->error = rc;
}

int pkb__ring_probe(const pkb_observer *self, const pkb_obs_options *o, char *why, size_t cap)
{
    (void)self;
    return pkb__bpf_probe(o, PKB_BPF_RING, why, cap);
}

int pkb__ring_setup(
    const pkb_observer *self, const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    struct ring_obs *r = calloc(1, sizeof *r);
    if (r == NULL)
        return -ENOMEM;
    bool batched = self->variant & PKB_RING_BATCHED;
    r->period_ns = batched ? (int64_t)o->batch_ms * 1000000 : 0;
    pkb_bpf_request req = {
        .need = PKB_BPF_RING, .no_wakeup = batched, .on_event = on_event, .ctx = r};
    int rc = pkb__bpf_open(o, &req, &r->bpf, why, cap);
    if (rc != 0) {
        free(r);
        return rc;
    }
    *state = r;
    return 0;
}

/* Waits up to timeout_ms for records and consumes them (timeout_ms < 0: consumes what is there
 * without waiting); returns how many, or a negative errno. */
static int take(struct ring_obs *r, pkb_obs_view *v, int timeout_ms, char *why, size_t cap)
{
    r->view = v;
    int n = timeout_ms < 0 ? pkb__bpf_ring_consume(r->bpf) : pkb__bpf_ring_poll(r->bpf, timeout_ms);
    if (n == -EINTR)
        return 0;
    if (n < 0) {
        snprintf(why, cap, "reading the ring buffer: %s", strerror(-n));
        return n;
    }
    if (r->error != 0) {
        snprintf(why, cap, "joining the events: %s", strerror(-r->error));
        return r->error;
    }
    if (n > 0)
        v->wakeups++;
    return n;
}

/* Woken per event: blocked in epoll until records come, looking at the deadline (and Ctrl-C) at
 * least every 200 ms. */
static int run_woken(struct ring_obs *r, int64_t until, pkb_obs_view *v, char *why, size_t cap)
{
    for (int64_t now = pkb_obs_now_ns(); now < until; now = pkb_obs_now_ns()) {
        if (pkb_interrupted)
            return -EINTR;
        int64_t ms = (until - now + 999999) / 1000000;
        int n = take(r, v, ms > 200 ? 200 : (int)ms, why, cap);
        if (n < 0)
            return n;
    }
    return 0;
}

/* Batched: asleep until the next period, then whatever the ring holds. */
static int run_batched(struct ring_obs *r, int64_t until, pkb_obs_view *v, char *why, size_t cap)
{
    for (int64_t t = pkb_obs_now_ns() + r->period_ns;; t += r->period_ns) {
        int rc = pkb_obs_sleep_until(t < until ? t : until);
        if (rc != 0)
            return rc;
        int n = take(r, v, -1, why, cap);
        if (n < 0)
            return n;
        if (t >= until)
            return 0;
    }
}

int pkb__ring_run(void *state, int64_t until, pkb_obs_view *v, char *why, size_t cap)
{
    struct ring_obs *r = state;
    return r->period_ns > 0 ? run_batched(r, until, v, why, cap) : run_woken(r, until, v, why, cap);
}

int pkb__ring_final(void *state, pkb_obs_view *v, char *why, size_t cap)
{
    struct ring_obs *r = state;
    int n = take(r, v, -1, why, cap);
    if (n < 0)
        return n;
    for (size_t i = 0; i < r->live.cap; i++) {
        const pkb_obs_entry *l = &r->live.vals[i];
        if (r->live.keys[i] != 0 && l->state == PKB_TCP_ESTABLISHED &&
            pkb_obsmap_note(&v->open, l->inode, l->pid) != 0)
            return -ENOMEM;
    }
    return 0;
}

void pkb__ring_report(void *state, pkb_obs_view *v)
{
    struct ring_obs *r = state;
    v->has = PKB_OBS_HAS_RING | PKB_OBS_HAS_BPF;
    v->events = r->events;
    pkb__bpf_counters(r->bpf, &v->submitted, &v->drops);
    pkb__bpf_stats(r->bpf, v);
    snprintf(v->hooks, sizeof v->hooks, "%s", pkb__bpf_hooks(r->bpf));
}

void pkb__ring_free(void *state)
{
    struct ring_obs *r = state;
    if (r == NULL)
        return;
    pkb__bpf_close(r->bpf);
    pkb_obsmap_free(&r->live);
    free(r);
}
