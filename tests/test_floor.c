/*
 * pk_floor (phases/floor.c), small: every method measured on both targets into the results file,
 * each series' median the median of the samples the file keeps, each target's value the ratio of
 * those medians (so what the run states comes from its samples), the capture path's own steps
 * printed; bad arguments exit 2 naming the argument.
 */
#define _GNU_SOURCE
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_FLOOR_PATH
#define PK_FLOOR_PATH ""
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of a JSON array of numbers, computed here. */
static double median_of(const json_t *arr)
{
    size_t n = json_array_size(arr);
    ASSERT(n > 0 && n <= 64);
    double v[64];
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(arr, i));
    qsort(v, n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const json_t *find_result(const json_t *results, const char *target, const char *method)
{
    size_t i;
    const json_t *row;
    json_array_foreach(results, i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "target")), target) == 0 &&
            strcmp(json_string_value(json_object_get(row, "method")), method) == 0)
            return row;
    }
    return NULL;
}

static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

TEST_IMPL(pk_floor_smoke)
{
    if (PK_FLOOR_PATH[0] == '\0')
        pk_test_skip("pk_floor is built with the phases (PK_BUILD_BENCH)");
    char out[600];
    snprintf(out, sizeof out, "%s/floor.json", pk_test_tmpdir());
    const char *const argv[] = {PK_FLOOR_PATH, "--rounds", "3", "--spawns", "4", "--true-spawns",
                                "2",           "--census", "0", "--out",    out, NULL};
    pk_result run;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 120000}, &run));
    ASSERT_EXITED(run, 0);
    json_error_t err;
    json_t *j = json_load_file(out, 0, &err);
    ASSERT(j != NULL);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schema")), "processkit-floor");
    const json_t *results = json_object_get(j, "results");
    size_t i, measured = 0;
    const json_t *row;
    json_array_foreach(results, i, row)
    {
        if (!json_is_true(json_object_get(row, "available")))
            continue;
        const json_t *samples = json_object_get(row, "samples_us");
        ASSERT_EQ(json_array_size(samples), 3);
        ASSERT(close_to(json_number_value(json_object_get(row, "median_us")), median_of(samples)));
        measured++;
    }
    ASSERT_GE(measured, 10);
    /* The capture path against the raw loop, contained and not, on both targets. */
    const char *const targets[] = {"tiny_static", "bin_true"};
    for (int t = 0; t < 2; t++) {
        if (find_result(results, targets[t], "vfork_execve") == NULL)
            continue; /* no tiny helper on this architecture */
        const json_t *raw = find_result(results, targets[t], "vfork_pipes_poll");
        const json_t *def = find_result(results, targets[t], "processkit_defaults");
        ASSERT(raw != NULL && def != NULL);
        ASSERT(find_result(results, targets[t], "processkit_defaults_uncontained") != NULL);
        double want = json_number_value(json_object_get(def, "median_us")) /
                      json_number_value(json_object_get(raw, "median_us"));
        bool found = false;
        const json_t *c;
        json_array_foreach(json_object_get(j, "targets"), i, c)
        {
            if (strcmp(json_string_value(json_object_get(c, "target")), targets[t]) != 0 ||
                strcmp(json_string_value(json_object_get(c, "check")),
                       "processkit_defaults / vfork_pipes_poll") != 0)
                continue;
            found = true;
            double value = json_number_value(json_object_get(c, "value"));
            ASSERT(close_to(value, want));
            ASSERT_EQ(json_is_true(json_object_get(c, "met")), value <= 1.10);
        }
        ASSERT(found);
    }
    json_decref(j);
    ASSERT(strstr(run.out.data,
                  "the capture path: processkit_defaults_uncontained − vfork_pipes_poll") != NULL);
    ASSERT(strstr(run.out.data, "(target ≤ 1.10×: ") != NULL);
    ASSERT(strstr(run.out.data, out) != NULL);
    pk_result_release(&run);
    unlink(out);

    /* Bad arguments: exit 2, one line naming the argument. */
    const char *const bad[][3] = {{"--rounds", "0", "--rounds"},
                                  {"--methods", "(", "--methods"},
                                  {"--bogus", NULL, "--bogus"}};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        const char *const a[] = {PK_FLOOR_PATH, bad[b][0], bad[b][1], NULL};
        pk_result r;
        ASSERT_OK(pk_run(&(pk_command){.argv = a, .timeout_ms = 30000}, &r));
        ASSERT_EXITED(r, 2);
        ASSERT(r.err.data != NULL && strstr(r.err.data, bad[b][2]) != NULL);
        pk_result_release(&r);
    }
}
