/*
 * event — what the observe suite's BPF programs (observe.bpf.c) hand to user space, shared by
 * both sides: the ring buffer's record, the per-CPU counters and the socket iterator's record.
 * Only fixed-width kernel types (__u8 ... __u64), which vmlinux.h defines on the BPF side and
 * <linux/types.h> on ours.
 */
#ifndef PKB_OBSERVE_EVENT_H
#define PKB_OBSERVE_EVENT_H

/* What an event reports. */
enum pkb_obs_event_kind {
    PKB_OBS_EV_STATE = 1, /* inet_sock_set_state: oldstate -> newstate */
    PKB_OBS_EV_CONNECT,   /* tcp_connect, in the connecting process */
    PKB_OBS_EV_ACCEPT,    /* accept returned this socket to the process */
};

/* One ring-buffer record (24 bytes; the ring adds an 8-byte header). `sk` is the kernel's
 * struct sock address: it identifies a socket while it lives and is joined on by user space
 * (a lifecycle runs from the transition out of CLOSE to the one into CLOSE). `inode` is the
 * socket's inode while a file holds it (0 before accept and after close): the key the observers
 * report. `pid` is meaningful only when `process` is set: state changes run in softirq too, where
 * the current task is whoever was interrupted. */
struct pkb_obs_event {
    __u64 sk;
    __u64 inode;
    __u32 pid; /* the thread group (process) id */
    __u8 kind;
    __u8 oldstate;
    __u8 newstate;
    __u8 process; /* the hook runs in the context of the process that owns the socket */
};

/* Per-CPU counters (a BPF_MAP_TYPE_PERCPU_ARRAY indexed by these). */
enum pkb_obs_counter {
    PKB_OBS_CNT_SUBMITTED = 0, /* records submitted to the ring */
    PKB_OBS_CNT_DROPPED,       /* bpf_ringbuf_reserve failed: the ring was full */
    PKB_OBS_CNT_MAX,
};

/* One record of the iter/task_file program: a socket a process holds open. */
struct pkb_obs_sockfile {
    __u64 inode;
    __u32 pid;
    __u32 fd;
};

#endif /* PKB_OBSERVE_EVENT_H */
