/*
 * none — the observer that watches nothing: it sleeps through the cell. Its rows give the
 * workload's own CPU, against which the others' cost on the workload is read.
 */
#define _GNU_SOURCE
#include "suites/observe/observer.h"

#include <stddef.h>

static int none_probe(const pkb_observer *self, const pkb_obs_options *o, char *why, size_t cap)
{
    (void)self;
    (void)o;
    (void)why;
    (void)cap;
    return 0;
}

static int
none_setup(const pkb_observer *self, const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    (void)self;
    (void)o;
    (void)why;
    (void)cap;
    *state = NULL;
    return 0;
}

static int none_run(void *state, int64_t until, pkb_obs_view *v, char *why, size_t cap)
{
    (void)state;
    (void)v;
    (void)why;
    (void)cap;
    return pkb_obs_sleep_until(until);
}

static int none_final(void *state, pkb_obs_view *v, char *why, size_t cap)
{
    (void)state;
    (void)v;
    (void)why;
    (void)cap;
    return 0;
}

static void none_report(void *state, pkb_obs_view *v)
{
    (void)state;
    (void)v;
}

static void none_free(void *state)
{
    (void)state;
}

const pkb_observer pkb_observer_none =
    PKB_OBSERVER_OF(none, "none", 0, "watches nothing: the workload alone");
