/*
 * iter_poller — the diag poller with its owner walk done in the kernel: a bpf_iter over
 * task_file (bpf/observe.bpf.c's iter_sockfiles) emits (inode, pid) for every socket file of
 * every process in one read, instead of a readlink per descriptor through /proc.
 */
#include "suites/observe/observers/poll.h"

const pkb_observer pkb_observer_iter_poller =
    PKB_OBSERVER_OF(pkb__poller,
                    "iter_poller",
                    PKB_POLL_DIAG | PKB_POLL_ITER,
                    "every second: a NETLINK_SOCK_DIAG dump, then a bpf_iter task_file walk for "
                    "the owners");
