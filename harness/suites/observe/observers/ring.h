/*
 * ring — what ebpf_ringbuf and ebpf_ringbuf_batched share (ring.c): the BPF programs loaded
 * with their ring buffer, and the user-space join that turns the event stream into sockets and
 * owners. The two observers differ only in how they wait: woken per event, or on a timer.
 */
#ifndef PKB_OBSERVE_RING_H
#define PKB_OBSERVE_RING_H

#include "suites/observe/observer.h"

#include <stdbool.h>

#include <linux/types.h>

#include "suites/observe/bpf/event.h"

/* The join, one record at a time: `live` maps kernel socket addresses to their current
 * lifecycle; every inode, with its owner once a process-context event names one, goes into
 * view->seen. Returns 0 or -ENOMEM. (What the observers call for every record; the tests feed
 * it records of their own.) */
int pkb__ring_join(pkb_obsmap *live, pkb_obs_view *v, const struct pkb_obs_event *e);

int pkb__ring_probe(const pkb_obs_options *o, char *why, size_t cap);
/* Loads and attaches (no_wakeup: records submitted with BPF_RB_NO_WAKEUP). */
int pkb__ring_setup(const pkb_obs_options *o, bool no_wakeup, void **state, char *why, size_t cap);
/* Waits up to timeout_ms for records and consumes them (timeout_ms < 0: consumes what is there
 * without waiting); returns how many, or a negative errno. */
int pkb__ring_take(void *state, pkb_obs_view *v, int timeout_ms, char *why, size_t cap);
/* Consumes what is left; view->open gets every socket whose last state is ESTABLISHED. */
int pkb__ring_final(void *state, pkb_obs_view *v, char *why, size_t cap);
void pkb__ring_report(void *state, pkb_obs_view *v);
void pkb__ring_free(void *state);

#endif /* PKB_OBSERVE_RING_H */
