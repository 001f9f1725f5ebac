/*
 * observer — the observer registry (observers/registry.h turned into an array) and the small
 * pieces every observer uses: the clock, an interruptible absolute sleep, the defaults.
 */
#define _GNU_SOURCE
#include "suites/observe/observer.h"

#include "run/run.h"
#include "suites/observe/observers/registry.h"

#include <errno.h>
#include <string.h>
#include <time.h>

PKB_OBSERVER_LIST(PKB_OBSERVER_DECLARE)

const pkb_observer *const pkb_observers[] = {PKB_OBSERVER_LIST(PKB_OBSERVER_ENTRY)};
const size_t pkb_observer_count = sizeof pkb_observers / sizeof pkb_observers[0];

const pkb_observer *pkb_observer_find(const char *name)
{
    for (size_t i = 0; name != NULL && i < pkb_observer_count; i++)
        if (strcmp(pkb_observers[i]->name, name) == 0)
            return pkb_observers[i];
    return NULL;
}

int64_t pkb_obs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int pkb_obs_sleep_until(int64_t t)
{
    struct timespec ts = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000};
    for (;;) {
        if (pkb_interrupted)
            return -EINTR;
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        if (rc != EINTR)
            return -rc;
    }
}

pkb_obs_options pkb_obs_defaults(const pkb_obs_options *o)
{
    pkb_obs_options d = o != NULL ? *o : (pkb_obs_options){0};
    if (d.poll_ms <= 0)
        d.poll_ms = PKB_OBS_POLL_MS;
    if (d.batch_ms <= 0)
        d.batch_ms = PKB_OBS_BATCH_MS;
    if (d.ring_bytes == 0)
        d.ring_bytes = PKB_OBS_RING_BYTES;
    if (d.btf_path == NULL || d.btf_path[0] == '\0')
        d.btf_path = PKB_OBS_BTF_PATH;
    return d;
}

void pkb_obs_view_free(pkb_obs_view *v)
{
    pkb_obsmap_free(&v->seen);
    pkb_obsmap_free(&v->open);
    memset(v, 0, sizeof *v);
}
