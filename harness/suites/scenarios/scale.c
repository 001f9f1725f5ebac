/*
 * The fan-out at scale in the scenarios report: the series of the scenarios "fan_out_<N>" (those
 * with a "fan_out" object in the file, suite.c) read as one study of the cost per child against
 * the number of children N, all computed from the file:
 *
 *   - time per child: the series' median wall time per iteration / N (each iteration starts N
 *     children and reaps them all); its growth, time per child at the largest N / at the smallest;
 *   - the slope: least squares of log(time per child) on log(N) (common/fit.h's pkb_fit_loglog),
 *     the exponent of the power law through the medians — 0 flat, 1 a time per child that grows in
 *     proportion to N — with its R²;
 *   - memory per child in flight: the least-squares slope of the measuring worker's peak resident
 *     memory (VmHWM over its timed iterations) against N, in KiB per child: what one more child in
 *     flight adds, the worker's own baseline (its intercept) left out; descriptors per child the
 *     same from the descriptors it had open with all of one iteration's children started;
 *   - the targets (issue 36): processkit's time per child at the largest N within 1.25× of the
 *     smallest (its per-round ratio, paired as every Δ, scaled by the sizes: decided on its CI),
 *     below every other contender's at every N ≥ 256 (each pair's CI below 1), and its memory
 *     per child in flight at most 16 KiB (the slope: a measurement without a CI, stated as such).
 *
 * The Markdown section and the terminal tables are worded from one model (pkb__scale_collect); the
 * figure is scalefig.c's.
 */
#include "suites/scenarios/view.h"

#include "common/md.h"
#include "common/term.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROCESSKIT "processkit"

/* The targets' numbers. */
#define GROWTH_LIMIT     1.25
#define PEERS_FROM_N     256
#define MEMORY_LIMIT_KIB 16.0

/* ---- the model ----------------------------------------------------------------------------- */

/* 0 processkit, 1 its variants, 2 the rest: the report's order. */
static int rank(const char *c)
{
    return strcmp(c, PROCESSKIT) == 0 ? 0 : strncmp(c, PROCESSKIT "_", 11) == 0 ? 1 : 2;
}

/* N of a series of the fan-out at scale (its "fan_out" object), 0 for any other. */
static int children_of(const pkb_results_series *s)
{
    const json_t *n = json_object_get(json_object_get(s->json, "fan_out"), "children");
    json_int_t v = json_is_integer(n) ? json_integer_value(n) : 0;
    return v > 0 && v <= 1000000 ? (int)v : 0;
}

static double number_or(const json_t *o, const char *key, double none)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : none;
}

static void add_size(pkb__scale *m, int n)
{
    size_t i = 0;
    while (i < m->nsizes && m->sizes[i] < n)
        i++;
    if ((i < m->nsizes && m->sizes[i] == n) || m->nsizes == PKB__SCALE_MAX_SIZES)
        return;
    memmove(&m->sizes[i + 1], &m->sizes[i], (m->nsizes - i) * sizeof m->sizes[0]);
    m->sizes[i] = n;
    m->nsizes++;
}

static pkb__scale_line *line_of(pkb__scale *m, const char *contender)
{
    for (size_t i = 0; i < m->nlines; i++)
        if (strcmp(m->lines[i].contender, contender) == 0)
            return &m->lines[i];
    return NULL;
}

/* Each line's fits, from its points: log-log time, linear memory and descriptors. */
static void fit_line(const pkb__scale *m, pkb__scale_line *l)
{
    double x[PKB__SCALE_MAX_SIZES], t[PKB__SCALE_MAX_SIZES], xr[PKB__SCALE_MAX_SIZES],
        rss[PKB__SCALE_MAX_SIZES], xf[PKB__SCALE_MAX_SIZES], fds[PKB__SCALE_MAX_SIZES];
    size_t nt = 0, nr = 0, nf = 0;
    for (size_t i = 0; i < m->nsizes; i++) {
        const pkb__scale_point *p = &l->pt[i];
        if (p->s == NULL)
            continue;
        x[nt] = p->n;
        t[nt++] = p->per_child_ns;
        if (p->peak_rss_kib > 0) {
            xr[nr] = p->n;
            rss[nr++] = p->peak_rss_kib;
        }
        if (p->peak_fds > 0) {
            xf[nf] = p->n;
            fds[nf++] = p->peak_fds;
        }
    }
    l->has_time = pkb_fit_loglog(x, t, nt, &l->time) == 0;
    l->has_rss = pkb_fit_linear(xr, rss, nr, &l->rss) == 0;
    l->has_fds = pkb_fit_linear(xf, fds, nf, &l->fds) == 0;
}

