/*
 * The rounds' iteration counts (harness/run/calibrate.h): sized by Google Benchmark's rule from
 * the fastest undisturbed call of the calibration round, so a busy loop during calibration cannot
 * shorten a series' samples for the whole run. The rule on made-up calls here; a real busy loop
 * during a real calibration in test_verdict.c (cpu_hog_in_calibration_leaves_counts_and_verdicts).
 */
#include "test.h"

#include "run/calibrate.h"

#include <math.h>

TEST_IMPL(calibration_sizes_from_the_fastest_undisturbed_call)
{
    /* The full profile's fan-out: 58 ms per iteration quiet, 100 ms beside a busy loop. */
    const double min_time = 0.25;
    pkb_calibration c = {0};
    pkb_calibration_add(&c, 1, 0.058, false, min_time); /* a first trial: too short to size from */
    ASSERT_EQ(c.calls, 0);
    pkb_calibration_add(&c, 3, 0.300, true, min_time);   /* under the hog */
    pkb_calibration_add(&c, 170, 10.0, false, min_time); /* the warm-up: 58.8 ms */
    pkb_calibration_add(&c, 5, 0.290, false, min_time);  /* the sizing trial: 58 ms */
    ASSERT(!pkb_calibration_clean(&c)); /* the hog ran during it: rounds.c calibrates again */
    ASSERT_EQ(c.calls, 3);
    ASSERT_EQ(c.disturbed_calls, 1);
    /* ceil(1.4 x 250 ms / 58 ms) = ceil(6.03) */
    ASSERT_EQ(pkb_calibration_size(&c, min_time, 3), 7);
    ASSERT(fabs(c.per_iteration_ns - 58e6) < 1);
    ASSERT(!c.disturbed);
}

TEST_IMPL(calibration_prefers_undisturbed_over_faster)
{
    /* A disturbed call is never the size's source while an undisturbed one exists, even when it
     * happened to be faster: its mark says its time is not the series' own. */
    pkb_calibration c = {0};
    pkb_calibration_add(&c, 100, 0.040, true, 0.03);  /* 400 us */
    pkb_calibration_add(&c, 100, 0.050, false, 0.03); /* 500 us */
    ASSERT_EQ(pkb_calibration_size(&c, 0.03, 1), 84); /* ceil(42 ms / 500 us) */
    ASSERT(!c.disturbed);
    ASSERT(!pkb_calibration_clean(&c)); /* calibrated again all the same */
    pkb_calibration quiet = {0};
    ASSERT(!pkb_calibration_clean(&quiet)); /* nothing seen yet */
    pkb_calibration_add(&quiet, 100, 0.050, false, 0.03);
    pkb_calibration_add(&quiet, 1, 0.001, true, 0.03); /* a first trial: not a candidate */
    ASSERT(pkb_calibration_clean(&quiet));
}

TEST_IMPL(calibration_all_disturbed_says_so)
{
    pkb_calibration c = {0};
    pkb_calibration_add(&c, 3, 0.300, true, 0.25);
    ASSERT(!pkb_calibration_clean(&c));
    pkb_calibration_add(&c, 4, 0.320, true, 0.25);   /* the second pass: still disturbed */
    ASSERT_EQ(pkb_calibration_size(&c, 0.25, 9), 5); /* the fastest: 80 ms, ceil(4.375) */
    ASSERT(c.disturbed);
    ASSERT_EQ(c.calls, 2);
    ASSERT_EQ(c.disturbed_calls, 2);
}

TEST_IMPL(calibration_bounds)
{
    /* An iteration longer than the time per sample: one per sample. No candidate at all (every
     * call failed or was too short): Google Benchmark's own count, and no source to record. */
    pkb_calibration slow = {0};
    pkb_calibration_add(&slow, 1, 2.0, false, 0.25);
    ASSERT_EQ(pkb_calibration_size(&slow, 0.25, 1), 1);
    pkb_calibration none = {0};
    pkb_calibration_add(&none, 0, 1.0, false, 0.25);
    pkb_calibration_add(&none, 5, NAN, false, 0.25);
    pkb_calibration_add(&none, 5, 0.1, false, 0.25);
    ASSERT_EQ(none.calls, 0);
    ASSERT_EQ(pkb_calibration_size(&none, 0.25, 12), 12);
    ASSERT(none.per_iteration_ns == 0); /* the file then has no "calibration" object */
    /* A very fast iteration: capped where Google Benchmark caps. */
    pkb_calibration fast = {0};
    pkb_calibration_add(&fast, 1000000000, 0.2, false, 0.25);
    ASSERT_EQ(pkb_calibration_size(&fast, 0.25, 1), 1000000000);
}
