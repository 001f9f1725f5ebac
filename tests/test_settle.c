/*
 * Settling (harness/run/run.c): in rounds, each sample follows another series, and what that
 * series left behind must not land in the sample. On an unpinned VM the carry-over is the
 * scheduler's (after a burst of CPU it starts the next children on the other CPU for tens of ms),
 * which no test can summon at will; here a made-up series makes it exact: its first calls after
 * any other series ran are slow, as a real spawn series' are after GLib's fan-out. Measured with
 * and without settling in the same test, so the test shows the bias it removes.
 */
#define _GNU_SOURCE
#include "test.h"

#include "run/run.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUIET_US 200 /* a steady call */
#define SLOW_US  3000
#define SLOW_N   10 /* slow calls after another series ran: 30 ms in all */

static int slow_left; /* the steady series' calls still slowed by the last other series */

static void sleep_us(long us)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int steady(void *ctx, pkb_sample *out)
{
    (void)ctx;
    (void)out;
    sleep_us(slow_left > 0 ? SLOW_US : QUIET_US);
    if (slow_left > 0)
        slow_left--;
    return 0;
}

static int burst(void *ctx, pkb_sample *out)
{
    (void)ctx;
    (void)out;
    slow_left = SLOW_N;
    sleep_us(500);
    return 0;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The steady series' median sample (µs per iteration) in a rounds run with `settle_s`, and the
 * settle_s the file records. */
static double steady_median_us(double settle_s, double *recorded)
{
    char path[512];
    snprintf(path, sizeof path, "%s/settle-%g.json", pk_test_tmpdir(), settle_s);
    static const pkb_profile prof = {"quick", 6, 0.0, 0.02, 0.0, 0.0};
    /* Three series: with the order rotated by one per round, steady never follows itself. */
    pkb_series s[3] = {
        {.name = "carry/steady", .scenario = "carry", .contender = "steady", .iterate = steady},
        {.name = "carry/burst_a", .scenario = "carry", .contender = "burst_a", .iterate = burst},
        {.name = "carry/burst_b", .scenario = "carry", .contender = "burst_b", .iterate = burst},
    };
    slow_left = 0; /* steady goes first in the calibration round: sized on its quiet calls */
    for (int i = 0; i < 3; i++) {
        s[i].unit = "runs/s";
        s[i].work_per_iteration = 1;
    }
    char *argv[] = {"pk_tests", NULL};
    pkb_suite_options opts = {.suite = "scenarios",
                              .profile = &prof,
                              .out_path = path,
                              .argc = 1,
                              .argv = argv,
                              .interleave = true,
                              .settle_s = settle_s};
    ASSERT_EQ(pkb_run_series(s, 3, &opts), 0);
    for (int i = 0; i < 3; i++)
        pkb_series_free(&s[i]);
    json_error_t e;
    json_t *d = json_load_file(path, 0, &e);
    if (d == NULL)
        pk_test_fail(__FILE__, __LINE__, "%s: %s", path, e.text);
    *recorded = json_number_value(json_object_get(json_object_get(d, "settings"), "settle_s"));
    const json_t *series = json_array_get(json_object_get(d, "series"), 0);
    ASSERT_STR_EQ(json_string_value(json_object_get(series, "name")), "carry/steady");
    const json_t *samples = json_object_get(series, "samples_ns");
    size_t n = json_array_size(samples);
    ASSERT_EQ(n, 6);
    double v[6];
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(samples, i)) / 1e3;
    json_decref(d);
    qsort(v, n, sizeof v[0], cmp_double);
    return (v[2] + v[3]) / 2;
}

TEST_IMPL(rounds_settle_keeps_the_previous_series_out_of_a_sample)
{
    /* What a steady call costs here, nothing before it (nanosleep overshoots by its slack): the
     * best of five batches, so a busy moment of the machine does not inflate it. */
    slow_left = 0;
    double quiet = 1e9;
    for (int b = 0; b < 5; b++) {
        double t0 = now_us();
        for (int i = 0; i < 20; i++)
            steady(NULL, NULL);
        double per = (now_us() - t0) / 20;
        quiet = per < quiet ? per : quiet;
    }

    double rec_off, rec_on;
    double off = steady_median_us(0, &rec_off);
    /* 50 ms covers the 30 ms of slow calls with room for a loaded machine's longer sleeps. */
    double on = steady_median_us(0.05, &rec_on);
    printf("# steady call alone %.0f us; median sample without settling %.0f us/iteration, with "
           "0.05 s of settling %.0f\n",
           quiet, off, on);
    ASSERT(rec_off == 0);
    ASSERT(rec_on == 0.05);
    /* Without settling each sample carries the burst's 30 ms over ~28 ms of steady calls:
     * about twice the quiet cost. The control shows the bias is there to remove. */
    ASSERT(off > 1.5 * quiet);
    ASSERT(off > 1.5 * on);
    /* With it, the sample is the series' own steady state: a median against the best of five
     * batches, so within 1.4x (a CI run saw 1.27x; without settling it is about 2x). */
    ASSERT(on < 1.4 * quiet);
}
