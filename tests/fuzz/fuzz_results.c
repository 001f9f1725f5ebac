/*
 * fuzz_results — the results loader (harness/results/load.c) and compare's base-file check
 * (harness/regress/compare.c, the noise floor) on arbitrary bytes.
 *
 * Every reader of a results file — `pkbench report`, `compare`, `check --baseline` — goes through
 * this loader, and the files come from other machines, older versions and hand edits. It must
 * refuse anything malformed with one line naming the file and the problem, and what it accepts
 * must be safe for the statistics downstream. Properties:
 *
 *   - the result is 0 or a documented error (-EBADMSG, -ENOTSUP, -ENOMEM), and an error comes
 *     with a non-empty, one-line message that starts with the file's name; nothing leaks either
 *     way (libFuzzer's leak check runs after every input);
 *   - on success every series holds: a known status, a finite non-negative work per iteration,
 *     n finite positive samples, measured exactly when "measured" with samples, and then a
 *     valid summary (n, finite min <= median <= max, the mean between them, sd and cv finite
 *     and non-negative from two samples on, NaN below), noisy repetitions at most n;
 *   - the scenarios partition the series in order of first appearance, count their measured
 *     members, and name as baseline the one measured baseline member (or none);
 *   - compare's check (the same loader, then the noise floor) refuses a file the loader accepts
 *     only with -EBADMSG about the noise floor, under the same message rules.
 */
#include "fuzz.h"
#include "regress/compare.h"
#include "results/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH "fuzz.json"

static void check_message(int rc, const char *err)
{
    CHECK(rc == -EBADMSG || rc == -ENOTSUP || rc == -ENOMEM, "undocumented error %d: %s", rc, err);
    CHECK(err[0] != '\0', "error %d without a message", rc);
    CHECK(strchr(err, '\n') == NULL && strchr(err, '\r') == NULL, "message on two lines: %s", err);
    CHECK(strncmp(err, PATH ": ", strlen(PATH ": ")) == 0, "message does not name the file: %s",
          err);
}

/* Within a relative rounding margin: a mean of equal values may differ from them in the last
 * bits. */
static bool between(double lo, double x, double hi)
{
    return x >= lo - fabs(lo) * 1e-12 && x <= hi + fabs(hi) * 1e-12;
}

static void check_series(const pkb_results_series *s, size_t i)
{
    CHECK(s->name && s->scenario && s->contender && s->status && s->unit, "series %zu: a NULL", i);
    bool known = strcmp(s->status, "measured") == 0 || strcmp(s->status, "partial") == 0 ||
                 strcmp(s->status, "refused") == 0 || strcmp(s->status, "failed") == 0;
    CHECK(known, "series %zu: status %s", i, s->status);
    CHECK(isfinite(s->work) && s->work >= 0, "series %zu: work %g", i, s->work);
    for (size_t k = 0; k < s->n; k++)
        CHECK(isfinite(s->samples[k]) && s->samples[k] > 0, "series %zu: sample %zu is %g", i, k,
              s->samples[k]);
    CHECK(s->measured == (strcmp(s->status, "measured") == 0 && s->n > 0),
          "series %zu: measured %d with status %s and %zu samples", i, s->measured, s->status,
          s->n);
    CHECK(s->noisy <= s->n, "series %zu: %zu noisy of %zu", i, s->noisy, s->n);
    if (!s->measured)
        return;
    const pks_summary *m = &s->sum;
    CHECK(m->n == s->n, "series %zu: summary of %zu, %zu samples", i, m->n, s->n);
    CHECK(isfinite(m->min) && isfinite(m->max) && isfinite(m->median) && isfinite(m->mean),
          "series %zu: min %g max %g median %g mean %g", i, m->min, m->max, m->median, m->mean);
    CHECK(m->min <= m->median && m->median <= m->max && between(m->min, m->mean, m->max),
          "series %zu: min %g median %g mean %g max %g", i, m->min, m->median, m->mean, m->max);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < s->n; k++) {
        lo = fmin(lo, s->samples[k]);
        hi = fmax(hi, s->samples[k]);
    }
    CHECK(m->min == lo && m->max == hi, "series %zu: min/max %g/%g, samples %g/%g", i, m->min,
          m->max, lo, hi);
    if (s->n >= 2)
        CHECK(isfinite(m->sd) && m->sd >= 0 && isfinite(m->cv) && m->cv >= 0,
              "series %zu: sd %g cv %g of %zu samples", i, m->sd, m->cv, s->n);
    else
        CHECK(isnan(m->sd) && isnan(m->cv), "series %zu: sd %g cv %g of one sample", i, m->sd,
              m->cv);
}

