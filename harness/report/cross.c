/*
 * cross — the model of a table of many results files (cross.h): keys read, observations placed in
 * rows and columns, each cell decided from its file's own verdict family (results/verdict.h, the
 * family the file's report decides), cells that hold several files pooled and decided as one
 * family per table, then the keys every file shares and the keys that differ inside a row.
 * cross_render.c writes it out.
 */
#define _GNU_SOURCE
#include "report/cross.h"

#include "common/buf.h"
#include "results/verdict.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_MAX 512

/* ==== keys ==================================================================================== */

/* Every key is one some file has; a key none has is named with the keys there are. */
static int
check_keys(const pkb_many *m, char **keys, size_t n, const char *opt, char *err, size_t err_len)
{
    for (size_t k = 0; k < n; k++) {
        bool found = false;
        for (size_t f = 0; f < m->n && !found; f++)
            found = pkb_identity_key_in(&m->files[f].r, keys[k]);
        if (found)
            continue;
        pkb_buf names = {0};
        for (size_t i = 0; i < pkb_identity_key_count; i++)
            pkb_buf_printf(&names, "%s%s", i > 0 ? ", " : "", pkb_identity_keys[i].name);
        pkb_fail(err, err_len, -EINVAL,
                 "%s: no file has a key '%s' (keys: %s, or a field of the files' environment or "
                 "settings)",
                 opt, keys[k], names.failed ? "?" : names.data);
        pkb_buf_free(&names);
        return -EINVAL;
    }
    return 0;
}

/* ==== observations ============================================================================ */

struct obs {
    size_t file;
    const pkb_results_series *s;
    const pkb_verdict *v;  /* its pair in the file's family, or NULL */
    const char *base_name; /* the contender v compares it with */
    bool is_base;
    size_t row, col;
};

/* What building one suite's table needs. */
struct build {
    const pkb_cross *c;
    const pkb_verdict_set *sets; /* per file */
    pkb_cross_table *t;
    struct obs *obs;
    size_t nobs, cap;
    size_t rows_cap, cols_cap;
};

/* The index of the tuple values[0..nkeys) among tuples[0..*n), appended when new. */
static long
find_or_add(char ***tuples, size_t *n, size_t *cap, size_t nkeys, char values[][VALUE_MAX])
{
    for (size_t i = 0; i < *n; i++) {
        size_t k = 0;
        while (k < nkeys && strcmp((*tuples)[i * nkeys + k], values[k]) == 0)
            k++;
        if (k == nkeys)
            return (long)i;
    }
    char **t = pkb_grow(*tuples, cap, *n + 1, nkeys * sizeof *t, 16);
    if (t == NULL)
        return -1;
    *tuples = t;
    for (size_t k = 0; k < nkeys; k++)
        if (((*tuples)[*n * nkeys + k] = strdup(values[k])) == NULL) {
            for (size_t j = 0; j < k; j++)
                free((*tuples)[*n * nkeys + j]);
            return -1;
        }
    return (long)(*n)++;
}

static int add_obs(struct build *b, size_t f, const pkb_results_series *s)
{
    const pkb_cross *c = b->c;
    const pkb_results *r = &c->files.files[f].r;
    char rv[8][VALUE_MAX], cv[8][VALUE_MAX];
    for (size_t k = 0; k < c->nrow_keys; k++)
        pkb_identity_key(r, s, c->row_keys[k], rv[k], VALUE_MAX);
    for (size_t k = 0; k < c->ncol_keys; k++)
        pkb_identity_key(r, s, c->col_keys[k], cv[k], VALUE_MAX);
    long row = find_or_add(&b->t->row_value, &b->t->nrows, &b->rows_cap, c->nrow_keys, rv);
    long col = find_or_add(&b->t->col_value, &b->t->ncols, &b->cols_cap, c->ncol_keys, cv);
    if (row < 0 || col < 0)
        return -ENOMEM;
    struct obs *o = pkb_grow(b->obs, &b->cap, b->nobs + 1, sizeof *o, 64);
    if (o == NULL)
        return -ENOMEM;
    b->obs = o;
    const pkb_verdict_set *set = &b->sets[f];
    const pkb_verdict *v = pkb_verdict_set_find(set, s);
    const char *baseline = c->opts.baseline;
    b->obs[b->nobs++] = (struct obs){
        .file = f,
        .s = s,
        .v = v,
        .base_name = v != NULL ? set->base[v - set->v]->contender : NULL,
        .is_base = baseline != NULL ? strcmp(s->contender, baseline) == 0 : s->baseline,
        .row = (size_t)row,
        .col = (size_t)col,
    };
    return 0;
}

