/*
 * poll — the pollers' loop (poll.h): at a fixed period, read the socket table, then walk the
 * owners, then join the two on the inode. The table is read first and kept, so a look costs one
 * table read and one owner walk however the join goes; a socket opened between the two reads is
 * seen at the next look, one closed between them is seen without an owner.
 */
#define _GNU_SOURCE
#include "suites/observe/observers/poll.h"

#include <errno.h>
#include <stdlib.h>

struct pkb_row {
    uint64_t inode;
    unsigned state;
};

static int keep_row(void *ctx, unsigned state, uint64_t inode)
{
    pkb_poller *p = ctx;
    if (p->nrows == p->caprows) {
        size_t cap = p->caprows ? p->caprows * 2 : 1024;
        struct pkb_row *rows = realloc(p->rows, cap * sizeof *rows);
        if (rows == NULL)
            return -ENOMEM;
        p->rows = rows;
        p->caprows = cap;
    }
    p->rows[p->nrows++] = (struct pkb_row){inode, state};
    return 0;
}

static int look(pkb_poller *p, pkb_obs_view *v, bool final, char *why, size_t cap)
{
    p->nrows = 0;
    int rc = p->table(p, keep_row, p, why, cap);
    if (rc == 0)
        rc = p->owners_of(p, &p->owners, why, cap);
    if (rc != 0)
        return rc;
    uint64_t timewait = 0;
    for (size_t i = 0; i < p->nrows && rc == 0; i++) {
        const struct pkb_row *r = &p->rows[i];
        timewait += r->state == PKB_TCP_TIME_WAIT;
        if (r->inode == 0)
            continue;
        const pkb_obs_entry *owner = pkb_obsmap_get(&p->owners, r->inode);
        uint32_t pid = owner != NULL ? owner->pid : 0;
        rc = pkb_obsmap_note(&v->seen, r->inode, pid);
        if (rc == 0 && final && r->state == PKB_TCP_ESTABLISHED)
            rc = pkb_obsmap_note(&v->open, r->inode, pid);
    }
    v->polls++;
    v->rows += p->nrows;
    if (p->nrows > v->rows_max)
        v->rows_max = p->nrows;
    if (timewait > v->timewait_max)
        v->timewait_max = timewait;
    return rc;
}

int pkb__poller_run(void *state, int64_t until, pkb_obs_view *v, char *why, size_t cap)
{
    pkb_poller *p = state;
    for (int64_t t = pkb_obs_now_ns(); t < until; t += (int64_t)p->poll_ms * 1000000) {
        int rc = pkb_obs_sleep_until(t);
        if (rc == 0)
            rc = look(p, v, false, why, cap);
        if (rc != 0)
            return rc;
    }
    return pkb_obs_sleep_until(until);
}

int pkb__poller_final(void *state, pkb_obs_view *v, char *why, size_t cap)
{
    return look(state, v, true, why, cap);
}

void pkb__poller_free(pkb_poller *p)
{
    pkb_obsmap_free(&p->owners);
    free(p->rows);
    p->rows = NULL;
    p->nrows = p->caprows = 0;
}
