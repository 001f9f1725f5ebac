/*
 * obsmap — the hash map every observer and the cell's truth join use: a 64-bit key (a socket
 * inode, or a kernel socket address for the eBPF observers' lifecycles) to a small entry. Open
 * addressing with linear probing and backward-shift deletion; key 0 is never stored (no socket
 * has inode 0 or address 0), so an empty slot is a zero key.
 */
#ifndef PKB_OBSERVE_OBSMAP_H
#define PKB_OBSERVE_OBSMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct pkb_obs_entry {
    uint64_t inode;  /* the socket's inode; 0: not known (yet) */
    uint32_t pid;    /* its owner (a process id); 0: not known */
    uint32_t events; /* lifecycles: events so far */
    uint8_t state;   /* lifecycles: the last TCP state (the kernel's TCP_* numbering) */
} pkb_obs_entry;

typedef struct pkb_obsmap {
    uint64_t *keys;
    pkb_obs_entry *vals;
    size_t cap; /* a power of two, or 0 */
    size_t n;
} pkb_obsmap;

/* The entry of `key`, or NULL. */
pkb_obs_entry *pkb_obsmap_get(const pkb_obsmap *m, uint64_t key);
/* The entry of `key`, inserted zeroed when absent; NULL when key is 0 or out of memory. */
pkb_obs_entry *pkb_obsmap_put(pkb_obsmap *m, uint64_t key);
void pkb_obsmap_del(pkb_obsmap *m, uint64_t key);
/* Empties the map, keeping its memory. */
void pkb_obsmap_clear(pkb_obsmap *m);
void pkb_obsmap_free(pkb_obsmap *m);

/* Records that socket `inode` was seen, owned by `pid` (0: owner unknown). A known owner is
 * never replaced by "unknown", and the first known owner is kept. Returns 0 or -ENOMEM; inode 0
 * is ignored. */
int pkb_obsmap_note(pkb_obsmap *m, uint64_t inode, uint32_t pid);

/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->keys[i] != 0) ... m->vals[i] ... */

#endif /* PKB_OBSERVE_OBSMAP_H */