/* ==== cells =================================================================================== */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A cell of one file: the file's own verdict, as its report gives it. */
static void fill_one(const struct build *b, const struct obs *o, pkb_cross_cell *cell)
{
    const pkb_results_series *s = o->s;
    cell->files = 1;
    cell->median_ns = s->measured ? s->sum.median : NAN;
    if (!s->measured) {
        cell->kind = PKB_CROSS_UNMEASURED;
        cell->status = s->status;
        cell->reason = s->reason;
    } else if (b->c->opts.absolute) {
        cell->kind = PKB_CROSS_ABSOLUTE;
    } else if (o->is_base) {
        cell->kind = PKB_CROSS_BASELINE;
    } else if (o->v == NULL) {
        cell->kind = PKB_CROSS_NO_BASELINE;
    } else {
        cell->kind = PKB_CROSS_RATIO;
        cell->ratio = o->v->s.ratio;
        cell->paired = o->v->paired;
        cell->word = pkb_verdict_word_of(o->v);
        cell->noise_floor = o->v->noise_floor;
        cell->base = o->base_name;
    }
}

/* A pooled pair waiting for its family's decision: the arrays it owns, the cell it fills. */
struct pooled {
    pkb_verdict v;
    double *base, *cand;
    int *base_round, *cand_round;
    pkb_cross_cell *cell;
};

/* The pair of the cell's files together: their rounds made distinct per file (a round of one
 * run is no round of another) when every file has rounds, else their samples as one sample
 * each side. */
static int pool(const struct obs *const *os, size_t n, bool rounds, struct pooled *p)
{
    size_t nb = 0, nc = 0;
    for (size_t i = 0; i < n; i++) {
        nb += os[i]->v->nbase;
        nc += os[i]->v->ncand;
    }
    memset(p, 0, sizeof *p);
    p->base = malloc(nb * sizeof *p->base);
    p->cand = malloc(nc * sizeof *p->cand);
    p->base_round = rounds ? malloc(nb * sizeof *p->base_round) : NULL;
    p->cand_round = rounds ? malloc(nc * sizeof *p->cand_round) : NULL;
    if (p->base == NULL || p->cand == NULL || (rounds && (!p->base_round || !p->cand_round)))
        return -ENOMEM;
    size_t ib = 0, ic = 0;
    long long offset = 0; /* the rounds of earlier files: each file's rounds come after them */
    for (size_t i = 0; i < n; i++) {
        const pkb_verdict *v = os[i]->v;
        int last = 0;
        for (size_t k = 0; rounds && k < v->nbase; k++)
            last = v->base_round[k] > last ? v->base_round[k] : last;
        for (size_t k = 0; rounds && k < v->ncand; k++)
            last = v->cand_round[k] > last ? v->cand_round[k] : last;
        for (size_t k = 0; k < v->nbase; k++, ib++) {
            p->base[ib] = v->base[k];
            if (rounds)
                p->base_round[ib] = v->base_round[k] + (int)offset;
        }
        for (size_t k = 0; k < v->ncand; k++, ic++) {
            p->cand[ic] = v->cand[k];
            if (rounds)
                p->cand_round[ic] = v->cand_round[k] + (int)offset;
        }
        offset += last;
        p->v.noise_floor = fmax(p->v.noise_floor, v->noise_floor);
    }
    p->v.name = os[0]->s->name;
    p->v.base = p->base;
    p->v.nbase = nb;
    p->v.cand = p->cand;
    p->v.ncand = nc;
    p->v.base_round = p->base_round;
    p->v.cand_round = p->cand_round;
    return 0;
}

