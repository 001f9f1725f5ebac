/*
 * The fork/vfork study for a terminal: what `pkbench run --suite forkathon` prints at its end
 * and `pkbench report --print` prints for its files.
 *
 * Three tables, all read from pkb_forkathon_summarize (forkathon.h) — the code the Markdown
 * report and the suite's stored summary use — so no number here is computed another way:
 * Wemm's loop as time(1) reports it (medians over the runs), the ratio tables next to Wemm's
 * 2003 ratios (vfork vs fork, dynamic vs static, by wall time and by CPU), and the RSS ladder's
 * least-squares fits (µs per MiB of resident parent, R², the extra cost at 1 GiB).
 */
#include "suites/forkathon/view.h"

#include "common/md.h"
#include "common/term.h"
#include "suites/forkathon/forkathon.h"

#include <errno.h>
#include <string.h>

static void wemm_table(const json_t *rows, bool color, pkb_buf *out)
{
    pkb_term_puts(out, color, PKB_TONE_BOLD, "Wemm's forkathon");
    pkb_buf_puts(out, " (N × fork or vfork + _exit + waitpid; medians over the runs, as time(1) "
                      "reports them)\n");
    pkb_table *t = pkb_table_new("llrrrrrrr");
    pkb_table_heads(t, "binary", "loop", "N", "runs", "user", "sys", "wall", "%CPU", "per fork",
                    NULL);
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        pkb_buf c = {0};
        pkb_table_add(t, 0, "%s", json_string_value(json_object_get(row, "binary")));
        pkb_table_add(t, 0, "%s", json_string_value(json_object_get(row, "mechanism")));
        pkb_fmt_count(&c, (double)(long long)pkb__fk_num(row, "iterations"));
        pkb_table_take(t, 0, &c, out);
        pkb_table_add(t, 0, "%d", (int)pkb__fk_num(row, "runs"));
        pkb_table_add(t, 0, "%.3f s", pkb__fk_num(row, "user_s"));
        pkb_table_add(t, 0, "%.3f s", pkb__fk_num(row, "sys_s"));
        pkb_table_add(t, 0, "%.2f s", pkb__fk_num(row, "wall_s"));
        pkb_table_add(t, 0, "%.1f%%", pkb__fk_num(row, "cpu_pct"));
        pkb__fk_us(&c, pkb__fk_num(row, "us_per_fork"));
        pkb_table_take(t, 0, &c, out);
    }
    pkb_table_finish(t, color, out);
}

/* One ratio table: two rows (wall time, CPU) of this run's ratios and Wemm's. */
static void ratio_table(const json_t *sum,
                        const char *title,
                        const char *group,
                        const char *k1,
                        const char *k2,
                        bool color,
                        pkb_buf *out)
{
    pkb_term_puts(out, color, PKB_TONE_BOLD, title);
    pkb_buf_puts(out, "\n");
    pkb_table *t = pkb_table_new("lrrrr");
    pkb_table_add(t, 0, "%s", "");
    pkb_table_add(t, 0, "%s", k1);
    pkb_table_add(t, 0, "%s", k2);
    pkb_table_add(t, 0, "Wemm 2003 %s", k1);
    pkb_table_add(t, 0, "Wemm 2003 %s", k2);
    static const char *const rows[][2] = {{"wall time", ""}, {"CPU (user + sys)", "_cpu"}};
    for (size_t r = 0; r < 2; r++) {
        char key[64];
        snprintf(key, sizeof key, "%s%s", group, rows[r][1]);
        pkb_table_add(t, 0, "%s", rows[r][0]);
        static const char *const sets[] = {"ratios", "ratios", "ratios_2003", "ratios_2003"};
        for (int k = 0; k < 4; k++) {
            const json_t *v = json_object_get(json_object_get(json_object_get(sum, sets[k]), key),
                                              k % 2 == 0 ? k1 : k2);
            pkb_buf c = {0};
            pkb__fk_ratio(&c, v);
            pkb_table_take(t, k < 2 ? PKB_TONE_BOLD : PKB_TONE_DIM, &c, out);
        }
    }
    pkb_table_finish(t, color, out);
}

static void fit_table(const json_t *curves, bool color, pkb_buf *out)
{
    pkb_term_puts(out, color, PKB_TONE_BOLD, "spawn cost against the parent's RSS");
    pkb_buf_puts(out, " (least-squares fit of the median µs per spawn+exec+wait against VmRSS)\n");
    pkb_table *t = pkb_table_new("llrrrr");
    pkb_table_heads(t, "mechanism", "THP", "slope (µs/MiB)", "R²", "points", "extra at 1 GiB",
                    NULL);
    size_t i;
    const json_t *c;
    json_array_foreach(curves, i, c)
    {
        const json_t *fit = json_object_get(c, "fit");
        pkb_table_add(t, 0, "%s", json_string_value(json_object_get(c, "mechanism")));
        pkb_table_add(t, 0, "%s", json_string_value(json_object_get(c, "thp")));
        if (!json_is_object(fit)) {
            pkb_table_add(t, PKB_TONE_DIM, "n/a (fewer than two RSS values)");
            pkb_table_end_row(t);
            continue;
        }
        double slope = pkb__fk_num(fit, "slope_us_per_mib");
        pkb_table_add(t, 0, "%.3f", slope);
        pkb_table_add(t, 0, "%.4f", pkb__fk_num(fit, "r2"));
        pkb_table_add(t, 0, "%d", (int)pkb__fk_num(fit, "n"));
        pkb_buf b = {0};
        pkb__fk_us(&b, slope * 1024);
        pkb_table_take(t, 0, &b, out);
    }
    pkb_table_finish(t, color, out);
}

static void not_measured(const pkb_results *r, bool color, pkb_buf *out)
{
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        if (s->measured)
            continue;
        pkb_term_line(out, color, PKB_TONE_DIM, "not measured: %s — %s: %s", s->name, s->status,
                      s->reason != NULL ? s->reason : "no reason given");
    }
}

int pkb__forkathon_terminal(
    const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len)
{
    json_t *sum = pkb_forkathon_summarize(json_object_get(r->root, "series"));
    if (sum == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    const json_t *rows = json_object_get(sum, "wemm"), *curves = json_object_get(sum, "curves");
    if (json_array_size(rows) > 0) {
        wemm_table(rows, color, out);
        ratio_table(sum, "vfork vs fork (fork ÷ vfork: how many times faster vfork is)",
                    "vfork_vs_fork", "static", "dynamic", color, out);
        ratio_table(sum, "dynamic vs static (dynamic ÷ static: what the linkage costs)",
                    "dynamic_vs_static", "fork", "vfork", color, out);
    }
    if (json_array_size(curves) > 0)
        fit_table(curves, color, out);
    if (json_array_size(rows) == 0 && json_array_size(curves) == 0)
        pkb_buf_puts(out, "Neither part of the study was measured in this file.\n\n");
    not_measured(r, color, out);
    json_decref(sum);
    if (out->failed)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    return 0;
}
