/*
 * The phases suite for a terminal: what `pkbench run --suite phases` prints at its end and
 * `pkbench report --print` prints for its files, and the line it prints as each series finishes.
 *
 * Two tables: the phase series (median and mean ± sd per spawn+wait, and the difference from
 * os_spawn_plain of the same run), and the reconciliation — for every composite, the sum of
 * os_spawn_plain and the primitives it declares against its measured time, the residual, the
 * limit and whether the residual is flagged. Every number comes from the view (view.h) and the
 * cells from report.c's formatters, the code the Markdown report uses.
 */
#include "suites/phases/view.h"

#include "common/md.h"
#include "common/term.h"

#include <errno.h>
#include <string.h>

static void phase_table(const pkb_results *r, const pkb__phases_view *v, bool color, pkb_buf *out)
{
    pkb_term_puts(out, color, PKB_TONE_BOLD, "phase series");
    pkb_buf_puts(out, " (per spawn + wait of the tiny helper)\n");
    pkb_table *t = pkb_table_new("lrrr");
    pkb_table_heads(t, "series", "median", "mean ± sd", "vs os_spawn_plain", NULL);
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        const pkb__phase_series *p = &v->series[i];
        if (!s->measured || strcmp(p->kind, "phase") != 0)
            continue;
        pkb_buf c = {0};
        pkb_table_add(t, (long)i == v->plain ? PKB_TONE_BOLD : 0, "%s", s->contender);
        pkb__us(&c, p->median);
        pkb_table_take(t, 0, &c, out);
        pkb__mean_sd_us(&c, s, p);
        pkb_table_take(t, 0, &c, out);
        pkb__vs_plain(r, v, i, &c);
        pkb_table_take(t, 0, &c, out);
    }
    if (pkb_table_rows(t) > 1)
        pkb_table_render(t, "  ", color, out);
    else
        pkb_buf_puts(out, "  no measured phase series\n");
    pkb_table_free(t);
    for (size_t i = 0; i < r->nseries; i++) {
        const pkb_results_series *s = &r->series[i];
        if (s->measured || strcmp(v->series[i].kind, "phase") != 0)
            continue;
        pkb_term_line(out, color, PKB_TONE_DIM, "  not timed: %s — %s: %s", s->contender, s->status,
                      s->reason != NULL ? s->reason : "no reason given");
    }
    pkb_buf_puts(out, "\n");
}

/* One row of the reconciliation; a composite that could not be reconciled says why. */
static void recon_row(const pkb_results *r, const pkb__recon_row *row, pkb_table *t, pkb_buf *out)
{
    pkb_buf c = {0};
    pkb_table_add(t, 0, "%s", PKB__NAME(r, row->composite));
    pkb_table_add(t, 0, "%zu", row->nparts);
    if (!row->complete) {
        for (int k = 0; k < 5; k++)
            pkb_table_add(t, 0, "%s", "n/a");
        pkb_table_add(t, PKB_TONE_DIM, "not reconciled: %s %s", row->missing, row->why);
        return;
    }
    const pkb_reconciliation *rec = &row->rec;
    pkb__us(&c, rec->predicted_ns);
    pkb_table_take(t, 0, &c, out);
    pkb__us(&c, rec->measured_ns);
    pkb_table_take(t, 0, &c, out);
    pkb__signed_us(&c, rec->residual_ns);
    pkb_table_take(t, 0, &c, out);
    pkb_fmt_delta(&c, rec->residual_fraction);
    pkb_table_take(t, 0, &c, out);
    pkb__us(&c, rec->threshold_ns);
    pkb_table_take(t, 0, &c, out);
    pkb_table_add(t, rec->flagged ? PKB_TONE_WARN : PKB_TONE_GOOD, "%s",
                  rec->flagged ? "flagged" : "within");
}

static void
reconciliation(const pkb_results *r, const pkb__phases_view *v, bool color, pkb_buf *out)
{
    pkb_term_puts(out, color, PKB_TONE_BOLD, "reconciliation");
    pkb_buf_printf(out,
                   " (a composite's base, os_spawn_plain or the series it builds on, + the "
                   "primitives it declares, against the composite; flagged past max(%.0f%%, "
                   "%.0f × the combined sd))\n",
                   PKB_RECON_MIN_FRACTION * 100, PKB_RECON_SD_FACTOR);
    if (v->nrows == 0) {
        pkb_buf_puts(out, "  the file holds no composite phase series\n\n");
        return;
    }
    pkb_table *t = pkb_table_new("lrrrrrrl");
    pkb_table_heads(t, "composite", "parts", "sum", "measured", "residual", "residual %", "limit",
                    "", NULL);
    size_t flagged = 0;
    for (size_t i = 0; i < v->nrows; i++) {
        recon_row(r, &v->rows[i], t, out);
        flagged += v->rows[i].complete && v->rows[i].rec.flagged;
    }
    pkb_table_render(t, "  ", color, out);
    pkb_table_free(t);
    pkb_buf_printf(out, "  %zu of %zu composite%s reconciled", v->ncomplete, v->nrows,
                   v->nrows == 1 ? "" : "s");
    if (v->ncomplete > 0)
        pkb_buf_printf(out, "; %zu flagged", flagged);
    pkb_buf_puts(out, " (parts: how many primitives the sum adds to the base)\n\n");
}

int pkb__phases_terminal(const pkb_results *r, bool color, pkb_buf *out, char *err, size_t err_len)
{
    pkb__phases_view v;
    int rc = pkb__phases_view_load(r, &v, err, err_len);
    if (rc != 0)
        return rc;
    phase_table(r, &v, color, out);
    reconciliation(r, &v, color, out);
    pkb__phases_term_targets(r, color, out);
    pkb__phases_view_free(&v);
    if (out->failed)
        return pkb_fail(err, err_len, -ENOMEM, "rendering %s: out of memory", r->file);
    return 0;
}

void pkb__phases_series_line(const pkb_results *r, size_t index, pkb_buf *out)
{
    pkb__phases_view v;
    if (pkb__phases_view_load(r, &v, NULL, 0) != 0) {
        pkb_buf_puts(out, "(a malformed phases field: see pkbench report)");
        return;
    }
    const pkb_results_series *s = &r->series[index];
    const pkb__phase_series *p = &v.series[index];
    pkb_buf_puts(out, "median ");
    pkb__us(out, p->median);
    pkb_buf_puts(out, "  mean ");
    pkb__mean_sd_us(out, s, p);
    if (strcmp(p->kind, "primitive") == 0) {
        pkb_buf_printf(out, " per call (%.0f per iteration)", p->calls);
    } else if (strcmp(p->kind, "phase") == 0 && (v.plain >= 0 || s->baseline)) {
        pkb_buf_puts(out, "  ");
        pkb__vs_plain(r, &v, index, out);
        if ((long)index != v.plain)
            pkb_buf_puts(out, " vs os_spawn_plain");
    }
    pkb__phases_view_free(&v);
}