static void pooled_free(struct pooled *p)
{
    free(p->base);
    free(p->cand);
    free(p->base_round);
    free(p->cand_round);
}

/* The decision fill_many (below) asks for a cell of several files, with its scratch: medians and
 * pv, n entries each. */
static int decide_many(const struct build *b,
                       const struct obs *const *os,
                       size_t n,
                       double *medians,
                       const struct obs **pv,
                       pkb_cross_cell *cell,
                       struct pooled *pending,
                       size_t *npending)
{
    size_t measured = 0, bases = 0, with_v = 0;
    const struct obs *first_unmeasured = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!os[i]->s->measured) {
            first_unmeasured = first_unmeasured ? first_unmeasured : os[i];
            continue;
        }
        medians[measured++] = os[i]->s->sum.median;
        bases += os[i]->is_base;
        with_v += os[i]->v != NULL;
    }
    if (measured > 0) {
        qsort(medians, measured, sizeof *medians, cmp_double);
        cell->median_ns = pks_quantile_sorted(medians, measured, 0.5);
    }
    if (measured == 0) {
        cell->kind = PKB_CROSS_UNMEASURED;
        cell->status = first_unmeasured->s->status;
        cell->reason = first_unmeasured->s->reason;
        return 0;
    }
    if (b->c->opts.absolute) {
        cell->kind = PKB_CROSS_ABSOLUTE;
        return 0;
    }
    if (bases == measured) {
        cell->kind = PKB_CROSS_BASELINE;
        return 0;
    }
    if (with_v == 0) {
        cell->kind = PKB_CROSS_NO_BASELINE;
        return 0;
    }
    /* The files with a pair: rounds in all of them, or one host, pool; else no CI. */
    size_t k = 0;
    bool rounds = true, one_host = true;
    for (size_t i = 0; i < n; i++) {
        if (!os[i]->s->measured || os[i]->v == NULL)
            continue;
        pv[k++] = os[i];
        rounds = rounds && os[i]->v->base_round != NULL && os[i]->v->cand_round != NULL;
        one_host = one_host && strcmp(b->c->files.files[os[i]->file].id.host_id,
                                      b->c->files.files[pv[0]->file].id.host_id) == 0;
    }
    cell->kind = PKB_CROSS_RATIO;
    cell->base = pv[0]->base_name;
    for (size_t i = 1; i < k; i++)
        if (strcmp(pv[i]->base_name, cell->base) != 0)
            cell->base = NULL; /* several baselines (several platforms in one cell) */
    long long total = 0;       /* every file's last round: the pooled numbering must fit an int */
    for (size_t i = 0; rounds && i < k; i++)
        total += PKB_RESULTS_MAX_ROUND;
    rounds = rounds && total < INT_MAX;
    if (!rounds && !one_host) {
        double log_sum = 0;
        for (size_t i = 0; i < k; i++) {
            log_sum += log(pv[i]->v->s.ratio.estimate);
            cell->noise_floor = fmax(cell->noise_floor, pv[i]->v->noise_floor);
        }
        cell->ratio = (pks_interval){.lo = NAN, .estimate = exp(log_sum / (double)k), .hi = NAN};
        cell->word = PKB_WORD_UNDECIDABLE;
        return 0;
    }
    struct pooled *p = &pending[(*npending)++];
    int rc = pool(pv, k, rounds, p);
    p->cell = cell;
    return rc;
}

/* A cell of several files. A pair to decide is appended to `pending` (its family is the
 * table's pooled cells); *npending counts them. */
static int fill_many(const struct build *b,
                     const struct obs *const *os,
                     size_t n,
                     pkb_cross_cell *cell,
                     struct pooled *pending,
                     size_t *npending)
{
    cell->files = n;
    double *medians = malloc(n * sizeof *medians);
    const struct obs **pv = malloc(n * sizeof *pv);
    int rc = medians != NULL && pv != NULL ? 0 : -ENOMEM;
    if (rc == 0)
        rc = decide_many(b, os, n, medians, pv, cell, pending, npending);
    free(medians);
    free(pv);
    return rc;
}

