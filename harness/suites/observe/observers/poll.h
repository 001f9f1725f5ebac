/*
 * poll — what the three pollers share: the once-a-period loop (poll.c) that joins the socket
 * tables they read and the inode -> process walks that attribute them (tables.h).
 * A poller is a table source plus an owner source; proc_poller, diag_poller and iter_poller
 * differ only in those two (their variant), and each is one PKB_OBSERVER_OF(pkb__poller, ...).
 */
#ifndef PKB_OBSERVE_POLL_H
#define PKB_OBSERVE_POLL_H

#include "suites/observe/observer.h"
#include "suites/observe/observers/tables.h"

#include <stdbool.h>

/* What a poller reads (its pkb_observer.variant): its socket table and its owner walk. */
#define PKB_POLL_DIAG 1u /* the table from NETLINK_SOCK_DIAG; else /proc/net/tcp{,6} */
#define PKB_POLL_ITER 2u /* the owners from a bpf_iter over task_file; else /proc/<pid>/fd */

/* The pollers' steps (observer.h's PKB_OBSERVER_OF(pkb__poller, ...)). run looks every poll_ms
 * from now until `until` (the first look at once); final takes the last look. Each look reads
 * the table, then the owners, and notes every row with an inode in view->seen (with its owner
 * when the walk found one); the final look also fills view->open with the ESTABLISHED rows. */
PKB_OBSERVER_FAMILY(pkb__poller);

#endif /* PKB_OBSERVE_POLL_H */
