/*
 * own — what the suites share around their own measuring, beyond the contract (suite.h): the
 * --filter compiled and the runner called with the suite's section (every suite), and for a suite
 * that measures its series itself and hands them to the runner settled (forkathon, observe) the
 * file's `created` and environment taken before anything runs, room for its series and its items,
 * and all of it released after.
 */
#ifndef PKB_SUITES_OWN_H
#define PKB_SUITES_OWN_H

#include "suites/suite.h"

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

/* The runner (run.h's pkb_run_series) on the suite's n series, with `section` (taken; NULL: none)
 * as the file's top-level object of the suite, released after. Returns the suite's exit status: 0,
 * 1 (the runner's message printed) or 130 (interrupted). */
int pkb_suite_run(pkb_series *series, size_t n, pkb_suite_options *opts, json_t *section);

/* cli->filter compiled into *re (an extended regular expression, matched without groups); none:
 * re untouched. Returns 0, or 1 after saying the expression is not valid. */
int pkb_suite_filter(const pkb_cli *cli, regex_t *re);

typedef struct pkb_own_run {
    regex_t re;
    const regex_t *filter; /* &re when cli->filter, else NULL: what a suite selects series by */
    char created[40];      /* the file's `created` (opts->created points here) */
    pkb_series *series;    /* cap of them, zeroed */
    void *items;           /* cap of the suite's items, zeroed */
    size_t cap;
} pkb_own_run;

/* Compiles the filter, stamps opts->created and captures opts->environment (before anything
 * runs), and allocates cap series and cap items of item_size bytes. Returns 0, or 1 after a
 * message (nothing to end). */
int pkb_own_begin(
    pkb_own_run *o, const pkb_cli *cli, pkb_suite_options *opts, size_t cap, size_t item_size);

/* Room for cap repetitions in s: samples, both CPU times, iterations, disturbance. 0 or
 * -ENOMEM (what was allocated is the series', freed with it). */
int pkb_own_alloc_samples(pkb_series *s, size_t cap);

/* Built n items (or series): 0, or 1 after saying that no series matches the filter (n == 0). */
int pkb_own_selected(const pkb_cli *cli, size_t n);

/* Releases what begin took, and the series' contents. */
void pkb_own_end(pkb_own_run *o, const pkb_cli *cli, pkb_suite_options *opts);

#endif /* PKB_SUITES_OWN_H */