/* Every cell: one file as its report decides it, several pooled and decided together. */
static int fill_cells(struct build *b)
{
    pkb_cross_table *t = b->t;
    size_t ncells = t->nrows * t->ncols;
    t->cells = calloc(ncells > 0 ? ncells : 1, sizeof *t->cells);
    size_t *count = calloc(ncells + 1, sizeof *count);
    const struct obs **sorted = calloc(b->nobs > 0 ? b->nobs : 1, sizeof *sorted);
    struct pooled *pending = calloc(ncells > 0 ? ncells : 1, sizeof *pending);
    int rc = t->cells && count && sorted && pending ? 0 : -ENOMEM;
    /* Observations grouped by cell: counts, then starts, then placed in order. */
    for (size_t i = 0; rc == 0 && i < b->nobs; i++)
        count[b->obs[i].row * t->ncols + b->obs[i].col + 1]++;
    for (size_t i = 0; rc == 0 && i < ncells; i++)
        count[i + 1] += count[i];
    size_t *at = rc == 0 ? calloc(ncells > 0 ? ncells : 1, sizeof *at) : NULL;
    if (rc == 0 && at == NULL)
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < b->nobs; i++) {
        size_t cell = b->obs[i].row * t->ncols + b->obs[i].col;
        sorted[count[cell] + at[cell]++] = &b->obs[i];
    }
    size_t npending = 0;
    for (size_t cell = 0; rc == 0 && cell < ncells; cell++) {
        size_t n = count[cell + 1] - count[cell];
        const struct obs *const *os = sorted + count[cell];
        if (n == 1)
            fill_one(b, os[0], &t->cells[cell]);
        else if (n > 1)
            rc = fill_many(b, os, n, &t->cells[cell], pending, &npending);
    }
    for (size_t i = 0; rc == 0 && i < b->nobs; i++)
        if (json_object_get(b->c->files.files[b->obs[i].file].r.root, "noise_floor") != NULL)
            t->col_floor[b->obs[i].col] = true;
    pkb_verdict *family = rc == 0 ? calloc(npending > 0 ? npending : 1, sizeof *family) : NULL;
    if (rc == 0 && family == NULL)
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < npending; i++)
        family[i] = pending[i].v;
    if (rc == 0)
        rc = pkb_verdict_family(family, npending,
                                &(pkb_verdict_options){.threshold = PKB_VERDICT_NEGLIGIBLE});
    for (size_t i = 0; rc == 0 && i < npending; i++) {
        pkb_cross_cell *cell = pending[i].cell;
        cell->ratio = family[i].s.ratio;
        cell->paired = family[i].paired;
        cell->word = pkb_verdict_word_of(&family[i]);
        cell->noise_floor = family[i].noise_floor;
    }
    for (size_t i = 0; i < npending; i++)
        pooled_free(&pending[i]);
    free(family);
    free(pending);
    free(at);
    free(sorted);
    free(count);
    return rc;
}

/* ==== shared keys and differences ============================================================= */

/* The keys compared inside rows: what results/identity.h compares files on, but the rows' and
 * the columns' own keys. */
static int
compared_keys(const struct build *b, const size_t *files, size_t nfiles, char ***keys, size_t *n)
{
    const pkb_cross *c = b->c;
    const pkb_results **rs = calloc(nfiles > 0 ? nfiles : 1, sizeof *rs);
    char **exclude = calloc(c->nrow_keys + c->ncol_keys + 1, sizeof *exclude);
    int rc = rs != NULL && exclude != NULL ? 0 : -ENOMEM;
    for (size_t f = 0; rc == 0 && f < nfiles; f++)
        rs[f] = &c->files.files[files[f]].r;
    for (size_t k = 0; rc == 0 && k < c->nrow_keys; k++)
        exclude[k] = c->row_keys[k];
    for (size_t k = 0; rc == 0 && k < c->ncol_keys; k++)
        exclude[c->nrow_keys + k] = c->col_keys[k];
    if (rc == 0)
        rc = pkb_identity_compared_keys(rs, nfiles, exclude, c->nrow_keys + c->ncol_keys, keys, n);
    free(rs);
    free(exclude);
    return rc;
}

