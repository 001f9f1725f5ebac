/*
 * poll — what the three pollers share (poll.c, tables.c): the socket tables they read, the
 * inode -> process walks that attribute them, and the once-a-period loop that joins the two.
 * A poller is a table source plus an owner source; proc_poller, diag_poller and iter_poller
 * differ only in those two functions.
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

typedef struct pkb_poller pkb_poller;
struct pkb_poller {
    int (*table)(pkb_poller *p, pkb_row_fn fn, void *ctx, char *why, size_t cap);
    int (*owners_of)(pkb_poller *p, pkb_obsmap *owners, char *why, size_t cap);
    int poll_ms;
    pkb_obsmap owners;    /* this look's inode -> pid */
    struct pkb_row *rows; /* this look's table */
    size_t nrows, caprows;
};

/* Looks every poll_ms from now until `until` (the first look at once); the final look. Each
 * look reads the table, then the owners, and notes every row with an inode in view->seen (with
 * its owner when the walk found one); the final look also fills view->open with the
 * ESTABLISHED rows. */
/* Both take an observer's state whose first member is its pkb_poller, so that a polling
 * observer names them as its run and final steps. */
int pkb__poller_run(void *state, int64_t until, pkb_obs_view *v, char *why, size_t cap);
int pkb__poller_final(void *state, pkb_obs_view *v, char *why, size_t cap);
void pkb__poller_free(pkb_poller *p);

#endif /* PKB_OBSERVE_POLL_H */
