/*
 * The noisy-repetition rule (METHODOLOGY.md, "Noise and the environment"): a repetition is noisy
 * when the runnable tasks at its end outnumbered the logical CPUs — strictly: as many runnable
 * tasks as CPUs is a fully used machine, not an oversubscribed one. Checked where the flag is made
 * (the writer's `noisy` array) and where a file without that array is read (procs_running
 * against environment.logical_cpus).
 */
#include "test.h"

#include "results/results.h"
#include "synth.h"

#include <stdio.h>
#include <string.h>

TEST_IMPL(results_noisy_means_more_runnable_than_cpus)
{
    static const double samples[] = {1e5, 1e5, 1e5, 1e5, 1e5};
    static const int running[] = {2, 3, 1, 0, 2};
    pkb_disturbance disturb[5];
    for (size_t i = 0; i < 5; i++)
        disturb[i] = (pkb_disturbance){.procs_running = running[i], .migrations = -1};
    json_t *s = pkb_results_series_json(&(pkb_series_record){
        .name = "x/a",
        .scenario = "x",
        .contender = "a",
        .status = PKB_SERIES_MEASURED,
        .n = 5,
        .samples_ns = samples,
        .disturb = disturb,
        .logical_cpus = 2,
    });
    ASSERT(s != NULL);
    json_t *noisy = json_object_get(s, "noisy");
    ASSERT_EQ(json_array_size(noisy), 5);
    static const bool want[] = {false, true, false, false, false};
    for (size_t i = 0; i < 5; i++)
        if (json_is_true(json_array_get(noisy, i)) != want[i])
            pk_test_fail(__FILE__, __LINE__, "repetition %zu (%d runnable, 2 CPUs): noisy %d", i,
                         running[i], !want[i]);
    json_decref(s);

    /* A file with procs_running and no noisy array: the reader applies the same rule. */
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/procs.json", pk_test_tmpdir());
    json_t *doc = pk_test_results_doc(&(pk_test_series){"x/a", samples, 5, NULL}, 1);
    json_t *series = json_array_get(json_object_get(doc, "series"), 0);
    json_object_set_new(series, "procs_running", json_pack("[i, i, i, i, i]", 2, 3, 1, 0, 2));
    pk_test_write_doc(doc, path);
    pkb_results r;
    ASSERT_OK(pkb_results_load(path, &r, err, sizeof err));
    ASSERT_EQ(r.logical_cpus, 2);
    ASSERT_EQ(r.series[0].noisy, 1);
    pkb_results_free(&r);
}
