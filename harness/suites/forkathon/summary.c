/*
 * summary — the fork/vfork study's numbers from a results file's series (forkathon.h):
 * Wemm's time(1) table and its ratios, and per mechanism × THP setting the spawn cost at each
 * RSS step with its least-squares line. The suite stores this summary in the results file and
 * the report recomputes it from the same series with this same code.
 *
 * Wemm's 2003 figures are quoted from his post (freebsd-current, 27 Nov 2003, "fork speed vs
 * /bin/sh"; FreeBSD 5-current, `time` of csh):
 *     forkathon.dynamic   0.120u 17.192s 0:17.81 97.1%
 *     forkathon.static    0.051u  5.939s 0:06.38 93.7%
 *     vforkathon.dynamic  0.015u  2.006s 0:02.30 87.3%
 *     vforkathon.static   0.022u  2.020s 0:02.34 87.1%
 * His "3 times faster [static], 9 times faster on dynamic" are the CPU ratios (2.9× and 8.6×);
 * by wall time they are 2.7× and 7.7×.
 */
#define _GNU_SOURCE
#include "suites/forkathon/forkathon.h"

#include "common/fit.h"
#include "common/stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NAME(name, description)        #name,
#define DESCRIPTION(name, description) description,
const char *const pkb_fk_mechanism_names[] = {PKB_FK_MECHANISMS(NAME)};
const char *const pkb_fk_mechanism_descriptions[] = {PKB_FK_MECHANISMS(DESCRIPTION)};
#undef NAME
#undef DESCRIPTION
const size_t pkb_fk_mechanism_count =
    sizeof pkb_fk_mechanism_names / sizeof pkb_fk_mechanism_names[0];

static const char *const linkages[] = {"static", "dynamic"};
static const char *const loops[] = {"fork", "vfork"};
static const char *const thps[] = {"off", "on"};

/* Wemm's post, in the order of `linkages` × `loops`: user, sys, wall (s), %CPU. */
static const double wemm_2003[2][2][4] = {
    {{0.051, 5.939, 6.38, 93.7}, {0.022, 2.020, 2.34, 87.1}},
    {{0.120, 17.192, 17.81, 97.1}, {0.015, 2.006, 2.30, 87.3}},
};

static const json_t *fk(const json_t *s)
{
    const char *status = json_string_value(json_object_get(s, "status"));
    const json_t *o = json_object_get(s, "forkathon");
    if (status == NULL || strcmp(status, "measured") != 0 || !json_is_object(o) ||
        json_array_size(json_object_get(s, "samples_ns")) == 0)
        return NULL;
    return o;
}

static bool is(const json_t *o, const char *key, const char *value)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v != NULL && strcmp(v, value) == 0;
}

/* The median of a JSON array of numbers (NaN when empty or not numbers). */
static double median_of(const json_t *a)
{
    size_t n = json_array_size(a);
    double *x = calloc(n ? n : 1, sizeof *x), m = NAN;
    if (x == NULL)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (json_is_number(json_array_get(a, i)))
            x[k++] = json_number_value(json_array_get(a, i));
    if (k == 0 || pks_median(x, k, NULL, &m) != 0)
        m = NAN;
    free(x);
    return m;
}

static void minmax_of(const json_t *a, double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v)
    {
        *lo = fmin(*lo, json_number_value(v));
        *hi = fmax(*hi, json_number_value(v));
    }
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *ratio(double a, double b)
{
    return isfinite(a) && isfinite(b) && b > 0 ? json_real(a / b) : json_null();
}

/* ---- Wemm's loop ----------------------------------------------------------------------------- */

struct wemm_row {
    bool present;
    double wall, cpu;
};

static json_t *wemm_row(const json_t *s, const json_t *o, int l, int m, struct wemm_row *out)
{
    const json_t *user = json_object_get(o, "user_s"), *sys = json_object_get(o, "sys_s"),
                 *wall = json_object_get(o, "wall_s");
    size_t runs = json_array_size(wall);
    json_t *cpu_pct = json_array(), *cpu_s = json_array();
    for (size_t i = 0; i < runs; i++) {
        double u = json_number_value(json_array_get(user, i)),
               sy = json_number_value(json_array_get(sys, i)),
               w = json_number_value(json_array_get(wall, i));
        json_array_append_new(cpu_s, json_real(u + sy));
        json_array_append_new(cpu_pct, json_real(w > 0 ? (u + sy) / w * 100 : 0));
    }
    double lo, hi, n = json_number_value(json_object_get(o, "iterations"));
    minmax_of(wall, &lo, &hi);
    double med_wall = median_of(wall);
    out->present = true;
    out->wall = med_wall;
    out->cpu = median_of(cpu_s);
    char binary[64];
    snprintf(binary, sizeof binary, "%s.%s", m == 0 ? "forkathon" : "vforkathon", linkages[l]);
    json_t *row = json_pack(
        "{s:s, s:s, s:s, s:s, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "series",
        json_string_value(json_object_get(s, "name")), "linkage", linkages[l], "mechanism",
        loops[m], "binary", binary, "iterations", (json_int_t)n, "runs", (int)runs, "user_s",
        num(median_of(user)), "sys_s", num(median_of(sys)), "wall_s", num(med_wall), "cpu_pct",
        num(median_of(cpu_pct)), "wall_min_s", num(lo), "wall_max_s", num(hi), "us_per_fork",
        num(n > 0 ? med_wall / n * 1e6 : NAN), "loop_us_per_fork",
        num(n > 0 ? median_of(json_object_get(o, "loop_s")) / n * 1e6 : NAN));
    json_decref(cpu_pct);
    json_decref(cpu_s);
    return row;
}

