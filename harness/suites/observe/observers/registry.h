/*
 * The observers the observe suite runs, in the order of its tables and legends: one line each.
 * An observer's file defines `const pkb_observer pkb_observer_<name>` (see ../observer.h); its
 * line here is all the suite needs. `none` watches nothing: the workload's cost on its own.
 */
#define PKB_OBSERVER_LIST(X)                                                                       \
    X(none)                                                                                        \
    X(proc_poller)                                                                                 \
    X(diag_poller)                                                                                 \
    X(iter_poller)                                                                                 \
    X(ebpf_ringbuf)                                                                                \
    X(ebpf_ringbuf_batched)