static long value_index(char **values, size_t n, const char *v)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(values[i], v) == 0)
            return (long)i;
    return -1;
}

/* One key: the rows where its files disagree, its values and their columns. 0 with d->key
 * NULL when it agrees everywhere. */
static int diff_key(const struct build *b, const char *key, char **file_value, pkb_cross_diff *d)
{
    const pkb_cross_table *t = b->t;
    memset(d, 0, sizeof *d);
    d->in_row = calloc(t->nrows > 0 ? t->nrows : 1, sizeof *d->in_row);
    if (d->in_row == NULL)
        return -ENOMEM;
    for (size_t r = 0; r < t->nrows; r++) {
        const char *first = NULL;
        for (size_t i = 0; i < b->nobs && !d->in_row[r]; i++) {
            if (b->obs[i].row != r)
                continue;
            const char *v = file_value[b->obs[i].file];
            if (first == NULL)
                first = v;
            else if (strcmp(first, v) != 0)
                d->in_row[r] = true;
        }
        d->nrows_differ += d->in_row[r];
    }
    if (d->nrows_differ == 0) {
        free(d->in_row);
        d->in_row = NULL;
        return 0;
    }
    size_t cap = 4;
    d->values = calloc(cap, sizeof *d->values);
    d->in_col = calloc(cap * t->ncols, sizeof *d->in_col);
    d->key = strdup(key);
    if (d->values == NULL || d->in_col == NULL || d->key == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < b->nobs; i++) {
        if (!d->in_row[b->obs[i].row])
            continue;
        const char *v = file_value[b->obs[i].file];
        long k = value_index(d->values, d->nvalues, v);
        if (k < 0) {
            if (d->nvalues == cap) {
                char **values = realloc(d->values, 2 * cap * sizeof *values);
                bool *in_col =
                    values ? realloc(d->in_col, 2 * cap * t->ncols * sizeof *in_col) : NULL;
                if (values != NULL)
                    d->values = values;
                if (in_col == NULL)
                    return -ENOMEM;
                memset(in_col + cap * t->ncols, 0, cap * t->ncols * sizeof *in_col);
                d->in_col = in_col;
                cap *= 2;
            }
            if ((d->values[d->nvalues] = strdup(v)) == NULL)
                return -ENOMEM;
            k = (long)d->nvalues++;
        }
        d->in_col[(size_t)k * t->ncols + b->obs[i].col] = true;
    }
    return 0;
}

static void diff_free(pkb_cross_diff *d)
{
    free(d->key);
    pkb_strings_free(d->values, d->nvalues);
    free(d->in_col);
    free(d->in_row);
}

/* The table's files (indexes), each once. */
static size_t table_files(const struct build *b, size_t *files)
{
    size_t n = 0;
    for (size_t i = 0; i < b->nobs; i++) {
        size_t k = 0;
        while (k < n && files[k] != b->obs[i].file)
            k++;
        if (k == n)
            files[n++] = b->obs[i].file;
    }
    return n;
}

/* The keys every file of the table shares (named keys only, not a row's or a column's), and the
 * keys that differ inside a row. */