static json_t *ratios_of(struct wemm_row r[2][2])
{
    /* r[linkage][loop] */
    return json_pack("{s:{s:o, s:o}, s:{s:o, s:o}, s:{s:o, s:o}, s:{s:o, s:o}}", "vfork_vs_fork",
                     "static", ratio(r[0][0].wall, r[0][1].wall), "dynamic",
                     ratio(r[1][0].wall, r[1][1].wall), "vfork_vs_fork_cpu", "static",
                     ratio(r[0][0].cpu, r[0][1].cpu), "dynamic", ratio(r[1][0].cpu, r[1][1].cpu),
                     "dynamic_vs_static", "fork", ratio(r[1][0].wall, r[0][0].wall), "vfork",
                     ratio(r[1][1].wall, r[0][1].wall), "dynamic_vs_static_cpu", "fork",
                     ratio(r[1][0].cpu, r[0][0].cpu), "vfork", ratio(r[1][1].cpu, r[0][1].cpu));
}

static void add_wemm(const json_t *series, json_t *summary)
{
    json_t *rows = json_array(), *ref = json_array();
    struct wemm_row got[2][2] = {0}, theirs[2][2] = {0};
    for (int l = 0; l < 2; l++) {
        for (int m = 0; m < 2; m++) {
            const double *w = wemm_2003[l][m];
            theirs[l][m] = (struct wemm_row){true, w[2], w[0] + w[1]};
            char binary[64];
            snprintf(binary, sizeof binary, "%s.%s", m == 0 ? "forkathon" : "vforkathon",
                     linkages[l]);
            json_array_append_new(
                ref, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f}", "linkage",
                               linkages[l], "mechanism", loops[m], "binary", binary, "iterations",
                               100000, "runs", 1, "user_s", w[0], "sys_s", w[1], "wall_s", w[2],
                               "cpu_pct", w[3], "us_per_fork", w[2] / 100000 * 1e6));
            size_t i;
            const json_t *s;
            json_array_foreach(series, i, s)
            {
                const json_t *o = fk(s);
                if (o != NULL && is(o, "study", "wemm") && is(o, "linkage", linkages[l]) &&
                    is(o, "mechanism", loops[m]) && !got[l][m].present) {
                    json_array_append_new(rows, wemm_row(s, o, l, m, &got[l][m]));
                }
            }
        }
    }
    json_object_set_new(summary, "wemm", rows);
    json_object_set_new(summary, "ratios", ratios_of(got));
    json_object_set_new(summary, "wemm_2003", ref);
    json_object_set_new(summary, "ratios_2003", ratios_of(theirs));
}

/* ---- the RSS ladder -------------------------------------------------------------------------- */

struct point {
    double step, rss_mib, median, lo, hi;
    size_t n;
};

static int by_step(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    return (x->step > y->step) - (x->step < y->step);
}

static json_t *curve(const json_t *series, const char *mech, const char *thp)
{
    size_t cap = json_array_size(series), np = 0;
    struct point *pts = calloc(cap ? cap : 1, sizeof *pts);
    if (pts == NULL)
        return NULL;
    size_t i;
    const json_t *s;
    json_array_foreach(series, i, s)
    {
        const json_t *o = fk(s);
        if (o == NULL || !is(o, "study", "rss") || !is(o, "mechanism", mech) || !is(o, "thp", thp))
            continue;
        const json_t *samples = json_object_get(s, "samples_ns");
        struct point *p = &pts[np++];
        p->step = json_number_value(json_object_get(o, "step_mib"));
        p->rss_mib = json_number_value(json_object_get(o, "rss_kib")) / 1024.0;
        p->median = median_of(samples) / 1e3;
        minmax_of(samples, &p->lo, &p->hi);
        p->lo /= 1e3;
        p->hi /= 1e3;
        p->n = json_array_size(samples);
    }
    if (np == 0) {
        free(pts);
        return json_null();
    }
    qsort(pts, np, sizeof *pts, by_step);
    json_t *points = json_array();
    double *x = calloc(np, sizeof *x), *y = calloc(np, sizeof *y);
    for (size_t k = 0; k < np; k++) {
        json_array_append_new(points, json_pack("{s:f, s:f, s:o, s:o, s:o, s:i}", "step_mib",
                                                pts[k].step, "rss_mib", pts[k].rss_mib, "median_us",
                                                num(pts[k].median), "min_us", num(pts[k].lo),
                                                "max_us", num(pts[k].hi), "n", (int)pts[k].n));
        if (x != NULL && y != NULL) {
            x[k] = pts[k].rss_mib;
            y[k] = pts[k].median;
        }
    }
    pkb_fit f;
    json_t *fit = x != NULL && y != NULL && pkb_fit_linear(x, y, np, &f) == 0
                      ? json_pack("{s:i, s:f, s:f, s:f}", "n", (int)f.n, "slope_us_per_mib",
                                  f.slope, "intercept_us", f.intercept, "r2", f.r2)
                      : json_null();
    free(x);
    free(y);
    free(pts);
    return json_pack("{s:s, s:s, s:o, s:o}", "mechanism", mech, "thp", thp, "points", points, "fit",
                     fit);
}

json_t *pkb_forkathon_summarize(const json_t *series)
{
    json_t *summary = json_object();
    if (summary == NULL)
        return NULL;
    add_wemm(series, summary);
    json_t *curves = json_array();
    for (size_t t = 0; t < 2; t++) {
        for (size_t m = 0; m < pkb_fk_mechanism_count; m++) {
            json_t *c = curve(series, pkb_fk_mechanism_names[m], thps[t]);
            if (c == NULL) {
                json_decref(curves);
                json_decref(summary);
                return NULL;
            }
            if (json_is_object(c))
                json_array_append_new(curves, c);
            else
                json_decref(c);
        }
    }
    json_object_set_new(summary, "curves", curves);
    return summary;
}
