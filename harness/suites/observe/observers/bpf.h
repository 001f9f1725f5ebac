/*
 * bpf — the eBPF observers' one door to the kernel (bpf.linux.c; bpf.absent.c when the BPF
 * programs could not be built here): probing which variant of each hook this kernel accepts,
 * loading and attaching the chosen ones with run-time statistics on, the ring buffer, the
 * socket iterator, and the counters. Nothing outside this module includes libbpf, so the suite
 * builds without it and the eBPF observers SKIP with the reason.
 */
#ifndef PKB_OBSERVE_BPF_H
#define PKB_OBSERVE_BPF_H

#include "suites/observe/observer.h"

#include <jansson.h>
#include <linux/types.h>
#include <stdbool.h>

#include "suites/observe/bpf/event.h"

typedef struct pkb_bpf pkb_bpf;

/* What an observer needs loaded. */
enum pkb_bpf_need {
    PKB_BPF_RING = 1, /* the state, connect and accept hooks feeding the ring buffer */
    PKB_BPF_ITER = 2, /* the iter/task_file socket walk */
};

/* Whether `need` can be loaded and attached here: tries every variant of every hook in order
 * (fentry/fexit, tp_btf, raw_tp, classic tracepoint), once per process and BTF path, keeping the
 * first that works and every refusal before it. Returns 0, or a negative errno with the one-line
 * reason (euid, BTF, every refusal) in why. */
int pkb__bpf_probe(const pkb_obs_options *o, int need, char *why, size_t cap);

/* What the probes found, for the results file: {"built": bool, "reason": ..., "btf": path,
 * "hooks": {"state": {"chosen": "tp_btf/...", "refused": [{"variant", "error"}...]}, ...}}.
 * New reference; NULL when out of memory. */
json_t *pkb__bpf_gates(void);

/* Called for every ring record, in ring order. */
typedef void (*pkb_bpf_event_fn)(void *ctx, const struct pkb_obs_event *e);

/* What an observer asks pkb__bpf_open for. */
typedef struct pkb_bpf_request {
    int need;                  /* pkb_bpf_need bits */
    bool no_wakeup;            /* ring records submitted with BPF_RB_NO_WAKEUP */
    pkb_bpf_event_fn on_event; /* called with ctx for every ring record (PKB_BPF_RING) */
    void *ctx;
} pkb_bpf_request;

/* Loads and attaches what req->need names (after a successful probe), filtering on
 * o->netns_inode, the ring sized o->ring_bytes; BPF_STATS_RUN_TIME stays enabled until
 * pkb__bpf_close. Returns 0 or a negative errno with why. */
int pkb__bpf_open(
    const pkb_obs_options *o, const pkb_bpf_request *req, pkb_bpf **out, char *why, size_t cap);

/* Waits up to timeout_ms for records and consumes them; returns how many, or a negative errno
 * (-EINTR when a signal arrived). */
int pkb__bpf_ring_poll(pkb_bpf *b, int timeout_ms);
/* Consumes what is in the ring without waiting; returns how many, or a negative errno. */
int pkb__bpf_ring_consume(pkb_bpf *b);

/* One walk of the socket iterator: every socket file of every process, inode -> pid, into
 * owners (cleared first). Returns 0 or a negative errno with why. */
int pkb__bpf_iter(pkb_bpf *b, pkb_obsmap *owners, char *why, size_t cap);

/* The per-CPU counters, summed; the loaded programs' run time and count, in total and per
 * program (into v's bpf_run_ns, bpf_run_cnt, progs); the hooks attached (e.g.
 * "tp_btf/inet_sock_set_state, ..."). */
void pkb__bpf_counters(pkb_bpf *b, uint64_t *submitted, uint64_t *dropped);
void pkb__bpf_stats(pkb_bpf *b, pkb_obs_view *v);
const char *pkb__bpf_hooks(const pkb_bpf *b);

void pkb__bpf_close(pkb_bpf *b);

#endif /* PKB_OBSERVE_BPF_H */
