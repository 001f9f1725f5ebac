/*
 * own — the filter every suite compiles, its call of the runner, and what a suite that measures
 * itself does before and after its measuring (own.h), written once for forkathon and observe.
 */
#include "suites/own.h"

#include "run/env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int pkb_suite_run(pkb_series *series, size_t n, pkb_suite_options *opts, json_t *section)
{
    opts->suite_section = section;
    int rc = pkb_run_series(series, n, opts);
    json_decref(opts->suite_section);
    opts->suite_section = NULL;
    return rc < 0 ? 1 : rc;
}

int pkb_suite_filter(const pkb_cli *cli, regex_t *re)
{
    if (cli->filter != NULL && regcomp(re, cli->filter, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "pkbench: --filter: '%s' is not a valid extended regular expression\n",
                cli->filter);
        return 1;
    }
    return 0;
}

int pkb_own_begin(
    pkb_own_run *o, const pkb_cli *cli, pkb_suite_options *opts, size_t cap, size_t item_size)
{
    *o = (pkb_own_run){.cap = cap};
    if (pkb_suite_filter(cli, &o->re) != 0)
        return 1;
    o->filter = cli->filter != NULL ? &o->re : NULL;
    /* The file's `created` and the environment's start fields: now, before anything runs. */
    pkb_iso_time(o->created, sizeof o->created);
    opts->created = o->created;
    opts->environment = pkb_env_capture();
    o->series = calloc(cap, sizeof *o->series);
    o->items = calloc(cap, item_size);
    if (o->series == NULL || o->items == NULL || opts->environment == NULL) {
        fprintf(stderr, "pkbench: out of memory\n");
        pkb_own_end(o, cli, opts);
        return 1;
    }
    return 0;
}

int pkb_own_selected(const pkb_cli *cli, size_t n)
{
    if (n > 0)
        return 0;
    fprintf(stderr, "pkbench: no series matches --filter '%s'\n", cli->filter);
    return 1;
}

int pkb_own_alloc_samples(pkb_series *s, size_t cap)
{
    s->samples_ns = calloc(cap, sizeof *s->samples_ns);
    s->child_cpu_ns = calloc(cap, sizeof *s->child_cpu_ns);
    s->parent_cpu_ns = calloc(cap, sizeof *s->parent_cpu_ns);
    s->iterations = calloc(cap, sizeof *s->iterations);
    s->disturb = calloc(cap, sizeof *s->disturb);
    return s->samples_ns && s->child_cpu_ns && s->parent_cpu_ns && s->iterations && s->disturb
               ? 0
               : -ENOMEM;
}

void pkb_own_end(pkb_own_run *o, const pkb_cli *cli, pkb_suite_options *opts)
{
    json_decref(opts->environment);
    opts->environment = NULL;
    opts->created = NULL;
    if (cli->filter != NULL)
        regfree(&o->re);
    for (size_t i = 0; i < o->cap && o->series != NULL; i++)
        pkb_series_free(&o->series[i]);
    free(o->series);
    free(o->items);
    *o = (pkb_own_run){0};
}
