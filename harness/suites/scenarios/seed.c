/*
 * The seed's table, side by side with ours: the seed document (shared/seeds/000: "Measured
 * results") set processkit against Tokio's and the standard library's process APIs in three
 * scenarios — small capture, large streaming, concurrent fan-out — with the delta of each
 * against `std_process`. A run that measured the Rust contenders (rust_std, rust_tokio: workers
 * speaking contenders/README.md's protocol) gets that layout here, every number from the file:
 * the median and mean ± sd with their unit, the throughput, and Δ against rust_std with its 95%
 * CI and the verdict `pkbench compare FILE --baseline-contender rust_std` gives (the family of
 * every series against rust_std, paired by round, at the seed's 10%). The posix_spawn-based
 * tables above it are unchanged. A file without either Rust contender has no such section.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"
#include "common/term.h"

#include <math.h>
#include <string.h>

#define SEED_BASE "rust_std"

static const struct {
    const char *scenario, *label; /* ours, and the seed's name for it */
} seed_scenarios[] = {
    {"spawn_capture_small", "Small capture"},
    {"stream_large_stdout", "Large streaming"},
    {"concurrent_fan_out", "Concurrent fan-out"},
};
static const char *const seed_contenders[] = {"processkit", "rust_tokio", SEED_BASE};

#define NSCEN (sizeof seed_scenarios / sizeof seed_scenarios[0])
#define NCONT (sizeof seed_contenders / sizeof seed_contenders[0])

bool pkb__seed_in_file(const pkb_results *r)
{
    for (size_t i = 0; i < r->nseries; i++)
        if (strcmp(r->series[i].contender, SEED_BASE) == 0 ||
            strcmp(r->series[i].contender, "rust_tokio") == 0)
            return true;
    return false;
}

/* Every measured series against rust_std in its scenario, at the seed's 10%: the family `pkbench
 * compare FILE --baseline-contender rust_std` decides. */
static int seed_verdicts(const pkb_results *r, pkb_verdict_set *vs, char *err, size_t err_len)
{
    pkb_verdict_options opts = {.threshold = PKB_VERDICT_NEGLIGIBLE};
    return pkb_verdict_contenders(r, SEED_BASE, &opts, vs, err, err_len);
}

/* One scenario of the seed's table: its rows' series, the base, the one unit of its times. */
struct seed_part {
    const pkb_results_series *s[NCONT];
    pkb__table tab;
};

static void seed_part(const pkb_results *r, size_t i, struct seed_part *p)
{
    double smallest = INFINITY;
    for (size_t k = 0; k < NCONT; k++) {
        p->s[k] = pkb_results_find_in(r, seed_scenarios[i].scenario, seed_contenders[k]);
        if (p->s[k] != NULL && p->s[k]->measured)
            smallest = fmin(smallest, p->s[k]->sum.median);
    }
    const pkb_results_series *base = p->s[NCONT - 1];
    p->tab = (pkb__table){.sc = NULL, .base = base != NULL && base->measured ? base : NULL};
    p->tab.unit = pkb_time_unit(isfinite(smallest) ? smallest : 1, &p->tab.scale);
}

/* Where the table's rows go (Markdown or the terminal): each row's cells in order — the scenario's
 * label, the contender, then median, mean ± sd, throughput, Δ, CI, verdict (measured), or the
 * status and reason (not) — through cell(ctx, column, tone, text), text the sink's to take; then
 * end(ctx). */
struct sink {
    bool md;
    void (*cell)(void *ctx, int col, pkb_tone tone, pkb_buf *text);
    void (*end)(void *ctx);
    void *ctx;
};

static void put(const struct sink *k, int col, pkb_tone tone, pkb_buf *text)
{
    k->cell(k->ctx, col, tone, text);
}

static void row_cells(const struct seed_part *p,
                      const pkb_verdict_set *vs,
                      const pkb_results_series *s,
                      const struct sink *k)
{
    pkb_buf c = {0};
    if (!s->measured) {
        pkb_buf_printf(&c, "not timed: %s", s->status);
        put(k, 2, PKB_TONE_DIM, &c);
        for (int col = 3; col < 8; col++)
            put(k, col, 0, &c);
        return;
    }
    pkb__row row;
    pkb__scenario_row(&p->tab, vs, s, &row);
    pkb__cell_median(&c, &p->tab, s);
    pkb_buf_printf(&c, " %s", p->tab.unit);
    put(k, 2, 0, &c);
    pkb__cell_mean_sd(&c, &p->tab, s, p->tab.unit);
    put(k, 3, 0, &c);
    pkb__cell_throughput(&c, s);
    if (s->work > 0)
        pkb_buf_printf(&c, " %s", s->unit);
    put(k, 4, 0, &c);
    if (p->tab.base == NULL)
        pkb_buf_puts(&c, "n/a");
    else
        pkb__cell_delta(&c, &row);
    pkb_tone tone = row.bucket == PKB__FASTER   ? PKB_TONE_GOOD
                    : row.bucket == PKB__SLOWER ? PKB_TONE_BAD
                                                : 0;
    put(k, 5, row.v != NULL ? tone : 0, &c);
    pkb__cell_ci(&c, &row);
    put(k, 6, 0, &c);
    pkb__cell_verdict(&c, &row, k->md);
    put(k, 7, row.v != NULL ? tone : 0, &c);
}

