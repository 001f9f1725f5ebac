/*
 * iter_poller — the diag poller with its owner walk done in the kernel: a bpf_iter over
 * task_file (bpf/observe.bpf.c's iter_sockfiles) emits (inode, pid) for every socket file of
 * every process in one read, instead of a readlink per descriptor through /proc.
 */
#define _GNU_SOURCE
#include "suites/observe/observers/bpf.h"
#include "suites/observe/observers/poll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct iter {
    pkb_poller base; /* first: the poll loop sees a pkb_poller */
    int fd;
    pkb_bpf *bpf;
};

static int table(pkb_poller *p, pkb_row_fn fn, void *ctx, char *why, size_t cap)
{
    return pkb__table_diag(((struct iter *)p)->fd, fn, ctx, why, cap);
}

static int owners(pkb_poller *p, pkb_obsmap *map, char *why, size_t cap)
{
    return pkb__bpf_iter(((struct iter *)p)->bpf, map, why, cap);
}

static int probe(const pkb_obs_options *o, char *why, size_t cap)
{
    int fd;
    int rc = pkb__table_diag_open(&fd, why, cap);
    if (rc != 0)
        return rc;
    close(fd);
    return pkb__bpf_probe(o, PKB_BPF_ITER, why, cap);
}

static void release(void *state);

static int setup(const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    struct iter *it = calloc(1, sizeof *it);
    if (it == NULL)
        return -ENOMEM;
    it->base = (pkb_poller){.table = table, .owners_of = owners, .poll_ms = o->poll_ms};
    it->fd = -1;
    int rc = pkb__table_diag_open(&it->fd, why, cap);
    if (rc == 0)
        rc = pkb__bpf_open(o, PKB_BPF_ITER, false, NULL, NULL, &it->bpf, why, cap);
    if (rc != 0) {
        release(it);
        return rc;
    }
    *state = it;
    return 0;
}

static void report(void *state, pkb_obs_view *v)
{
    struct iter *it = state;
    v->has = PKB_OBS_HAS_POLLS | PKB_OBS_HAS_BPF;
    pkb__bpf_stats(it->bpf, v);
    snprintf(v->hooks, sizeof v->hooks, "NETLINK_SOCK_DIAG inet_diag dump, %s",
             pkb__bpf_hooks(it->bpf));
}

static void release(void *state)
{
    struct iter *it = state;
    if (it == NULL)
        return;
    pkb__poller_free(&it->base);
    pkb__bpf_close(it->bpf);
    if (it->fd >= 0)
        close(it->fd);
    free(it);
}

const pkb_observer pkb_observer_iter_poller = {
    .name = "iter_poller",
    .description = "every second: a NETLINK_SOCK_DIAG dump, then a bpf_iter task_file walk for "
                   "the owners",
    .probe = probe,
    .setup = setup,
    .run = pkb__poller_run,
    .final = pkb__poller_final,
    .report = report,
    .free = release,
};
