/*
 * ebpf_ringbuf_batched — ebpf_ringbuf's programs submitting with BPF_RB_NO_WAKEUP, and a reader
 * that consumes the ring on its own timer (every batch_ms, 100 by default) instead of being
 * woken per event: no wake-up (irq_work, an IPI in a VM) lands on the observed processes. The
 * ring must hold a batch: rate × events per connection × period × 32 bytes per record.
 */
#define _GNU_SOURCE
#include "suites/observe/observers/ring.h"

#include <errno.h>
#include <stdlib.h>

struct batched {
    void *ring;
    int64_t period_ns;
};

static int probe(const pkb_obs_options *o, char *why, size_t cap)
{
    return pkb__ring_probe(o, why, cap);
}

static int setup(const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    struct batched *b = calloc(1, sizeof *b);
    if (b == NULL)
        return -ENOMEM;
    b->period_ns = (int64_t)o->batch_ms * 1000000;
    int rc = pkb__ring_setup(o, true, &b->ring, why, cap);
    if (rc != 0) {
        free(b);
        return rc;
    }
    *state = b;
    return 0;
}

static int run(void *state, int64_t until, pkb_obs_view *v, char *why, size_t cap)
{
    struct batched *b = state;
    for (int64_t t = pkb_obs_now_ns() + b->period_ns;; t += b->period_ns) {
        int rc = pkb_obs_sleep_until(t < until ? t : until);
        if (rc != 0)
            return rc;
        int n = pkb__ring_take(b->ring, v, -1, why, cap);
        if (n < 0)
            return n;
        if (t >= until)
            return 0;
    }
}

static int final(void *state, pkb_obs_view *v, char *why, size_t cap)
{
    return pkb__ring_final(((struct batched *)state)->ring, v, why, cap);
}

static void report(void *state, pkb_obs_view *v)
{
    pkb__ring_report(((struct batched *)state)->ring, v);
}

static void release(void *state)
{
    struct batched *b = state;
    if (b == NULL)
        return;
    pkb__ring_free(b->ring);
    free(b);
}

const pkb_observer pkb_observer_ebpf_ringbuf_batched = {
    .name = "ebpf_ringbuf_batched",
    .description = "the same programs submitting without wake-ups; the ring consumed every "
                   "100 ms",
    .probe = probe,
    .setup = setup,
    .run = run,
    .final = final,
    .report = report,
    .free = release,
};
