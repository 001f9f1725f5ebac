/*
 * observer — the contract every observer contender implements (one file each in observers/,
 * one line in observers/registry.h), in the spirit of the spawn contenders: the suite only
 * orchestrates and records. Observers that work alike share their steps (a family: the pollers'
 * poll.c, the ring readers' ring.c) and differ by a variant.
 *
 *   probe   can it run on this host? 0, or a negative errno with a one-line SKIP reason
 *   setup   everything before watching (opening, loading, attaching); its CPU is reported apart
 *   run     watch until a CLOCK_MONOTONIC deadline
 *   final   the last look, once the workload is frozen: what it believes is open right now
 *   report  its counters (events, drops, polls, time inside BPF programs, the hooks it used)
 *   free    tear down
 *
 * What an observer says about a socket is keyed by the socket's inode, never by its port (the
 * loopback reuses client ports within a run), with the owning process when it knows it. The
 * cell (cell.h) joins that with the workload's own ledger of inodes.
 */
#ifndef PKB_OBSERVE_OBSERVER_H
#define PKB_OBSERVE_OBSERVER_H

#include "suites/observe/obsmap.h"

#include <stddef.h>
#include <stdint.h>

/* What an observer is told; zero fields mean the defaults (in brackets). */
typedef struct pkb_obs_options {
    uint32_t netns_inode; /* the cell's network namespace (the BPF programs' filter) */
    int poll_ms;          /* the pollers' period [1000] */
    int batch_ms;         /* ebpf_ringbuf_batched's consume period [100] */
    size_t ring_bytes;    /* the BPF ring buffer, a power of two ≥ 4096 [1 MiB] */
    const char *btf_path; /* the kernel's BTF [/sys/kernel/btf/vmlinux] */
} pkb_obs_options;

#define PKB_OBS_POLL_MS    1000
#define PKB_OBS_BATCH_MS   100
#define PKB_OBS_RING_BYTES ((size_t)1 << 20)
#define PKB_OBS_BTF_PATH   "/sys/kernel/btf/vmlinux"

/* Which counters of a view an observer keeps (pkb_obs_view.has). */
#define PKB_OBS_HAS_POLLS 1u /* polls, rows, rows_max, timewait_max */
#define PKB_OBS_HAS_RING  2u /* events, submitted, drops, wakeups */
#define PKB_OBS_HAS_BPF   4u /* bpf_run_ns, bpf_run_cnt, progs */

/* What an observer saw, filled by run, final and report. */
typedef struct pkb_obs_view {
    unsigned has;      /* PKB_OBS_HAS_*: set by report */
    pkb_obsmap seen;   /* every socket it saw during the run: inode -> owner (0: unknown) */
    pkb_obsmap open;   /* at the last look, the sockets it believes ESTABLISHED: inode -> owner */
    uint64_t polls;    /* pollers: looks taken (final's included) */
    uint64_t rows;     /* pollers: socket-table rows read, summed over the looks */
    uint64_t rows_max; /* pollers: the largest table */
    uint64_t timewait_max; /* pollers: the most TIME_WAIT rows in one look (their inode is 0) */
    uint64_t events;       /* eBPF: records consumed from the ring */
    uint64_t submitted;    /* eBPF: records the programs submitted (per-CPU counter) */
    uint64_t drops;        /* eBPF: reservations that failed, the ring being full */
    uint64_t wakeups;      /* eBPF: times the reader was woken (or, batched, consumed) with data */
    uint64_t bpf_run_ns;   /* time inside its BPF programs (BPF_STATS_RUN_TIME); UINT64_MAX:
                              unknown (the statistics could not be enabled) */
    uint64_t bpf_run_cnt;  /* their invocations */
    struct pkb_obs_prog {
        char name[32]; /* a program of bpf/observe.bpf.c */
        uint64_t run_cnt, run_ns;
    } progs[4]; /* the same per program */
    int nprogs;
    char hooks[320]; /* what it used, e.g. "tp_btf/inet_sock_set_state, tp/syscalls/..." */
} pkb_obs_view;

void pkb_obs_view_free(pkb_obs_view *v);

/* Each function gets back the state its setup made (the observer's own, opaque here). */
typedef struct pkb_observer pkb_observer;
struct pkb_observer {
    const char *name;
    const char *description; /* one line */
    unsigned variant;        /* what its family's steps do differently for it (poll.h, ring.h) */
    int (*probe)(const pkb_observer *self, const pkb_obs_options *o, char *why, size_t cap);
    int (*setup)(
        const pkb_observer *self, const pkb_obs_options *o, void **state, char *why, size_t cap);
    /* Returns 0, -EINTR when pkbench was interrupted, or another negative errno (with why). */
    int (*run)(void *state, int64_t until_ns, pkb_obs_view *view, char *why, size_t cap);
    int (*final)(void *state, pkb_obs_view *view, char *why, size_t cap);
    void (*report)(void *state, pkb_obs_view *view);
    void (*free)(void *state);
};

/* Declares a family's steps, with the signatures of the contract's: `family`_probe, _setup,
 * _run, _final, _report and _free. */
#define PKB_OBSERVER_FAMILY(family)                                                                \
    int family##_probe(const pkb_observer *self, const pkb_obs_options *o, char *why, size_t cap); \
    int family##_setup(const pkb_observer *self, const pkb_obs_options *o, void **state,           \
                       char *why, size_t cap);                                                     \
    int family##_run(void *state, int64_t until_ns, pkb_obs_view *view, char *why, size_t cap);    \
    int family##_final(void *state, pkb_obs_view *view, char *why, size_t cap);                    \
    void family##_report(void *state, pkb_obs_view *view);                                         \
    void family##_free(void *state)

/* An observer whose steps are a family's: `family`_probe, _setup, _run, _final, _report and
 * _free (poll.h's pkb__poller_*, ring.h's pkb__ring_*), told apart by `variant`. What an
 * observer's file defines: const pkb_observer pkb_observer_<name> = PKB_OBSERVER_OF(...). */
#define PKB_OBSERVER_OF(family, name_, variant_, description_)                                     \
    {                                                                                              \
        .name = name_, .description = description_, .variant = variant_, .probe = family##_probe,  \
        .setup = family##_setup, .run = family##_run, .final = family##_final,                     \
        .report = family##_report, .free = family##_free,                                          \
    }

/* The registry (observers/registry.h), in the order of tables and legends: a line X(name)
 * declares the observer's definition and makes it an entry of pkb_observers (observer.c). */
extern const pkb_observer *const pkb_observers[];
extern const size_t pkb_observer_count;
#define PKB_OBSERVER_DECLARE(name) extern const pkb_observer pkb_observer_##name;
#define PKB_OBSERVER_ENTRY(name)   &pkb_observer_##name,
const pkb_observer *pkb_observer_find(const char *name);

/* CLOCK_MONOTONIC in ns; sleeps until a CLOCK_MONOTONIC time, returning early (-EINTR) when
 * pkbench is interrupted. */
int64_t pkb_obs_now_ns(void);
int pkb_obs_sleep_until(int64_t t_ns);

/* The options with defaults filled in. */
pkb_obs_options pkb_obs_defaults(const pkb_obs_options *o);

#endif /* PKB_OBSERVE_OBSERVER_H */