static void check_loaded(const pkb_results *r)
{
    CHECK(strcmp(r->file, PATH) == 0 && strcmp(r->name, "fuzz") == 0, "file %s name %s", r->file,
          r->name);
    CHECK(r->root != NULL && r->suite != NULL && r->logical_cpus >= 1, "head: cpus %lld",
          r->logical_cpus);
    CHECK(r->nseries == json_array_size(json_object_get(r->root, "series")),
          "%zu series loaded of %zu", r->nseries,
          json_array_size(json_object_get(r->root, "series")));
    for (size_t i = 0; i < r->nseries; i++)
        check_series(&r->series[i], i);

    /* The scenarios: a partition of the series, in order of first appearance. */
    size_t covered = 0, next_first = 0;
    for (size_t c = 0; c < r->nscenarios; c++) {
        const pkb_results_scenario *sc = &r->scenarios[c];
        CHECK(sc->count > 0, "scenario %s is empty", sc->name);
        CHECK(sc->members[0] >= next_first, "scenario %s out of order", sc->name);
        next_first = sc->members[0] + 1;
        long measured = 0, baselines = 0;
        for (size_t k = 0; k < sc->count; k++) {
            size_t m = sc->members[k];
            CHECK(m < r->nseries && (k == 0 || m > sc->members[k - 1]),
                  "scenario %s: member %zu out of order", sc->name, m);
            const pkb_results_series *s = &r->series[m];
            CHECK(strcmp(s->scenario, sc->name) == 0, "series %zu (%s) in scenario %s", m,
                  s->scenario, sc->name);
            measured += s->measured;
            baselines += s->measured && s->baseline;
        }
        CHECK(sc->measured == measured, "scenario %s: %ld measured, counted %ld", sc->name,
              sc->measured, measured);
        CHECK(baselines <= 1, "scenario %s: %ld measured baselines", sc->name, baselines);
        if (baselines == 1)
            CHECK(sc->baseline >= 0 && r->series[sc->baseline].measured &&
                      r->series[sc->baseline].baseline &&
                      strcmp(r->series[sc->baseline].scenario, sc->name) == 0,
                  "scenario %s: baseline %ld", sc->name, sc->baseline);
        else
            CHECK(sc->baseline == -1, "scenario %s: baseline %ld without one", sc->name,
                  sc->baseline);
        covered += sc->count;
        for (size_t d = 0; d < c; d++)
            CHECK(strcmp(r->scenarios[d].name, sc->name) != 0, "scenario %s twice", sc->name);
    }
    CHECK(covered == r->nseries, "scenarios hold %zu of %zu series", covered, r->nseries);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512], err2[512];
    pkb_results r;
    int rc = pkb_results_load_buffer(PATH, (const char *)data, size, &r, err, sizeof err);
    if (rc == 0) {
        check_loaded(&r);
        pkb_results_free(&r);
    } else {
        check_message(rc, err);
    }
    /* Compare's check loads the file the same way first; it adds only the noise floor. */
    if (rc != 0)
        return 0;
    int rc2 = pkb_compare_check_buffer(PATH, (const char *)data, size, err2, sizeof err2);
    if (rc2 != 0) {
        check_message(rc2, err2);
        CHECK(rc2 == -EBADMSG && strstr(err2, "noise_floor") != NULL,
              "compare's check refused what the loader took: %d (%s)", rc2, err2);
    }
    return 0;
}
