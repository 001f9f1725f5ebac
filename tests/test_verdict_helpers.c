/*
 * What the tests of pkbench's verdicts share (verdict_test.h): running pkbench, and checking that
 * the report of a results file words every row as `pkbench compare` decides it.
 */
#include "verdict_test.h"

#include "suites/suite.h"
#include "synth.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

void pk_test_tmp_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", pk_test_tmpdir(), name);
}

void pk_test_need_pkbench(void)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
}

int pk_test_pkbench(const char *const *args, pk_result *r)
{
    const char *argv[40] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 200000}, r));
    ASSERT(r->outcome.kind == PK_OUTCOME_EXITED);
    return r->outcome.code;
}

const char *pk_test_report_word(const char *md, const char *scenario, const char *contender)
{
    char head[200], row[200];
    snprintf(head, sizeof head, "### `%s`", scenario);
    const char *sec = strstr(md, head);
    ASSERT(sec != NULL);
    snprintf(row, sizeof row, "\n| `%s`", contender);
    const char *at = strstr(sec, row);
    ASSERT(at != NULL);
    const char *end = strchr(at + 1, '\n');
    static char cell[200];
    /* the last cell: between the last two pipes of the row */
    const char *last = end - 1;
    while (last > at && *last != '|')
        last--;
    const char *prev = last - 1;
    while (prev > at && *prev != '|')
        prev--;
    const char *from = prev + 1, *to = last;
    while (from < to && *from == ' ')
        from++;
    while (to > from && to[-1] == ' ')
        to--;
    snprintf(cell, sizeof cell, "%.*s", (int)(to - from), from);
    return cell;
}

/* compare's verdict as the report words it. */
static const char *as_report(const json_t *row)
{
    const char *v = json_string_value(json_object_get(row, "verdict"));
    double delta = json_number_value(json_object_get(row, "delta"));
    double bar = json_number_value(json_object_get(row, "bar"));
    if (strcmp(v, "regressed") == 0)
        return "**slower**";
    if (strcmp(v, "improved") == 0)
        return "**faster**";
    if (strcmp(v, "undecidable") == 0)
        return strstr(json_string_value(json_object_get(row, "reason")), "too few")
                   ? "undecidable (too few samples)"
                   : "undecidable (too noisy)";
    return fabs(delta) <= bar ? "negligible" : "not distinguishable";
}

json_t *pk_test_compare_json(const char *results)
{
    pk_result r;
    int code = PK_TEST_PKBENCH(&r, "compare", results, "--baseline-contender", "posix_spawn",
                               "--format", "json");
    ASSERT(code == 0 || code == 2 || code == 3);
    json_t *j = json_loads(r.out.data, 0, NULL);
    ASSERT(j != NULL);
    pk_result_release(&r);
    return j;
}

size_t pk_test_report_agrees(const char *results, const char *outdir)
{
    char err[512], md[700];
    int rc = pkb_report_render(results, outdir, &(pkb_report_options){.no_plots = true}, err,
                               sizeof err);
    if (rc != 0)
        pk_test_fail(__FILE__, __LINE__, "report: %s", err);
    const char *base = strrchr(results, '/') + 1;
    snprintf(md, sizeof md, "%s/%.*s.md", outdir, (int)(strlen(base) - 5), base);
    char *text = pk_test_slurp(md);
    json_t *j = pk_test_compare_json(results);
    size_t i, n = 0;
    const json_t *row;
    json_array_foreach(json_object_get(j, "series"), i, row)
    {
        const char *name = json_string_value(json_object_get(row, "name"));
        char scenario[128];
        snprintf(scenario, sizeof scenario, "%.*s", (int)(strchr(name, '/') - name), name);
        const char *got = pk_test_report_word(text, scenario, strchr(name, '/') + 1);
        const char *want = as_report(row);
        printf("# %s: compare %s, report %s\n", name,
               json_string_value(json_object_get(row, "verdict")), got);
        if (strncmp(got, want, strlen(want)) != 0)
            pk_test_fail(__FILE__, __LINE__, "%s: the report says \"%s\", compare \"%s\"", name,
                         got, want);
        n++;
    }
    json_decref(j);
    free(text);
    return n;
}