int pkb__scale_collect(const pkb_results *r, pkb__scale *m)
{
    *m = (pkb__scale){0};
    for (size_t i = 0; i < r->nseries; i++)
        if (children_of(&r->series[i]) > 0)
            add_size(m, children_of(&r->series[i]));
    if (m->nsizes == 0)
        return 0;
    m->lines = calloc(r->nseries, sizeof *m->lines);
    if (m->lines == NULL)
        return -ENOMEM;
    for (int want = 0; want <= 2; want++) {
        for (size_t i = 0; i < r->nseries; i++) {
            const pkb_results_series *s = &r->series[i];
            int n = children_of(s);
            if (n == 0 || rank(s->contender) != want)
                continue;
            pkb__scale_line *l = line_of(m, s->contender);
            if (l == NULL) {
                l = &m->lines[m->nlines++];
                l->contender = s->contender;
            }
            size_t k = 0;
            while (k < m->nsizes && m->sizes[k] != n)
                k++;
            if (k == m->nsizes || !s->measured)
                continue; /* a size past the model's cap, or not timed */
            const json_t *fo = json_object_get(s->json, "fan_out");
            l->pt[k] = (pkb__scale_point){.n = n,
                                          .s = s,
                                          .per_child_ns = s->sum.median / n,
                                          .lo_ns = s->sum.min / n,
                                          .hi_ns = s->sum.max / n,
                                          .peak_rss_kib = number_or(fo, "peak_rss_kib", 0),
                                          .idle_fds = number_or(fo, "idle_fds", 0),
                                          .peak_fds = number_or(fo, "peak_fds", 0)};
            m->measured = true;
        }
    }
    for (size_t i = 0; i < m->nlines; i++)
        fit_line(m, &m->lines[i]);
    return 0;
}

void pkb__scale_free(pkb__scale *m)
{
    free(m->lines);
    *m = (pkb__scale){0};
}

/* The growth of a line: time per child at its largest measured N over its smallest; NaN with
 * fewer than two. */
static double growth(const pkb__scale *m, const pkb__scale_line *l, int *lo_n, int *hi_n)
{
    const pkb__scale_point *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < m->nsizes; i++) {
        if (l->pt[i].s == NULL)
            continue;
        lo = lo == NULL ? &l->pt[i] : lo;
        hi = &l->pt[i];
    }
    if (lo == NULL || lo == hi)
        return NAN;
    *lo_n = lo->n;
    *hi_n = hi->n;
    return hi->per_child_ns / lo->per_child_ns;
}

/* ---- the targets --------------------------------------------------------------------------- */

enum { NOT_CHECKED = PKB_TARGET_UNDECIDABLE + 1 };

struct targets {
    /* growth: processkit at its largest N against its smallest, per child */
    int lo_n, hi_n, growth_result;
    pkb_verdict growth_v;
    double growth_ratio, growth_lo, growth_hi;
    /* peers: processkit / every other contender at every N >= PEERS_FROM_N */
    int peers_result;
    size_t peers_checked, peers_met;
    char peers_why[512];
    /* memory */
    int memory_result;
    double memory_kib, memory_r2;
    size_t memory_n;
};

