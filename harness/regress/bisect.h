/*
 * bisect — `pkbench bisect GOOD BAD --series REGEX` (bisect.c): git bisect run with pkbench ab at
 * every step, in a scratch worktree so that the tree pkbench works from is never checked out.
 *
 * First `ab GOOD BAD` on the series must find a regression (else there is nothing to bisect, and
 * it says so); then each step measures GOOD against the commit under test: regressed is bad, no
 * regression is good, undecidable is `git bisect skip` (never guessed). It ends by naming the
 * first bad commit, each regressed series with its effect, CI and p from that commit's ab, and
 * how many steps it took. Every step's results file is kept in --out DIR (default
 * results/bisect-<UTC time>/), named after its commit.
 *
 * Exit status: 0 the first bad commit found; 3 it cannot be told (BAD against GOOD undecidable,
 * or skipped commits hide it: the candidates are named); 1 a usage error, a failed build, or BAD
 * not slower than GOOD on the series; 130 interrupted.
 */
#ifndef PKB_REGRESS_BISECT_H
#define PKB_REGRESS_BISECT_H

/* argv[1] is "bisect". Returns the exit status above. */
int pkb_cmd_bisect(int argc, char **argv);

#endif /* PKB_REGRESS_BISECT_H */
