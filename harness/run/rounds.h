/*
 * rounds — the runner's rounds mode (rounds.c): the default, --aa, and re-measuring. Private to the
 * run room.
 */
#ifndef PKB_RUN_ROUNDS_H
#define PKB_RUN_ROUNDS_H

#include "run/collect.h"

/* Times every pending series of c in rounds; returns 0, or a negative errno. */
int pkb__run_rounds(struct pkb__collect *c);

/* Times the series marked `remeasuring` again in rounds, with the iteration counts the first
 * rounds sized, after one discarded warm round; returns 0, or a negative errno. */
int pkb__run_rounds_again(struct pkb__collect *c);

#endif /* PKB_RUN_ROUNDS_H */
