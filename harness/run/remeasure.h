/*
 * remeasure — measuring a too-disturbed series once more (remeasure.c), called by the
 * orchestrator (run.c) after the first measurement. Private to the run room.
 */
#ifndef PKB_RUN_REMEASURE_H
#define PKB_RUN_REMEASURE_H

#include "run/collect.h"

/* Measures once more every timed series more than PKB_REMEASURE_SHARE of whose repetitions were
 * disturbed (pkb__remeasure_due), the same way it was measured (in rounds, or one after another),
 * keeps both attempts and uses the less disturbed one. Returns 0 or a negative errno. */
int pkb__remeasure(struct pkb__collect *c);

#endif /* PKB_RUN_REMEASURE_H */
