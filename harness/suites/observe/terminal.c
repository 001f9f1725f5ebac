/*
 * The observer-cost study for a terminal: what `pkbench run --suite observe` prints at its end and
 * `pkbench report --print` prints for its files.
 *
 * Per hold, the seed's table with the columns a reader choosing a backend looks at first: the
 * observer's CPU (median and min–max over the repetitions), "attributed N of M churned", the
 * workload's extra CPU against `none` in the same cell, ring-buffer drops and open-at-end against
 * the truth. Then the observers that could not run, with their reasons. Every number comes from
 * pkb_observe_summarize (observe.h), the code the Markdown report and the stored summary use, so
 * none is computed another way.
 */
#include "suites/observe/view.h"

#include "common/term.h"
#include "suites/observe/observe.h"
#include "suites/observe/text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* One row: a measured cell of the grid. */
static void cell_row(pkb_table *t, const json_t *c, pkb_buf *out)
{
    pkb_buf b = {0};
    pkb_table_add(t, 0, "%.0f", pkb__obs_num(c, "rate"));
    pkb_table_add(t, 0, "%s", json_string_value(json_object_get(c, "observer")));
    pkb__obs_fmt_range(&b, json_object_get(c, "cpu_s"), 1, "");
    pkb_table_take(t, 0, &b, out);
    double churned = pkb__obs_num(c, "churned"), attributed = pkb__obs_num(c, "attributed");
    pkb__obs_fmt_count(&b, attributed);
    pkb_buf_puts(&b, " of ");
    pkb__obs_fmt_count(&b, churned);
    bool all = churned > 0 && attributed == churned;
    pkb_table_take(t, all ? PKB_TONE_GOOD : 0, &b, out);
    bool none = strcmp(json_string_value(json_object_get(c, "observer")), "none") == 0;
    double delta = pkb__obs_num(c, "workload_delta_s");
    if (none || isnan(delta)) /* none is what the others are measured against */
        pkb_table_add(t, 0, "%s", "–");
    else
        pkb_table_add(t, 0, "%+.4f", delta);
    double drops = pkb__obs_num(c, "drops_total");
    if (isnan(drops))
        pkb_table_add(t, 0, "%s", "–");
    else
        pkb_table_add(t, drops > 0 ? PKB_TONE_BAD : 0, "%.0f", drops);
    double seen = pkb__obs_num(c, "open_observed"), truth = pkb__obs_num(c, "open_truth");
    if (none)
        pkb_table_add(t, 0, "– / %.0f", truth);
    else
        pkb_table_add(t, seen == truth ? 0 : PKB_TONE_WARN, "%.0f / %.0f", seen, truth);
}

static void hold_table(const json_t *sum, double hold, bool color, pkb_buf *out)
{
    char title[64];
    snprintf(title, sizeof title, "Hold %.0f ms", hold);
    pkb_term_puts(out, color, PKB_TONE_BOLD, title);
    pkb_buf_puts(out, " (observer CPU-s per cell, median (min–max); workload: extra CPU-s against "
                      "none)\n");
    pkb_table *t = pkb_table_new("lllrrrr");
    pkb_table_heads(t, "rate/s", "observer", "CPU-s", "attributed", "workload", "drops",
                    "open at end", NULL);
    size_t r, o;
    const json_t *rv, *ov;
    json_array_foreach(json_object_get(sum, "rates"), r, rv)
    {
        json_array_foreach(json_object_get(sum, "observers"), o, ov)
        {
            const json_t *c =
                pkb__obs_cell(sum, hold, json_number_value(rv), json_string_value(ov));
            if (c != NULL && pkb__obs_measured(c))
                cell_row(t, c, out);
        }
    }
    pkb_table_finish(t, color, out);
}

/* The observers refused everywhere, once each, with the reason. */
static void refusals(const pkb_results *r, bool color, pkb_buf *out)
{
    const json_t *obs = json_object_get(pkb_results_field(r, "observe", "gates"), "observers");
    const char *name;
    const json_t *g;
    json_object_foreach((json_t *)obs, name, g)
    {
        if (json_is_true(json_object_get(g, "runs")))
            continue;
        pkb_term_puts(out, color, PKB_TONE_WARN, "SKIP");
        const char *why = json_string_value(json_object_get(g, "reason"));
        pkb_buf_printf(out, " %s: %s\n", name, why != NULL ? why : "(no reason recorded)");
    }
}

int pkb__observe_terminal(const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len)
{
    json_t *sum = pkb_observe_summarize(json_object_get(r->root, "series"));
    if (sum == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    size_t h;
    const json_t *hv;
    json_array_foreach(json_object_get(sum, "holds"), h, hv)
        hold_table(sum, json_number_value(hv), color, out);
    refusals(r, color, out);
    json_decref(sum);
    if (out->failed)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    return 0;
}
