/*
 * diag_poller — the same once-a-second poller with the socket table from NETLINK_SOCK_DIAG
 * (inet_diag dumps, binary, this namespace only) instead of /proc/net/tcp; the owners still
 * come from the /proc/<pid>/fd walk (poll.c, tables.c).
 */
#define _GNU_SOURCE
#include "suites/observe/observers/poll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct diag {
    pkb_poller base; /* first: the poll loop sees a pkb_poller */
    int fd;
};

static int table(pkb_poller *p, pkb_row_fn fn, void *ctx, char *why, size_t cap)
{
    return pkb__table_diag(((struct diag *)p)->fd, fn, ctx, why, cap);
}

static int owners(pkb_poller *p, pkb_obsmap *map, char *why, size_t cap)
{
    (void)p;
    return pkb__fdwalk(map, why, cap);
}

static int probe(const pkb_obs_options *o, char *why, size_t cap)
{
    (void)o;
    int fd;
    int rc = pkb__table_diag_open(&fd, why, cap);
    if (rc == 0)
        close(fd);
    return rc;
}

static int setup(const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    struct diag *d = calloc(1, sizeof *d);
    if (d == NULL)
        return -ENOMEM;
    d->base = (pkb_poller){.table = table, .owners_of = owners, .poll_ms = o->poll_ms};
    int rc = pkb__table_diag_open(&d->fd, why, cap);
    if (rc != 0) {
        free(d);
        return rc;
    }
    *state = d;
    return 0;
}

static void report(void *state, pkb_obs_view *v)
{
    (void)state;
    v->has = PKB_OBS_HAS_POLLS;
    snprintf(v->hooks, sizeof v->hooks,
             "NETLINK_SOCK_DIAG inet_diag dump, /proc/*/fd readlink walk");
}

static void release(void *state)
{
    struct diag *d = state;
    if (d == NULL)
        return;
    pkb__poller_free(&d->base);
    close(d->fd);
    free(d);
}

const pkb_observer pkb_observer_diag_poller = {
    .name = "diag_poller",
    .description = "every second: a NETLINK_SOCK_DIAG dump, then the /proc/*/fd inode -> pid walk",
    .probe = probe,
    .setup = setup,
    .run = pkb__poller_run,
    .final = pkb__poller_final,
    .report = report,
    .free = release,
};
