/*
 * sample — the plugin contract: what one timed iteration reports to the runner, whoever performed
 * it (a contender, contenders/contender.h; a phases series, phases/attribution/phases.h; or a
 * suite's own loop). A leaf: it includes nothing of the harness, so a plugin that includes it
 * depends on this contract and on nothing the harness does with it.
 */
#ifndef PKB_PLUGIN_SAMPLE_H
#define PKB_PLUGIN_SAMPLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one iteration saw, summed over its children. */
typedef struct pkb_sample {
    uint64_t bytes;  /* stdout bytes read */
    uint64_t lines;  /* stdout lines consumed */
    int children;    /* children reaped */
    int failures;    /* children that did not exit 0 */
    char error[160]; /* set (non-empty) when the iteration itself failed */
} pkb_sample;

/* One iteration of a series: returns 0, or a negative errno with out->error set. */
typedef int (*pkb_iterate_fn)(void *ctx, pkb_sample *out);

#ifdef __cplusplus
}
#endif

#endif /* PKB_PLUGIN_SAMPLE_H */
