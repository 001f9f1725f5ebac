/*
 * poll — the pollers' loop (poll.h): at a fixed period, read the socket table, then walk the
 * owners, then join the two on the inode. The table is read first and kept, so a look costs one
 * table read and one owner walk however the join goes; a socket opened between the two reads is
 * seen at the next look, one closed between them is seen without an owner. The three pollers are
 * this one loop over the sources their variant names (PKB_POLL_*), set up, reported and freed
 * here alike.
 */
#define _GNU_SOURCE
#include "suites/observe/observers/poll.h"

#include "common/buf.h"
#include "suites/observe/observers/bpf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct pkb_row {
    uint64_t inode;
    unsigned state;
};

typedef struct pkb_poller {
    unsigned variant; /* PKB_POLL_* */
    int poll_ms;
    int diag_fd;          /* PKB_POLL_DIAG: the NETLINK_SOCK_DIAG socket; else -1 */
    pkb_bpf *bpf;         /* PKB_POLL_ITER: the iterator; else NULL */
    pkb_obsmap owners;    /* this look's inode -> pid */
    struct pkb_row *rows; /* this look's table */
    size_t nrows, caprows;
} pkb_poller;

static int keep_row(void *ctx, unsigned state, uint64_t inode)
{
    pkb_poller *p = ctx;
    struct pkb_row *rows = pkb_grow(p->rows, &p->caprows, p->nrows + 1, sizeof *rows, 1024);
    if (rows == NULL)
        return -ENOMEM;
    p->rows = rows;
    p->rows[p->nrows++] = (struct pkb_row){inode, state};
    return 0;
}

/* This look's table into p->rows, then its owners into p->owners. */
static int read_sources(pkb_poller *p, char *why, size_t cap)
{
    p->nrows = 0;
    int rc = p->variant & PKB_POLL_DIAG ? pkb__table_diag(p->diag_fd, keep_row, p, why, cap)
                                        : pkb__table_proc(keep_row, p, why, cap);
    if (rc != 0)
        return rc;
    return p->variant & PKB_POLL_ITER ? pkb__bpf_iter(p->bpf, &p->owners, why, cap)
                                      : pkb__fdwalk(&p->owners, why, cap);
}

static int look(pkb_poller *p, pkb_obs_view *v, bool final, char *why, size_t cap)
{
    int rc = read_sources(p, why, cap);
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

int pkb__poller_probe(const pkb_observer *self, const pkb_obs_options *o, char *why, size_t cap)
{
    int fd, rc;
    if (self->variant & PKB_POLL_DIAG) {
        rc = pkb__table_diag_open(&fd, why, cap);
        if (rc == 0)
            close(fd);
    } else {
        rc = pkb__table_proc_probe(why, cap);
    }
    if (rc == 0 && (self->variant & PKB_POLL_ITER))
        rc = pkb__bpf_probe(o, PKB_BPF_ITER, why, cap);
    return rc;
}

int pkb__poller_setup(
    const pkb_observer *self, const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    pkb_poller *p = calloc(1, sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    *p = (pkb_poller){.variant = self->variant, .poll_ms = o->poll_ms, .diag_fd = -1};
    int rc = 0;
    if (p->variant & PKB_POLL_DIAG)
        rc = pkb__table_diag_open(&p->diag_fd, why, cap);
    if (rc == 0 && (p->variant & PKB_POLL_ITER))
        rc = pkb__bpf_open(o, &(pkb_bpf_request){.need = PKB_BPF_ITER}, &p->bpf, why, cap);
    if (rc != 0) {
        pkb__poller_free(p);
        return rc;
    }
    *state = p;
    return 0;
}

void pkb__poller_report(void *state, pkb_obs_view *v)
{
    pkb_poller *p = state;
    v->has = PKB_OBS_HAS_POLLS;
    const char *owners = "/proc/*/fd readlink walk";
    if (p->variant & PKB_POLL_ITER) {
        v->has |= PKB_OBS_HAS_BPF;
        pkb__bpf_stats(p->bpf, v);
        owners = pkb__bpf_hooks(p->bpf);
    }
    snprintf(v->hooks, sizeof v->hooks, "%s, %s",
             p->variant & PKB_POLL_DIAG ? "NETLINK_SOCK_DIAG inet_diag dump"
                                        : "/proc/net/tcp{,6} text",
             owners);
}

void pkb__poller_free(void *state)
{
    pkb_poller *p = state;
    if (p == NULL)
        return;
    pkb_obsmap_free(&p->owners);
    free(p->rows);
    pkb__bpf_close(p->bpf);
    if (p->diag_fd >= 0)
        close(p->diag_fd);
    free(p);
}
