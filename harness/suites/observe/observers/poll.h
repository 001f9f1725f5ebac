/*
 * poll — what the three pollers share (poll.c, tables.c): the socket tables they read, the
 * inode -> process walks that attribute them, and the once-a-period loop that joins the two.
 * A poller is a table source plus an owner source; proc_poller, diag_poller and iter_poller
 * differ only in those two (their variant), and each is one PKB_OBSERVER_OF(pkb__poller, ...).
 */
#ifndef PKB_OBSERVE_POLL_H
#define PKB_OBSERVE_POLL_H

#include "suites/observe/observer.h"

#include <stdbool.h>

/* The kernel's TCP state numbers (include/net/tcp_states.h), as the tables report them. */
#define PKB_TCP_ESTABLISHED 1
#define PKB_TCP_TIME_WAIT   6
#define PKB_TCP_CLOSE       7

/* One row of a socket table: its state and its inode (0 when no file holds the socket, e.g.
 * TIME_WAIT). Returns 0 to go on, or a negative errno to stop. */
typedef int (*pkb_row_fn)(void *ctx, unsigned state, uint64_t inode);

/* /proc/thread-self/net/tcp and tcp6, the text, parsed row by row (the calling thread's
 * network namespace). Returns 0 or a negative errno with why. */
int pkb__table_proc(pkb_row_fn fn, void *ctx, char *why, size_t cap);
/* A NETLINK_SOCK_DIAG socket in the calling thread's network namespace, into *fd. */
int pkb__table_diag_open(int *fd, char *why, size_t cap);
/* One inet_diag dump of TCP sockets in every state, AF_INET then AF_INET6. */
int pkb__table_diag(int fd, pkb_row_fn fn, void *ctx, char *why, size_t cap);
/* Every /proc/<pid>/fd/<n> that is a socket: inode -> pid, into owners (cleared first).
 * Processes that vanish or deny access are skipped. */
int pkb__fdwalk(pkb_obsmap *owners, char *why, size_t cap);

/* Probing for the /proc table: /proc/thread-self/net/tcp can be read. */
int pkb__table_proc_probe(char *why, size_t cap);

/* What a poller reads (its pkb_observer.variant): its socket table and its owner walk. */
#define PKB_POLL_DIAG 1u /* the table from NETLINK_SOCK_DIAG; else /proc/net/tcp{,6} */
#define PKB_POLL_ITER 2u /* the owners from a bpf_iter over task_file; else /proc/<pid>/fd */

/* The pollers' steps (observer.h's PKB_OBSERVER_OF(pkb__poller, ...)). run looks every poll_ms
 * from now until `until` (the first look at once); final takes the last look. Each look reads
 * the table, then the owners, and notes every row with an inode in view->seen (with its owner
 * when the walk found one); the final look also fills view->open with the ESTABLISHED rows. */
PKB_OBSERVER_FAMILY(pkb__poller);

#endif /* PKB_OBSERVE_POLL_H */
