/*
 * none — the observer that watches nothing: it sleeps through the cell. Its rows give the
 * workload's own CPU, against which the others' cost on the workload is read.
 */
#define _GNU_SOURCE
#include "suites/observe/observer.h"

#include <stddef.h>

static int probe(const pkb_obs_options *o, char *why, size_t cap)
{
    (void)o;
    (void)why;
    (void)cap;
    return 0;
}

static int setup(const pkb_obs_options *o, void **state, char *why, size_t cap)
{
    (void)o;
    (void)why;
    (void)cap;
    *state = NULL;
    return 0;
}

static int run(void *state, int64_t until, pkb_obs_view *v, char *why, size_t cap)
{
    (void)state;
    (void)v;
    (void)why;
    (void)cap;
    return pkb_obs_sleep_until(until);
}

static int final(void *state, pkb_obs_view *v, char *why, size_t cap)
{
    (void)state;
    (void)v;
    (void)why;
    (void)cap;
    return 0;
}

static void report(void *state, pkb_obs_view *v)
{
    (void)state;
    (void)v;
}

static void release(void *state)
{
    (void)state;
}

const pkb_observer pkb_observer_none = {
    .name = "none",
    .description = "watches nothing: the workload alone",
    .probe = probe,
    .setup = setup,
    .run = run,
    .final = final,
    .report = report,
    .free = release,
};