/* Every row, scenario by scenario and contender by contender. */
static void each_row(const pkb_results *r, const pkb_verdict_set *vs, const struct sink *out)
{
    pkb_buf c = {0};
    for (size_t i = 0; i < NSCEN; i++) {
        struct seed_part p;
        seed_part(r, i, &p);
        for (size_t k = 0; k < NCONT; k++) {
            if (p.s[k] == NULL)
                continue;
            pkb_buf_puts(&c, seed_scenarios[i].label);
            put(out, 0, 0, &c);
            pkb_buf_puts(&c, seed_contenders[k]);
            put(out, 1, k + 1 == NCONT ? PKB_TONE_BOLD : 0, &c);
            row_cells(&p, vs, p.s[k], out);
            out->end(out->ctx);
        }
    }
}

/* ---- Markdown ------------------------------------------------------------------------------ */

/* "| label | `contender` | cell | ... | cell |" */
static void md_cell(void *ctx, int col, pkb_tone tone, pkb_buf *text)
{
    (void)tone;
    pkb_buf *b = ctx;
    pkb_buf_puts(b, col == 0 ? "| " : " | ");
    if (text->data != NULL)
        (col == 0 ? pkb_buf_puts : col == 1 ? pkb_md_code : pkb_md_text)(b, text->data);
    b->failed |= text->failed;
    pkb_buf_free(text);
}

static void md_row_end(void *ctx)
{
    pkb_buf_puts(ctx, " |\n");
}

static void md_not_timed(const pkb_results *r, pkb_buf *b)
{
    bool any = false;
    for (size_t i = 0; i < NSCEN; i++)
        for (size_t k = 0; k < NCONT; k++) {
            const pkb_results_series *s =
                pkb_results_find_in(r, seed_scenarios[i].scenario, seed_contenders[k]);
            if (s == NULL || s->measured)
                continue;
            pkb_buf_puts(b, any ? "; " : "Not timed: ");
            any = true;
            pkb_md_code(b, s->name);
            pkb_buf_puts(b, ", ");
            pkb_md_text(b, s->reason != NULL ? s->reason : "no reason given");
        }
    if (any)
        pkb_buf_puts(b, ".\n\n");
}

void pkb__md_seed(const pkb_results *r, pkb_buf *b)
{
    if (!pkb__seed_in_file(r))
        return;
    pkb_verdict_set vs = {0};
    char err[256] = "";
    bool decided = seed_verdicts(r, &vs, err, sizeof err) == 0;
    pkb_buf_puts(b, "### The seed's table, side by side\n\n"
                    "The seed document's own layout — its three scenarios, `processkit` against "
                    "the Rust peers it was measured against (`rust_tokio`: `tokio::process`; "
                    "`rust_std`: `std::process`, workers timing themselves, contenders/README.md) "
                    "and the delta against `rust_std` as the seed's against `std_process` — on "
                    "this machine, in this run, beside the `posix_spawn`-based tables above. Δ is "
                    "computed as in those tables (paired by round where two series share their "
                    "rounds), with its 95% CI and the verdict `pkbench compare FILE "
                    "--baseline-contender rust_std` gives, at the seed's 10%. The seed reported "
                    "mean ± sd; the median is given first, as everywhere here.\n\n");
    if (!decided)
        pkb_buf_printf(b, "No verdicts: %s.\n\n", err);
    pkb_buf_puts(b, "| scenario | contender | median | mean ± sd | throughput | Δ median vs "
                    "`rust_std` | 95% CI | verdict |\n|---|---|---:|---:|---:|---:|---:|---|\n");
    each_row(r, &vs, &(struct sink){true, md_cell, md_row_end, b});
    pkb_buf_puts(b, "\n");
    md_not_timed(r, b);
    pkb_verdict_set_free(&vs);
}

/* ---- terminal ------------------------------------------------------------------------------ */

struct term_ctx {
    pkb_table *t;
    pkb_buf *out;
};

static void term_cell(void *ctx, int col, pkb_tone tone, pkb_buf *text)
{
    (void)col;
    struct term_ctx *x = ctx;
    pkb_table_take(x->t, tone, text, x->out);
}

static void term_row_end(void *ctx)
{
    pkb_table_end_row(((struct term_ctx *)ctx)->t);
}

void pkb__term_seed(const pkb_results *r, bool color, pkb_buf *out)
{
    if (!pkb__seed_in_file(r))
        return;
    pkb_verdict_set vs = {0};
    char err[256] = "";
    if (seed_verdicts(r, &vs, err, sizeof err) != 0)
        pkb_buf_printf(out, "(no verdicts against %s: %s)\n", SEED_BASE, err);
    pkb_term_puts(out, color, PKB_TONE_BOLD, "the seed's table");
    pkb_buf_puts(out, "  (its scenarios and Rust peers; Δ against rust_std, as above)\n");
    pkb_table *t = pkb_table_new("llrrrrrl");
    pkb_table_heads(t, "scenario", "contender", "median", "mean ± sd", "throughput",
                    "Δ vs rust_std", "95% CI", "verdict", NULL);
    struct term_ctx x = {t, out};
    each_row(r, &vs, &(struct sink){false, term_cell, term_row_end, &x});
    pkb_table_finish(t, color, out);
    pkb_verdict_set_free(&vs);
}