static void decide_growth(const pkb__scale *m, const pkb__scale_line *pk, struct targets *t)
{
    t->growth_result = NOT_CHECKED;
    if (pk == NULL || isnan(growth(m, pk, &t->lo_n, &t->hi_n)))
        return;
    const pkb__scale_point *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < m->nsizes; i++) {
        if (pk->pt[i].n == t->lo_n)
            lo = &pk->pt[i];
        if (pk->pt[i].n == t->hi_n)
            hi = &pk->pt[i];
    }
    if (pkb_verdict_pair(lo->s, hi->s, &t->growth_v) != 0)
        return;
    /* The pair compares iterations of lo_n and hi_n children: per child, scaled by the sizes. */
    double per = (double)t->lo_n / t->hi_n;
    t->growth_ratio = t->growth_v.s.ratio.estimate * per;
    t->growth_lo = t->growth_v.s.ratio.lo * per;
    t->growth_hi = t->growth_v.s.ratio.hi * per;
    t->growth_result = (int)pkb_target_check(&t->growth_v, GROWTH_LIMIT / per, false);
}

/* "behind `libuv` at N = 4096", "too noisy ... against `glib` at N = 256" collected into why. */
static void note_peer(struct targets *t, const char *what, const char *peer, int n)
{
    size_t k = strlen(t->peers_why);
    if (k + 80 < sizeof t->peers_why)
        snprintf(t->peers_why + k, sizeof t->peers_why - k, "%s%s %s at N = %d", k > 0 ? "; " : "",
                 what, peer, n);
}

static void decide_peers(const pkb__scale *m, const pkb__scale_line *pk, struct targets *t)
{
    size_t count[NOT_CHECKED] = {0};
    for (size_t i = 0; pk != NULL && i < m->nsizes; i++) {
        if (m->sizes[i] < PEERS_FROM_N || pk->pt[i].s == NULL)
            continue;
        for (size_t k = 0; k < m->nlines; k++) {
            const pkb__scale_line *o = &m->lines[k];
            pkb_verdict v;
            if (o == pk || o->pt[i].s == NULL || pkb_verdict_pair(o->pt[i].s, pk->pt[i].s, &v))
                continue;
            int res = (int)pkb_target_check(&v, 1.0, true);
            count[res]++;
            t->peers_checked++;
            if (res == PKB_TARGET_NOT_MET)
                note_peer(t, "behind", o->contender, m->sizes[i]);
            else if (res == PKB_TARGET_UNDECIDABLE)
                note_peer(t, "not shown ahead of", o->contender, m->sizes[i]);
        }
    }
    t->peers_met = count[PKB_TARGET_MET];
    t->peers_result = t->peers_checked == 0               ? NOT_CHECKED
                      : count[PKB_TARGET_NOT_MET] > 0     ? PKB_TARGET_NOT_MET
                      : count[PKB_TARGET_UNDECIDABLE] > 0 ? PKB_TARGET_UNDECIDABLE
                                                          : PKB_TARGET_MET;
}

static void decide(const pkb__scale *m, struct targets *t)
{
    *t = (struct targets){0};
    const pkb__scale_line *pk = line_of((pkb__scale *)m, PROCESSKIT);
    decide_growth(m, pk, t);
    decide_peers(m, pk, t);
    t->memory_result = NOT_CHECKED;
    if (pk != NULL && pk->has_rss) {
        t->memory_kib = pk->rss.slope;
        t->memory_r2 = pk->rss.r2;
        t->memory_n = pk->rss.n;
        t->memory_result = t->memory_kib <= MEMORY_LIMIT_KIB ? PKB_TARGET_MET : PKB_TARGET_NOT_MET;
    }
}

static const char *result_word(int result)
{
    return result == NOT_CHECKED ? "not checked"
                                 : pkb_target_result_name((pkb_target_result)result);
}

static pkb_tone result_tone(int result)
{
    return result == PKB_TARGET_MET       ? PKB_TONE_GOOD
           : result == PKB_TARGET_NOT_MET ? PKB_TONE_BAD
           : result == NOT_CHECKED        ? PKB_TONE_DIM
                                          : PKB_TONE_WARN;
}

/* The three targets as rows of (label, measured, result) cells, each cell built into `cell` and
 * handed to `row` (Markdown or terminal). */
typedef void (*cell_fn)(void *to, int col, pkb_tone tone, pkb_buf *cell);

