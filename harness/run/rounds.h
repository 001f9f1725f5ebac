/*
 * rounds — the runner's --interleave and --aa mode (rounds.c). Private to the run room.
 */
#ifndef PKB_RUN_ROUNDS_H
#define PKB_RUN_ROUNDS_H

#include "run/collect.h"

/* Times every pending series of c in rounds; returns 0, or a negative errno. */
int pkb__run_rounds(struct pkb__collect *c);

#endif /* PKB_RUN_ROUNDS_H */
