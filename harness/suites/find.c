/*
 * Finding a suite by name in the registry, and rendering any results file with its suite's
 * report: as files (pkb_report_render), for a terminal (pkb_report_print) or one series at a time
 * while a run goes on (pkb_report_series_line). Shared by every platform's registry (registry.c,
 * registry.windows.c).
 */
#include "suites/suite.h"

#include "results/identity.h"

#include <errno.h>
#include <string.h>

const pkb_suite *pkb_suite_find(const char *name)
{
    if (name == NULL)
        return NULL;
    name = pkb_identity_suite(name); /* older files of the scenarios suite say "compare" */
    for (size_t i = 0; i < pkb_suite_count; i++)
        if (strcmp(pkb_suites[i]->name, name) == 0)
            return pkb_suites[i];
    return NULL;
}

/* Loads path and finds its suite (NULL with -ENOTSUP when pkbench does not know it). */
static int
load_known(const char *path, pkb_results *r, const pkb_suite **suite, char *err, size_t err_len)
{
    int rc = pkb_results_load(path, r, err, err_len);
    if (rc != 0)
        return rc;
    *suite = pkb_suite_find(r->suite);
    if (*suite != NULL)
        return 0;
    rc = pkb_fail(err, err_len, -ENOTSUP, "%s: suite \"%.60s\" is not one this pkbench knows", path,
                  r->suite);
    pkb_results_free(r);
    return rc;
}

int pkb_report_render(const char *results_path,
                      const char *out_dir,
                      const pkb_report_options *opts,
                      char *err,
                      size_t err_len)
{
    if (err != NULL && err_len > 0)
        err[0] = '\0';
    if (results_path == NULL || results_path[0] == '\0')
        return pkb_fail(err, err_len, -EINVAL, "report: no results file given");
    if (out_dir == NULL || out_dir[0] == '\0')
        return pkb_fail(err, err_len, -EINVAL, "report: no output directory given");
    pkb_results r;
    const pkb_suite *suite;
    int rc = load_known(results_path, &r, &suite, err, err_len);
    if (rc != 0)
        return rc;
    rc = pkb_report_write(&r, &suite->report, out_dir, opts, err, err_len);
    pkb_results_free(&r);
    return rc;
}

int pkb_report_print(const char *results_path, bool color, pkb_buf *out, char *err, size_t err_len)
{
    if (err != NULL && err_len > 0)
        err[0] = '\0';
    if (results_path == NULL || results_path[0] == '\0')
        return pkb_fail(err, err_len, -EINVAL, "report: no results file given");
    pkb_results r;
    const pkb_suite *suite;
    int rc = load_known(results_path, &r, &suite, err, err_len);
    if (rc != 0)
        return rc;
    rc = pkb_term_report(&r, &suite->report, color, out, err, err_len);
    pkb_results_free(&r);
    return rc;
}

int pkb_report_series_line(const char *results_path, const char *name, pkb_buf *out)
{
    pkb_results r;
    const pkb_suite *suite;
    int rc = load_known(results_path, &r, &suite, NULL, 0);
    if (rc != 0)
        return rc;
    rc = -ENOENT;
    for (size_t i = 0; i < r.nseries && rc != 0; i++) {
        if (strcmp(r.series[i].name, name) == 0) {
            pkb_term_series(&r, &suite->report, i, out);
            rc = out->failed ? -ENOMEM : 0;
        }
    }
    pkb_results_free(&r);
    return rc;
}
