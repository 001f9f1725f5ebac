/*
 * ebpf_ringbuf — the seed's eBPF backend: the socket-state tracepoint plus process-context
 * connect and accept hooks (attach order fentry, tp_btf, raw_tp, classic tracepoint; bpf.linux.c),
 * events through a BPF ring buffer with a wake-up whenever the reader has caught up — one per
 * event at these rates — and the reader blocked in epoll between them (ring.c joins the events).
 */
#include "suites/observe/observers/ring.h"

const pkb_observer pkb_observer_ebpf_ringbuf =
    PKB_OBSERVER_OF(pkb__ring,
                    "ebpf_ringbuf",
                    0,
                    "socket-state tracepoint + connect/accept hooks, a BPF ring buffer, woken per "
                    "event");
