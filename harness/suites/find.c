/*
 * Finding a suite by name in the registry, and rendering any results file with its suite's
 * report. Shared by every platform's registry (registry.c, registry.windows.c).
 */
#include "suites/suite.h"

#include <errno.h>
#include <string.h>

const pkb_suite *pkb_suite_find(const char *name)
{
    if (name == NULL)
        return NULL;
    /* The scenarios suite was called "compare" until the `pkbench compare` command needed the
     * name; its older files say so. */
    if (strcmp(name, "compare") == 0)
        name = "scenarios";
    for (size_t i = 0; i < pkb_suite_count; i++)
        if (strcmp(pkb_suites[i]->name, name) == 0)
            return pkb_suites[i];
    return NULL;
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
    int rc = pkb_results_load(results_path, &r, err, err_len);
    if (rc != 0)
        return rc;
    const pkb_suite *suite = pkb_suite_find(r.suite);
    if (suite == NULL)
        rc = pkb_fail(err, err_len, -ENOTSUP, "%s: suite \"%.60s\" is not one this pkbench knows",
                      results_path, r.suite);
    else
        rc = pkb_report_write(&r, &suite->report, out_dir, opts, err, err_len);
    pkb_results_free(&r);
    return rc;
}