static void target_rows(const struct targets *t, bool md, cell_fn put, void *to)
{
    pkb_buf c = {0};
    const char *q = md ? "`" : "";
    /* growth */
    pkb_buf_printf(&c,
                   "%sprocesskit%s's time per child at the largest N within %.2f× of the "
                   "smallest",
                   q, q, GROWTH_LIMIT);
    if (t->growth_result != NOT_CHECKED)
        pkb_buf_printf(&c, " (N = %d against N = %d)", t->hi_n, t->lo_n);
    put(to, 0, 0, &c);
    if (t->growth_result != NOT_CHECKED)
        pkb_buf_printf(&c, "%.3f× [%.3f×, %.3f×]", t->growth_ratio, t->growth_lo, t->growth_hi);
    else
        pkb_buf_puts(&c, "fewer than two sizes of processkit measured");
    put(to, 1, 0, &c);
    pkb_buf_puts(&c, result_word(t->growth_result));
    if (t->growth_result == PKB_TARGET_UNDECIDABLE) {
        char why[200] = "";
        pkb_verdict_why(&t->growth_v, 0, "the smaller N", "the larger N", why, sizeof why);
        pkb_buf_printf(&c, " (%s)", why[0] != '\0' ? why : "the CI straddles the limit");
    }
    put(to, 2, result_tone(t->growth_result), &c);
    /* peers */
    pkb_buf_printf(&c,
                   "%sprocesskit%s's time per child below every other contender's at every "
                   "N ≥ %d",
                   q, q, PEERS_FROM_N);
    put(to, 0, 0, &c);
    if (t->peers_checked > 0)
        pkb_buf_printf(&c, "ahead in %zu of %zu pairs (ratios below)", t->peers_met,
                       t->peers_checked);
    else
        pkb_buf_printf(&c, "no N ≥ %d with processkit and another contender measured",
                       PEERS_FROM_N);
    put(to, 1, 0, &c);
    pkb_buf_puts(&c, result_word(t->peers_result));
    if (t->peers_why[0] != '\0')
        pkb_buf_printf(&c, " (%s)", t->peers_why);
    put(to, 2, result_tone(t->peers_result), &c);
    /* memory */
    pkb_buf_printf(&c, "%sprocesskit%s's memory per child in flight at most %.0f KiB", q, q,
                   MEMORY_LIMIT_KIB);
    put(to, 0, 0, &c);
    if (t->memory_result != NOT_CHECKED)
        pkb_buf_printf(&c, "%.1f KiB per child (slope of the peak RSS over %zu sizes, R² %.3f)",
                       t->memory_kib, t->memory_n, t->memory_r2);
    else
        pkb_buf_puts(&c, "no peak RSS at two sizes");
    put(to, 1, 0, &c);
    pkb_buf_puts(&c, result_word(t->memory_result));
    put(to, 2, result_tone(t->memory_result), &c);
    pkb_buf_free(&c);
}

/* ---- cells --------------------------------------------------------------------------------- */

/* A time per child in the table's unit, or "–". */
static void cell_time(pkb_buf *b, const pkb__scale_point *p, double scale)
{
    if (p->s == NULL)
        pkb_buf_puts(b, "–");
    else
        pkb_fmt_rate(b, p->per_child_ns / scale);
}

