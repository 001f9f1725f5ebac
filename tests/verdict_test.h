/*
 * What the tests of pkbench's verdicts share (test_verdict_helpers.c): test_verdict.c (one verdict,
 * fail-safe gates, bounded inputs, tables) and test_disturbed.c (a disturbed machine).
 */
#ifndef PK_VERDICT_TEST_H
#define PK_VERDICT_TEST_H

#include "test.h"

#include <jansson.h>
#include <stddef.h>

/* out = "<the test's temporary directory>/name". */
void pk_test_tmp_path(char *out, size_t cap, const char *name);

/* Skips the test (gate "build") when pkbench was not built (PK_BUILD_BENCH off). */
void pk_test_need_pkbench(void);

/* Runs pkbench with the NULL-terminated args (argv[1..]); returns its exit status, with its
 * output in r. Fails the test when it did not exit. */
int pk_test_pkbench(const char *const *args, pk_result *r);
#define PK_TEST_PKBENCH(r, ...) pk_test_pkbench((const char *const[]){__VA_ARGS__, NULL}, r)

/* `pkbench compare FILE --baseline-contender posix_spawn --format json`, parsed (new
 * reference); fails the test unless it exits 0, 2 or 3 with JSON. */
json_t *pk_test_compare_json(const char *results);

/* Every row `pkbench compare FILE --baseline-contender posix_spawn` decides has the same verdict
 * in the report of FILE. Returns the number of rows checked. */
size_t pk_test_report_agrees(const char *results, const char *outdir);

/* The report's word for a series (its table row's verdict cell) in the rendered Markdown `md`.
 * Valid until the next call. */
const char *pk_test_report_word(const char *md, const char *scenario, const char *contender);

#endif /* PK_VERDICT_TEST_H */
