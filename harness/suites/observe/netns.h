/*
 * netns — a fresh network namespace per cell, for the calling thread (netns.linux.c): no
 * TIME_WAIT carried over from the cell before, no other traffic in the socket tables, loopback
 * up. As root the thread unshares a new namespace and returns to its own afterwards. Without
 * CAP_SYS_ADMIN the process first enters a user namespace of its own (mapping its uid to 0),
 * where it may create network namespaces; it cannot return to the host's namespace then, which
 * pkbench does not need (it only writes files after the cells).
 */
#ifndef PKB_OBSERVE_NETNS_H
#define PKB_OBSERVE_NETNS_H

#include <stddef.h>
#include <stdint.h>

typedef struct pkb_netns {
    int home;        /* the namespace to return to, or -1 (inside our own user namespace) */
    uint32_t inode;  /* the new namespace's inode: what the BPF programs filter on */
    const char *how; /* "unshare" or "user namespace" */
} pkb_netns;

/* Moves the calling thread into a fresh network namespace with loopback up. Returns 0, or a
 * negative errno with a one-line reason. */
int pkb_netns_enter(pkb_netns *ns, char *why, size_t cap);
/* Returns to the namespace entered from (when possible) and releases what enter took. */
void pkb_netns_leave(pkb_netns *ns);

#endif /* PKB_OBSERVE_NETNS_H */