/* A figure of a line's fits (printf's fmt and its values), or "n/a" where the line has none. */
static void cell_fit(pkb_buf *b, bool has, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void cell_fit(pkb_buf *b, bool has, const char *fmt, ...)
{
    if (!has) {
        pkb_buf_puts(b, "n/a");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    pkb_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

static void cell_growth(pkb_buf *b, const pkb__scale *m, const pkb__scale_line *l)
{
    int lo, hi;
    double g = growth(m, l, &lo, &hi);
    cell_fit(b, !isnan(g), "%.2f×", g);
}

/* The unit of every time per child: the one the smallest reads best in. */
static const char *table_unit(const pkb__scale *m, double *scale)
{
    double smallest = INFINITY;
    for (size_t i = 0; i < m->nlines; i++)
        for (size_t k = 0; k < m->nsizes; k++)
            if (m->lines[i].pt[k].s != NULL)
                smallest = fmin(smallest, m->lines[i].pt[k].per_child_ns);
    return pkb_time_unit(isfinite(smallest) ? smallest : 1000, scale);
}

/* The peak at the largest N a line measured: RSS in MiB and descriptors. */
static const pkb__scale_point *largest(const pkb__scale *m, const pkb__scale_line *l)
{
    const pkb__scale_point *p = NULL;
    for (size_t k = 0; k < m->nsizes; k++)
        if (l->pt[k].s != NULL)
            p = &l->pt[k];
    return p;
}

static void cell_peaks(pkb_buf *b, const pkb__scale *m, const pkb__scale_line *l)
{
    const pkb__scale_point *p = largest(m, l);
    if (p == NULL || (p->peak_rss_kib <= 0 && p->peak_fds <= 0)) {
        pkb_buf_puts(b, "n/a");
        return;
    }
    pkb_buf_printf(b, "N = %d: ", p->n);
    if (p->peak_rss_kib > 0)
        pkb_buf_printf(b, "%.1f MiB", p->peak_rss_kib / 1024);
    if (p->peak_fds > 0)
        pkb_buf_printf(b, "%s%.0f descriptors (%.0f before)", p->peak_rss_kib > 0 ? ", " : "",
                       p->peak_fds, p->idle_fds);
}

/* processkit / o at size k: "0.41× [0.39×, 0.44×]" or "–". */
static void cell_ratio(pkb_buf *b, const pkb__scale_line *pk, const pkb__scale_line *o, size_t k)
{
    pkb_verdict v;
    if (pk == NULL || o == pk || pk->pt[k].s == NULL || o->pt[k].s == NULL ||
        pkb_verdict_pair(o->pt[k].s, pk->pt[k].s, &v) != 0) {
        pkb_buf_puts(b, "–");
        return;
    }
    pkb_buf_printf(b, "%.2f× [%.2f×, %.2f×]", v.s.ratio.estimate, v.s.ratio.lo, v.s.ratio.hi);
}

/* The columns of a contender's row after its times per size, each written once for the Markdown
 * tables and the terminal's. */
enum column { SLOPE, R2, GROWTH, KIB, KIB_R2, FDS, PEAKS };

static void cell_of(pkb_buf *b, const pkb__scale *m, const pkb__scale_line *l, enum column col)
{
    switch (col) {
    case SLOPE:
        cell_fit(b, l->has_time, "%+.3f", l->time.slope);
        return;
    case R2:
        cell_fit(b, l->has_time, "%.3f", l->time.r2);
        return;
    case GROWTH:
        cell_growth(b, m, l);
        return;
    case KIB:
        cell_fit(b, l->has_rss, "%.1f", l->rss.slope);
        return;
    case KIB_R2:
        cell_fit(b, l->has_rss, "%.1f (R² %.3f)", l->rss.slope, l->rss.r2);
        return;
    case FDS:
        cell_fit(b, l->has_fds, "%.2f", l->fds.slope);
        return;
    case PEAKS:
        cell_peaks(b, m, l);
        return;
    }
}

/* ---- Markdown ------------------------------------------------------------------------------ */

static void md_put(void *to, int col, pkb_tone tone, pkb_buf *cell)
{
    pkb_buf *b = to;
    (void)tone;
    pkb_buf_puts(b, col == 0 ? "| " : " | ");
    pkb_md_text(b, cell->failed || cell->data == NULL ? "" : cell->data);
    if (col == 2)
        pkb_buf_puts(b, " |\n");
    b->failed |= cell->failed;
    pkb_buf_free(cell);
}

/* A Markdown table's rows, one per contender: its name, its times per size (none when scale is
 * NULL), then its columns `cols`; and the blank line after the table. */
static void md_line_rows(
    const pkb__scale *m, const double *scale, const enum column *cols, size_t ncols, pkb_buf *b)
{
    for (size_t i = 0; i < m->nlines; i++) {
        const pkb__scale_line *l = &m->lines[i];
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, l->contender);
        for (size_t k = 0; scale != NULL && k < m->nsizes; k++) {
            pkb_buf_puts(b, " | ");
            cell_time(b, &l->pt[k], *scale);
        }
        for (size_t c = 0; c < ncols; c++) {
            pkb_buf_puts(b, " | ");
            cell_of(b, m, l, cols[c]);
        }
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

static void md_time_table(const pkb__scale *m, pkb_buf *b)
{
    double scale;
    const char *unit = table_unit(m, &scale);
    pkb_buf_puts(b, "| contender |");
    for (size_t k = 0; k < m->nsizes; k++)
        pkb_buf_printf(b, " N = %d (%s) |", m->sizes[k], unit);
    pkb_buf_printf(b, " slope (log-log) | R² | growth, N = %d / N = %d |\n|---|",
                   m->sizes[m->nsizes - 1], m->sizes[0]);
    for (size_t k = 0; k < m->nsizes + 3; k++)
        pkb_buf_puts(b, "---:|");
    pkb_buf_puts(b, "\n");
    static const enum column cols[] = {SLOPE, R2, GROWTH};
    md_line_rows(m, &scale, cols, sizeof cols / sizeof *cols, b);
}

static void md_ratio_table(const pkb__scale *m, pkb_buf *b)
{
    const pkb__scale_line *pk = line_of((pkb__scale *)m, PROCESSKIT);
    if (pk == NULL || m->nlines < 2)
        return;
    pkb_buf_puts(b, "`processkit` / each other contender, time per child at the same N (the "
                    "per-round ratio, paired as Δ, with its 95% bootstrap CI; below 1: "
                    "`processkit` is faster):\n\n| contender |");
    for (size_t k = 0; k < m->nsizes; k++)
        pkb_buf_printf(b, " N = %d |", m->sizes[k]);
    pkb_buf_puts(b, "\n|---|");
    for (size_t k = 0; k < m->nsizes; k++)
        pkb_buf_puts(b, "---:|");
    pkb_buf_puts(b, "\n");
    for (size_t i = 0; i < m->nlines; i++) {
        const pkb__scale_line *o = &m->lines[i];
        if (o == pk)
            continue;
        pkb_buf_puts(b, "| ");
        pkb_md_code(b, o->contender);
        for (size_t k = 0; k < m->nsizes; k++) {
            pkb_buf_puts(b, " | ");
            cell_ratio(b, pk, o, k);
        }
        pkb_buf_puts(b, " |\n");
    }
    pkb_buf_puts(b, "\n");
}

static void md_memory_table(const pkb__scale *m, pkb_buf *b)
{
    pkb_buf_puts(b, "| contender | memory per child in flight (KiB) | descriptors per child in "
                    "flight | peaks at the largest N |\n|---|---:|---:|---|\n");
    static const enum column cols[] = {KIB_R2, FDS, PEAKS};
    md_line_rows(m, NULL, cols, sizeof cols / sizeof *cols, b);
}

/* The study of r into m for a view of it in b: false when there is none to show (the file has no
 * fan-out at scale, or no memory for it: b then marked failed), with nothing to free. */
static bool study_for(const pkb_results *r, pkb__scale *m, pkb_buf *b)
{
    if (pkb__scale_collect(r, m) != 0) {
        pkb__scale_free(m);
        b->failed = true;
        return false;
    }
    return m->nsizes > 0;
}

void pkb__md_scale(const pkb_results *r, bool plots, pkb_buf *b)
{
    pkb__scale m;
    if (!study_for(r, &m, b))
        return;
    pkb_buf_puts(b, "## Fan-out at scale\n\n");
    pkb_buf_puts(b, "N `cat` children of 32 bytes each, all started before any is reaped, at N = ");
    for (size_t k = 0; k < m.nsizes; k++)
        pkb_buf_printf(b, "%s%d", k == 0 ? "" : k + 1 == m.nsizes ? " and " : ", ", m.sizes[k]);
    pkb_buf_puts(
        b,
        " (the scenarios `fan_out_<N>` above). Each series ran in a measuring process of its own "
        "(`pkbench worker`, its descriptor limit raised to the hard limit), which timed every "
        "iteration itself, so a contender's peak memory and descriptors are its own and what one "
        "leaves behind costs no other. *Time per child* is the median wall time of an iteration "
        "over N; the *slope* is the least-squares slope of log(time per child) on log(N) — 0: "
        "flat, 1: the time per child grows in proportion to N — with its R²; *growth* is the time "
        "per child at the largest N over the smallest. *Memory per child in flight* is the "
        "least-squares slope of the measuring process's peak resident memory (VmHWM over its "
        "timed iterations) against N, so its own baseline drops out; *descriptors per child in "
        "flight* the same from the descriptors open with all of one iteration's children "
        "started.\n\nTime per child:\n\n");
    md_time_table(&m, b);
    if (plots && m.measured) {
        char stem[256];
        pkb_figure_stem(r, "fan_out_scale", stem, sizeof stem);
        pkb_md_figure(b, stem,
                      "time per child against N, both axes logarithmic, one line per "
                      "contender");
    }
    md_ratio_table(&m, b);
    pkb_buf_puts(b, "Memory and descriptors:\n\n");
    md_memory_table(&m, b);
    struct targets t;
    decide(&m, &t);
    pkb_buf_puts(b, "### Targets at scale\n\nDecided as the targets below are: a ratio on its "
                    "95% CI (met only when the whole CI meets it); the memory target on the "
                    "slope itself, a measurement without a CI.\n\n| target | measured | result "
                    "|\n|---|---|---|\n");
    target_rows(&t, true, md_put, b);
    pkb_buf_puts(b, "\n");
    pkb__scale_free(&m);
}

/* ---- the terminal -------------------------------------------------------------------------- */

static void term_put(void *to, int col, pkb_tone tone, pkb_buf *cell)
{
    pkb_table *t = ((void **)to)[0];
    pkb_buf *out = ((void **)to)[1];
    (void)col;
    pkb_table_take(t, tone, cell, out);
}

void pkb__term_scale(const pkb_results *r, bool color, pkb_buf *b)
{
    pkb__scale m;
    if (!study_for(r, &m, b))
        return;
    double scale;
    const char *unit = table_unit(&m, &scale);
    char align[PKB__SCALE_MAX_SIZES + 8] = "l";
    for (size_t k = 0; k < m.nsizes + 4; k++) /* the sizes, slope, growth, KiB, descriptors */
        align[k + 1] = 'r';
    pkb_table *t = pkb_table_new(align);
    pkb_table_add(t, 0, "contender");
    for (size_t k = 0; k < m.nsizes; k++)
        pkb_table_add(t, 0, "N=%d", m.sizes[k]);
    pkb_table_add(t, 0, "slope");
    pkb_table_add(t, 0, "growth");
    pkb_table_add(t, 0, "KiB/child");
    pkb_table_add(t, 0, "fds/child");
    pkb_buf c = {0};
    for (size_t i = 0; i < m.nlines; i++) {
        const pkb__scale_line *l = &m.lines[i];
        pkb_table_add(t, rank(l->contender) == 0 ? PKB_TONE_BOLD : 0, "%s", l->contender);
        for (size_t k = 0; k < m.nsizes; k++) {
            cell_time(&c, &l->pt[k], scale);
            pkb_table_take(t, 0, &c, b);
        }
        static const enum column cols[] = {SLOPE, GROWTH, KIB, FDS};
        for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) {
            cell_of(&c, &m, l, cols[k]);
            pkb_table_take(t, 0, &c, b);
        }
    }
    pkb_term_line(b, color, PKB_TONE_BOLD,
                  "fan-out at scale  (time per child in %s: median / N; "
                  "slope of log time on log N; per child in flight: slopes of peak RSS and "
                  "descriptors on N)",
                  unit);
    pkb_table_finish(t, color, b);
    struct targets tg;
    decide(&m, &tg);
    t = pkb_table_new("lll");
    pkb_table_add(t, 0, "target at scale");
    pkb_table_add(t, 0, "measured");
    pkb_table_add(t, 0, "result");
    void *to[2] = {t, b};
    target_rows(&tg, false, term_put, to);
    pkb_table_finish(t, color, b);
    pkb__scale_free(&m);
}
