/*
 * pk_forward_rate (phases/forward_rate.c), small: every method of both workloads measured once
 * into the results file, and the report printed again from that file is the one the run printed,
 * so what the report says comes from the file.
 */
#define _GNU_SOURCE
#include "test.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PK_FORWARD_RATE_PATH
#define PK_FORWARD_RATE_PATH ""
#endif

TEST_IMPL(pkrun_forward_rate_smoke)
{
    if (PK_FORWARD_RATE_PATH[0] == '\0')
        pk_test_skip_gate("build", "pk_forward_rate is built with the phases (PK_BUILD_BENCH)");
    char out[600];
    snprintf(out, sizeof out, "%s/forward.json", pk_test_tmpdir());
    const char *const argv[] = {
        PK_FORWARD_RATE_PATH, "--size", "1M", "--rounds", "1", "--out", out, NULL};
    pk_result run;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 120000}, &run));
    ASSERT_EXITED(run, 0);
    json_error_t err;
    json_t *j = json_load_file(out, 0, &err);
    ASSERT(j != NULL);
    ASSERT_STR_EQ(json_string_value(json_object_get(j, "schema")), "processkit-forward-rate");
    json_t *results = json_object_get(j, "results");
    bool timeout = json_is_true(json_object_get(j, "timeout_measured"));
    ASSERT_EQ(json_array_size(results), timeout ? 10 : 8);
    size_t i;
    json_t *row;
    json_array_foreach(results, i, row)
    {
        ASSERT_EQ(json_array_size(json_object_get(row, "samples_mib_s")), 1);
        ASSERT(json_real_value(json_object_get(row, "median_mib_s")) > 0);
        ASSERT(json_real_value(json_object_get(row, "median_cpu_s_per_gib")) > 0);
    }
    json_decref(j);
    const char *const again[] = {PK_FORWARD_RATE_PATH, "--report", out, NULL};
    pk_result rep;
    ASSERT_OK(pk_run(&(pk_command){.argv = again}, &rep));
    ASSERT_EXITED(rep, 0);
    ASSERT(strstr(rep.out.data, "| pkrun_json |") != NULL);
    /* The run printed the same report, then where its results went. */
    ASSERT_EQ(strncmp(run.out.data, rep.out.data, rep.out.len), 0);
    ASSERT(strncmp(run.out.data + rep.out.len, "results: ", 9) == 0);
    pk_result_release(&rep);
    pk_result_release(&run);
    unlink(out);
}
