/*
 * ring — what ebpf_ringbuf and ebpf_ringbuf_batched share (ring.c): the BPF programs loaded
 * with their ring buffer, and the user-space join that turns the event stream into sockets and
 * owners. The two observers differ only in how they wait: woken per event, or on a timer (their
 * variant), and each is one PKB_OBSERVER_OF(pkb__ring, ...).
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

/* How a ring reader waits (its pkb_observer.variant): 0, blocked in epoll and woken whenever it
 * has caught up; PKB_RING_BATCHED, the records submitted with BPF_RB_NO_WAKEUP and the ring
 * consumed every batch_ms on the reader's own timer. */
#define PKB_RING_BATCHED 1u

/* The ring readers' steps (observer.h's PKB_OBSERVER_OF(pkb__ring, ...)): setup loads and
 * attaches the programs; final consumes what is left and gives view->open every socket whose
 * last state is ESTABLISHED. */
PKB_OBSERVER_FAMILY(pkb__ring);

#endif /* PKB_OBSERVE_RING_H */
