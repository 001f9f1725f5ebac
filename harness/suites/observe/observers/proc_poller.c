/*
 * proc_poller — the seed's poller: once a second, the text of /proc/net/tcp and tcp6, then the
 * /proc/<pid>/fd walk that maps socket inodes to processes (poll.c, tables.c).
 */
#define _GNU_SOURCE
#include "suites/observe/observers/poll.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int table(pkb_poller *p, pkb_row_fn fn, void *ctx, char *why, size_t cap)
{
    (void)p;
    return pkb__table_proc(fn, ctx, why, cap);
}

static int owners(pkb_poller *p, pkb_obsmap *map, char *why, size_t cap)
{
    (void)p;
    return pkb__fdwalk(map, why, cap);
}

static int probe(const pkb_obs_options *o, char *why, size_t cap)
{
    (void)o;
    int fd = open("/proc/thread-self/net/tcp", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, cap, "cannot read /proc/thread-self/net/tcp: %s", strerror(errno));
        return -errno;
    }
    close(fd);
    return 0;
}

static int setup(const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    (void)why;
    (void)cap;
    pkb_poller *p = calloc(1, sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    *p = (pkb_poller){.table = table, .owners_of = owners, .poll_ms = o->poll_ms};
    *state = p;
    return 0;
}

static void report(void *state, pkb_obs_view *v)
{
    (void)state;
    v->has = PKB_OBS_HAS_POLLS;
    snprintf(v->hooks, sizeof v->hooks, "/proc/net/tcp{,6} text, /proc/*/fd readlink walk");
}

static void release(void *state)
{
    if (state != NULL)
        pkb__poller_free(state);
    free(state);
}

const pkb_observer pkb_observer_proc_poller = {
    .name = "proc_poller",
    .description = "every second: /proc/net/tcp{,6} text, then the /proc/*/fd inode -> pid walk",
    .probe = probe,
    .setup = setup,
    .run = pkb__poller_run,
    .final = pkb__poller_final,
    .report = report,
    .free = release,
};
