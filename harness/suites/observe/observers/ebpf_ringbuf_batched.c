/*
 * ebpf_ringbuf_batched — ebpf_ringbuf's programs submitting with BPF_RB_NO_WAKEUP, and a reader
 * that consumes the ring on its own timer (every batch_ms, 100 by default) instead of being
 * woken per event: no wake-up (irq_work, an IPI in a VM) lands on the observed processes. The
 * ring must hold a batch: rate × events per connection × period × 32 bytes per record.
 */
#include "suites/observe/observers/ring.h"

const pkb_observer pkb_observer_ebpf_ringbuf_batched =
    PKB_OBSERVER_OF(pkb__ring,
                    "ebpf_ringbuf_batched",
                    PKB_RING_BATCHED,
                    "the same programs submitting without wake-ups; the ring consumed every "
                    "100 ms");