static int shared_and_differing(struct build *b)
{
    pkb_cross_table *t = b->t;
    const pkb_cross *c = b->c;
    size_t *files = calloc(c->files.n, sizeof *files);
    if (files == NULL)
        return -ENOMEM;
    size_t nfiles = table_files(b, files);
    t->nfiles = nfiles;
    char **keys = NULL;
    size_t nkeys = 0;
    int rc = compared_keys(b, files, nfiles, &keys, &nkeys);
    char **value = calloc(c->files.n, sizeof *value);
    t->diffs = calloc(nkeys > 0 ? nkeys : 1, sizeof *t->diffs);
    t->common_key = calloc(nkeys > 0 ? nkeys : 1, sizeof *t->common_key);
    t->common_value = calloc(nkeys > 0 ? nkeys : 1, sizeof *t->common_value);
    if (rc == 0 && (value == NULL || t->diffs == NULL || !t->common_key || !t->common_value))
        rc = -ENOMEM;
    for (size_t k = 0; rc == 0 && k < nkeys; k++) {
        char buf[VALUE_MAX];
        bool same = true;
        for (size_t f = 0; rc == 0 && f < nfiles; f++) {
            pkb_identity_key(&c->files.files[files[f]].r, NULL, keys[k], buf, sizeof buf);
            free(value[files[f]]);
            if ((value[files[f]] = strdup(buf)) == NULL)
                rc = -ENOMEM;
            else
                same = same && strcmp(value[files[f]], value[files[0]]) == 0;
        }
        if (rc != 0)
            break;
        if (same && pkb_identity_key_named(keys[k]) && strcmp(value[files[0]], "n/a") != 0) {
            t->common_key[t->ncommon] = strdup(keys[k]);
            t->common_value[t->ncommon] = strdup(value[files[0]]);
            if (t->common_key[t->ncommon++] == NULL || t->common_value[t->ncommon - 1] == NULL)
                rc = -ENOMEM;
            continue;
        }
        rc = diff_key(b, keys[k], value, &t->diffs[t->ndiffs]);
        if (rc == 0 && t->diffs[t->ndiffs].key != NULL)
            t->ndiffs++;
        else
            diff_free(&t->diffs[t->ndiffs]);
    }
    pkb_strings_free(value, c->files.n);
    pkb_strings_free(keys, nkeys);
    free(files);
    return rc;
}

/* ==== tables ================================================================================== */

static char *join_labels(char **values, size_t n)
{
    pkb_buf b = {0};
    for (size_t i = 0; i < n; i++)
        pkb_buf_printf(&b, "%s%s", i > 0 ? " · " : "", values[i]);
    if (b.failed) {
        pkb_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* The table of one suite. */
static int
build_table(pkb_cross *c, const pkb_verdict_set *sets, const char *suite, pkb_cross_table *t)
{
    struct build b = {.c = c, .sets = sets, .t = t};
    t->suite = strdup(suite);
    int rc = t->suite != NULL ? 0 : -ENOMEM;
    t->nkeys_r = c->nrow_keys;
    t->nkeys_c = c->ncol_keys;
    for (size_t f = 0; rc == 0 && f < c->files.n; f++) {
        const pkb_results *r = &c->files.files[f].r;
        if (strcmp(pkb_identity_suite(r->suite), suite) != 0)
            continue;
        for (size_t i = 0; rc == 0 && i < r->nseries; i++)
            rc = add_obs(&b, f, &r->series[i]);
    }
    t->col_floor = rc == 0 ? calloc(t->ncols > 0 ? t->ncols : 1, sizeof *t->col_floor) : NULL;
    t->row_label = rc == 0 ? calloc(t->nrows > 0 ? t->nrows : 1, sizeof *t->row_label) : NULL;
    t->col_label = rc == 0 ? calloc(t->ncols > 0 ? t->ncols : 1, sizeof *t->col_label) : NULL;
    if (rc == 0 && (t->col_floor == NULL || t->row_label == NULL || t->col_label == NULL))
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < t->nrows; i++)
        if ((t->row_label[i] = join_labels(t->row_value + i * t->nkeys_r, t->nkeys_r)) == NULL)
            rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < t->ncols; i++)
        if ((t->col_label[i] = join_labels(t->col_value + i * t->nkeys_c, t->nkeys_c)) == NULL)
            rc = -ENOMEM;
    if (rc == 0)
        rc = fill_cells(&b);
    if (rc == 0)
        rc = shared_and_differing(&b);
    free(b.obs);
    return rc;
}

