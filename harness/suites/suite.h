/*
 * The suites pkbench can run, and what the command line hands them.
 */
#ifndef PKB_SUITES_H
#define PKB_SUITES_H

#include "run.h"

typedef struct pkb_cli {
    const char *filter;    /* extended regular expression over series names, or NULL */
    const char *tiny_path; /* the tiny static helper (spawn_only, phases) */
    long iterations;       /* forkathon: Wemm's loop count (--iterations); 0: the profile's */
} pkb_cli;

/* Each returns pkbench's exit status: 0, 1 (input or set-up error, message printed) or 130. */
int pkb_suite_compare(const pkb_cli *cli, pkb_suite_options *opts);
int pkb_suite_forkathon(const pkb_cli *cli, pkb_suite_options *opts);
int pkb_suite_phases(const pkb_cli *cli, pkb_suite_options *opts);

#endif /* PKB_SUITES_H */
