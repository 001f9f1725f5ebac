/*
 * Synthetic pkbench results files for the tests of compare, check and the results model: a
 * minimal document the loader accepts, with the series and samples a test chooses.
 */
#ifndef PK_TEST_SYNTH_H
#define PK_TEST_SYNTH_H

#include "common/stats.h"

#include <jansson.h>
#include <stddef.h>

typedef struct pk_test_series {
    const char *name; /* scenario/contender */
    const double *samples;
    size_t n;
    const char *status; /* NULL: "measured" */
} pk_test_series;

/* n values median · exp(sigma · N(0, 1)): the lognormal shape benchmark times tend to have. */
void pk_test_lognormal(pks_rng *rng, double *x, size_t n, double median, double sigma);

/* A valid results document (suite "compare", environment fixed) holding `series`. */
json_t *pk_test_results_doc(const pk_test_series *series, size_t n);

/* Writes the document to path (full double precision) and releases it; fails the test on error. */
void pk_test_write_doc(json_t *doc, const char *path);

/* pk_test_write_doc(pk_test_results_doc(series, n), path). */
void pk_test_write_results(const char *path, const pk_test_series *series, size_t n);

/* Reads a whole file into a NUL-terminated malloc'd string; fails the test when it cannot. */
char *pk_test_slurp(const char *path);

#endif /* PK_TEST_SYNTH_H */