static void table_free(pkb_cross_table *t)
{
    free(t->suite);
    pkb_strings_free(t->row_label, t->nrows);
    pkb_strings_free(t->col_label, t->ncols);
    pkb_strings_free(t->row_value, t->nrows * t->nkeys_r);
    pkb_strings_free(t->col_value, t->ncols * t->nkeys_c);
    free(t->cells);
    free(t->col_floor);
    pkb_strings_free(t->common_key, t->ncommon);
    pkb_strings_free(t->common_value, t->ncommon);
    for (size_t i = 0; i < t->ndiffs; i++)
        diff_free(&t->diffs[i]);
    free(t->diffs);
}

void pkb_cross_free(pkb_cross *c)
{
    for (size_t i = 0; i < c->ntables; i++)
        table_free(&c->tables[i]);
    free(c->tables);
    pkb_strings_free(c->row_keys, c->nrow_keys);
    pkb_strings_free(c->col_keys, c->ncol_keys);
    pkb_many_free(&c->files);
    memset(c, 0, sizeof *c);
}

/* Every file's verdict family, as its report decides it. */
static int verdicts(const pkb_cross *c, pkb_verdict_set *sets, char *err, size_t err_len)
{
    for (size_t f = 0; f < c->files.n; f++) {
        int rc = pkb_verdict_contenders(&c->files.files[f].r, c->opts.baseline,
                                        &(pkb_verdict_options){.threshold = PKB_VERDICT_NEGLIGIBLE},
                                        &sets[f], err, err_len);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int pkb_cross_build(const char *const *paths,
                    size_t n,
                    const pkb_cross_options *opts,
                    pkb_cross *out,
                    char *err,
                    size_t err_len)
{
    memset(out, 0, sizeof *out);
    out->opts = opts != NULL ? *opts : (pkb_cross_options){0};
    int rc = pkb_identity_parse_keys(out->opts.rows ? out->opts.rows : PKB_CROSS_ROWS, "--rows",
                                     &out->row_keys, &out->nrow_keys, err, err_len);
    if (rc == 0)
        rc = pkb_identity_parse_keys(out->opts.cols ? out->opts.cols : PKB_CROSS_COLS, "--cols",
                                     &out->col_keys, &out->ncol_keys, err, err_len);
    if (rc == 0 && (out->nrow_keys > 8 || out->ncol_keys > 8))
        rc = pkb_fail(err, err_len, -EINVAL, "--rows and --cols take at most 8 keys each");
    for (size_t i = 0; rc == 0 && i < out->nrow_keys; i++)
        if (pkb_identity_key_among(out->col_keys, out->ncol_keys, out->row_keys[i]))
            rc = pkb_fail(err, err_len, -EINVAL, "the key '%s' is in both --rows and --cols",
                          out->row_keys[i]);
    if (rc == 0)
        rc = pkb_many_load(paths, n, &out->files, err, err_len);
    if (rc == 0)
        rc = check_keys(&out->files, out->row_keys, out->nrow_keys, "--rows", err, err_len);
    if (rc == 0)
        rc = check_keys(&out->files, out->col_keys, out->ncol_keys, "--cols", err, err_len);
    pkb_verdict_set *sets = rc == 0 ? calloc(out->files.n, sizeof *sets) : NULL;
    out->tables = rc == 0 ? calloc(out->files.n, sizeof *out->tables) : NULL;
    if (rc == 0 && (sets == NULL || out->tables == NULL))
        rc = pkb_fail(err, err_len, -ENOMEM, "out of memory");
    if (rc == 0)
        rc = verdicts(out, sets, err, err_len);
    for (size_t f = 0; rc == 0 && f < out->files.n; f++) {
        const char *suite = pkb_identity_suite(out->files.files[f].r.suite);
        bool seen = false;
        for (size_t i = 0; i < out->ntables && !seen; i++)
            seen = strcmp(out->tables[i].suite, suite) == 0;
        if (seen)
            continue;
        rc = build_table(out, sets, suite, &out->tables[out->ntables++]);
        if (rc != 0)
            pkb_fail(err, err_len, rc, "the %s table: %s", suite, strerror(-rc));
    }
    for (size_t f = 0; sets != NULL && f < out->files.n; f++)
        pkb_verdict_set_free(&sets[f]);
    free(sets);
    if (rc != 0)
        pkb_cross_free(out);
    return rc;
}
