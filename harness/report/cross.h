/*
 * cross — many results files, one table: `pkbench report FILE... | DIR`. Files from several
 * hosts, platforms or revisions put side by side, benchstat's way: every measured series is an
 * observation, its row and column the values of the --rows and --cols keys
 * (results/identity.h: host, os, kernel, cpu, libc, spawn, containment, profile, revision, ...,
 * or any environment or settings field), one table per suite.
 *
 * A cell is never an absolute time compared across hosts: it is the series' same-host ratio
 * against its own file's baseline contender of the scenario (posix_spawn on Linux, createprocess
 * on Windows, or --baseline's), with its 95% CI and the verdict the file's own report gives
 * (results/verdict.h: paired by round where the file has rounds). A cell that several files fall
 * into pools them: their per-round ratios together when every file has rounds, their samples when
 * all come from one host, else the geometric mean of their ratios without a CI. --absolute shows
 * medians instead, and says that they are not comparable across hosts.
 *
 * Beside every column whose files measured a noise floor (`pkbench run --aa`), a column with the
 * floor of each cell's pair. Above each table, the keys every file shares (benchstat's header),
 * and a warning naming every key — of the environment, the settings, or the named keys — whose
 * value differs inside a row without being a row or column key, with its values and columns.
 */
#ifndef PKB_REPORT_CROSS_H
#define PKB_REPORT_CROSS_H

#include "common/buf.h"
#include "common/stats.h"
#include "report/figure.h"
#include "results/many.h"
#include "results/verdict.h"

#include <stdbool.h>
#include <stddef.h>

#define PKB_CROSS_ROWS "series"  /* --rows' default */
#define PKB_CROSS_COLS "host,os" /* --cols' default: a column per host and platform */

typedef struct pkb_cross_options {
    const char *rows;     /* comma-separated keys; NULL: PKB_CROSS_ROWS */
    const char *cols;     /* NULL: PKB_CROSS_COLS */
    const char *baseline; /* the contender every ratio is against; NULL: each scenario's own */
    bool absolute;        /* medians instead of ratios */
} pkb_cross_options;

typedef enum pkb_cross_kind {
    PKB_CROSS_EMPTY = 0,   /* no file of the column has the row */
    PKB_CROSS_BASELINE,    /* the row is the column's baseline */
    PKB_CROSS_RATIO,       /* a same-host ratio */
    PKB_CROSS_NO_BASELINE, /* measured, but no measured baseline in its scenario */
    PKB_CROSS_UNMEASURED,  /* refused or failed (status, reason) */
    PKB_CROSS_ABSOLUTE,    /* --absolute: the median */
} pkb_cross_kind;

typedef struct pkb_cross_cell {
    pkb_cross_kind kind;
    size_t files;          /* files pooled in the cell */
    pks_interval ratio;    /* RATIO: lo and hi NaN when there is no CI */
    bool paired;           /* on per-round ratios */
    pkb_verdict_word word; /* RATIO: the verdict in a word (results/verdict.h) */
    double noise_floor;    /* the floor of the pair (the larger MDE), 0: none */
    double median_ns;      /* the series' median (pooled: the median of the files') */
    const char *status;    /* UNMEASURED: "refused" or "failed" */
    const char *reason;    /* UNMEASURED: why (NULL: none given) */
    const char *base;      /* the contender it is compared with (borrowed) */
} pkb_cross_cell;

/* One key whose value differs inside a row: its values, the columns each occurs in, and the
 * rows it differs in. */
typedef struct pkb_cross_diff {
    char *key;
    char **values;
    size_t nvalues;
    bool *in_col; /* nvalues × ncols: value v occurs in column c */
    bool *in_row; /* nrows: it differs inside row r */
    size_t nrows_differ;
} pkb_cross_diff;

typedef struct pkb_cross_table {
    char *suite;
    size_t nrows, ncols, nkeys_r, nkeys_c;
    char **row_label, **col_label; /* the keys' values joined with " · " */
    char **row_value, **col_value; /* nrows × nkeys_r, ncols × nkeys_c: each key's value */
    pkb_cross_cell *cells;         /* nrows × ncols */
    bool *col_floor;               /* ncols: a file of the column has a noise floor */
    char **common_key, **common_value;
    size_t ncommon;
    pkb_cross_diff *diffs;
    size_t ndiffs;
    size_t nfiles;
} pkb_cross_table;

typedef struct pkb_cross {
    pkb_many files;
    char **row_keys, **col_keys;
    size_t nrow_keys, ncol_keys;
    pkb_cross_options opts;
    pkb_cross_table *tables; /* one per suite, in order of first appearance */
    size_t ntables;
} pkb_cross;

/* Loads `paths` (results files or directories; results/many.h) and builds the tables. Returns
 * 0, or a negative errno with a one-line message: the loader's errors; -EINVAL for a key no
 * file has (named, with the keys there are) or an empty key list; -ENOMEM. */
int pkb_cross_build(const char *const *paths,
                    size_t n,
                    const pkb_cross_options *opts,
                    pkb_cross *out,
                    char *err,
                    size_t err_len);

void pkb_cross_free(pkb_cross *c);

/* ---- rendering (cross_render.c) -------------------------------------------------------------- */

/* The Markdown document: a title, the files, then per suite its shared keys, its warnings, the
 * table and how to read it. */
void pkb_cross_markdown(const pkb_cross *c, pkb_buf *out);

/* The tables as aligned text for a terminal, with the warnings (colour only when `color`). */
void pkb_cross_terminal(const pkb_cross *c, bool color, pkb_buf *out);

/* The same as JSON (schema "pkbench-table", version 1): the files with their identities, and per
 * suite the keys, rows, columns, cells, shared keys and warnings — what a site or a script
 * renders without parsing Markdown. New reference, NULL when out of memory. */
json_t *pkb_cross_json(const pkb_cross *c);

/* Writes <name>.md and <name>.json into out_dir, staged and renamed into place together
 * (report.h's pkb_report_write_doc); their names are appended to opts->written. */
int pkb_cross_write(const pkb_cross *c,
                    const char *out_dir,
                    const char *name,
                    const pkb_report_options *opts,
                    char *err,
                    size_t err_len);

#endif /* PKB_REPORT_CROSS_H */
