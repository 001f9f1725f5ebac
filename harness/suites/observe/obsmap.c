/*
 * obsmap — a 64-bit key to entry hash map (obsmap.h): open addressing, linear probing, grown at
 * half full, backward-shift deletion so lookups never walk tombstones. The keys are socket
 * inodes (sequential numbers) and kernel addresses (aligned), so they are mixed before use.
 */
#include "suites/observe/obsmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

pkb_obs_entry *pkb_obsmap_get(const pkb_obsmap *m, uint64_t key)
{
    if (m->cap == 0 || key == 0)
        return NULL;
    for (size_t i = slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return &m->vals[i];
        if (m->keys[i] == 0)
            return NULL;
    }
}

static int grow(pkb_obsmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 256;
    uint64_t *keys = calloc(cap, sizeof *keys);
    pkb_obs_entry *vals = calloc(cap, sizeof *vals);
    if (keys == NULL || vals == NULL) {
        free(keys);
        free(vals);
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == 0)
            continue;
        size_t j = slot(m->keys[i], cap);
        while (keys[j] != 0)
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

pkb_obs_entry *pkb_obsmap_put(pkb_obsmap *m, uint64_t key)
{
    if (key == 0)
        return NULL;
    pkb_obs_entry *e = pkb_obsmap_get(m, key);
    if (e != NULL)
        return e;
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
        return NULL;
    size_t i = slot(key, m->cap);
    while (m->keys[i] != 0)
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    memset(&m->vals[i], 0, sizeof m->vals[i]);
    m->n++;
    return &m->vals[i];
}

void pkb_obsmap_del(pkb_obsmap *m, uint64_t key)
{
    pkb_obs_entry *e = pkb_obsmap_get(m, key);
    if (e == NULL)
        return;
    size_t mask = m->cap - 1, hole = (size_t)(e - m->vals);
    m->keys[hole] = 0;
    m->n--;
    /* Shift back every later entry of the run whose home slot does not lie between the hole
     * and itself, so that no lookup meets an empty slot before its key. */
    for (size_t i = (hole + 1) & mask; m->keys[i] != 0; i = (i + 1) & mask) {
        size_t home = slot(m->keys[i], m->cap);
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            m->keys[hole] = m->keys[i];
            m->vals[hole] = m->vals[i];
            m->keys[i] = 0;
            hole = i;
        }
    }
}

void pkb_obsmap_clear(pkb_obsmap *m)
{
    if (m->cap > 0)
        memset(m->keys, 0, m->cap * sizeof *m->keys);
    m->n = 0;
}

void pkb_obsmap_free(pkb_obsmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

int pkb_obsmap_note(pkb_obsmap *m, uint64_t inode, uint32_t pid)
{
    if (inode == 0)
        return 0;
    pkb_obs_entry *e = pkb_obsmap_put(m, inode);
    if (e == NULL)
        return -ENOMEM;
    e->inode = inode;
    if (e->pid == 0)
        e->pid = pid;
    return 0;
}
