/*
 * tables — what the pollers read (tables.c): the kernel's TCP socket tables, from /proc or
 * NETLINK_SOCK_DIAG, and the /proc/<pid>/fd walk that names each socket's owner.
 */
#ifndef PKB_OBSERVE_TABLES_H
#define PKB_OBSERVE_TABLES_H

#include "suites/observe/observer.h"

#include <stddef.h>
#include <stdint.h>

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

#endif /* PKB_OBSERVE_TABLES_H */
