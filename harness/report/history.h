/*
 * history — `pkbench history DIR`: the results files of a host at many revisions, put in the
 * order of the project's history, each series followed through them, and the change points
 * where a series' level moved (common/changepoint.h: E-divisive means with Student's t-test),
 * each with its magnitude, its CI and the revisions between which it happened.
 *
 * Order: by git ancestry when the repository is at hand (`--repo`, default the current
 * directory): the revisions in `git rev-list --topo-order` order, a dirty tree right after its
 * commit, runs of one revision by their start; when it is not, or it lacks a revision, by the
 * commit's date the files record (environment.git_commit_time), then the run's start, and the
 * document says which.
 *
 * Files of several hosts (results/identity.h: host name and platform) make one history each;
 * --host keeps one. A series' value per file is its median time, or with --ratio its same-host
 * ratio to its scenario's baseline (the file's own verdict, results/verdict.h), which cancels
 * what a shared machine did to every series between runs. For each change point, the
 * environment keys whose values differ between the two files around it are named: a kernel
 * update is not a regression of the code.
 */
#ifndef PKB_REPORT_HISTORY_H
#define PKB_REPORT_HISTORY_H

#include "common/buf.h"
#include "common/changepoint.h"
#include "report/figure.h"
#include "results/many.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct pkb_history_options {
    const char *host;   /* keep this host only (its name, or its host_id); NULL: every host */
    const char *repo;   /* the git repository that orders the revisions; NULL: "." */
    const char *filter; /* extended regular expression over series names; NULL: all */
    bool ratio;         /* same-host ratios to the baseline instead of medians */
    pks_changepoint_options cp;
} pkb_history_options;

/* One change point of a series, with what the files around it say. */
typedef struct pkb_history_change {
    pks_changepoint cp;   /* cp.index counts the series' points */
    size_t before, after; /* the files (history positions) of the points around it */
    char **env_keys;      /* keys whose values differ between those two files */
    size_t nenv_keys;
} pkb_history_change;

typedef struct pkb_history_series {
    char *suite, *name, *scenario, *contender;
    size_t n;      /* points: the files that measured it */
    size_t *at;    /* n history positions */
    double *value; /* n values: median ns, or ratios */
    pkb_history_change *changes;
    size_t nchanges;
} pkb_history_series;

typedef struct pkb_history_host {
    char *host, *os; /* as results/identity.h names them */
    size_t *files;   /* indexes into pkb_history.files, in history order */
    size_t nfiles;
    bool ancestry;    /* ordered by the repository's ancestry (else by time) */
    char *order_note; /* why not by ancestry, or NULL */
    pkb_history_series *series;
    size_t nseries;
} pkb_history_host;

typedef struct pkb_history {
    pkb_many files;
    pkb_history_options opts;
    pkb_history_host *hosts;
    size_t nhosts;
} pkb_history;

/* Loads `paths` (results/many.h), orders each host's files and finds every series' change points.
 * Returns 0, or a negative errno with a one-line message: the loader's errors; -ENOENT for a
 * --host no file has (the hosts there are named); -EINVAL for a bad --filter; -ENOMEM. */
int pkb_history_build(const char *const *paths,
                      size_t n,
                      const pkb_history_options *opts,
                      pkb_history *out,
                      char *err,
                      size_t err_len);

void pkb_history_free(pkb_history *h);

/* ---- rendering (history_render.c) ------------------------------------------------------------ */

/* The Markdown document: per host the order of its files, the change points (series, where,
 * before, after, change with its CI, p, what else changed there), the series without one, and
 * the figures when `figures` (one per scenario; pkb_history_figures names them). */
void pkb_history_markdown(const pkb_history *h, const char *name, bool figures, pkb_buf *out);

/* The change points as aligned text for a terminal (colour only when `color`). */
void pkb_history_terminal(const pkb_history *h, bool color, pkb_buf *out);

/* The same as JSON (schema "pkbench-history", version 1). New reference, NULL when out of
 * memory. */
json_t *pkb_history_json(const pkb_history *h);

/* Adds a figure per host and scenario: every series over the history, change points marked. */
int pkb_history_figures(const pkb_history *h, const char *name, pkb_figures *figs);

/* Writes <name>.md, <name>.json and the figures (unless opts->no_plots) into out_dir, staged and
 * renamed into place together. */
int pkb_history_write(const pkb_history *h,
                      const char *out_dir,
                      const char *name,
                      const pkb_report_options *opts,
                      char *err,
                      size_t err_len);

#endif /* PKB_REPORT_HISTORY_H */
