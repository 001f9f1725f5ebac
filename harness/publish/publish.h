/*
 * publish — `pkbench publish DIR --out SITE`: every results file under DIR as a static site of
 * plain HTML and SVG that a browser opens from file:// (or any static host) with no server and
 * nothing loaded from elsewhere:
 *
 *     SITE/index.html                 the index: every study (one results file) with its suite,
 *                                     profile, host, platform, revision, date and state; then
 *                                     the files that could not be published, and why
 *     SITE/style.css                  the one stylesheet
 *     SITE/studies/<id>/index.html    a study: its report (pkbench report's Markdown, as HTML)
 *                                     with its figures (gnuplot's SVG inline, the PNGs, data and
 *                                     scripts linked), and the results file itself (<name>.json)
 *     SITE/cross-host/index.html      when the files come from two hosts or more: one table per
 *                                     suite, a column per host, same-host ratios (pkbench report
 *                                     FILE...'s document, report/cross.h)
 *     SITE/history/<host>/index.html  per host that measured a suite three times or more: every
 *                                     series over the project's history with its change points
 *                                     (pkbench history's document and figures, report/history.h)
 *     SITE/.pkbench-site              the mark that lets the next publish replace SITE
 *
 * A study's <id> is its file's path under DIR without ".json", '/' written "--" (so the fleet's
 * results/<runner>/scenarios.json files keep apart). Every page states where it came from; no page
 * has a script; each carries a Content-Security-Policy that forbids scripts and anything from
 * another origin, so a browser enforces what the tests check.
 *
 * Nothing lost, nothing half-written: the site is built in a staging directory beside SITE and
 * swapped in only when every page is complete; a failure leaves the previous site as it was.
 * SITE is replaced only when it is a site pkbench published (it holds .pkbench-site) or an empty
 * directory: `--out ~` can never remove a home directory.
 */
#ifndef PKB_PUBLISH_H
#define PKB_PUBLISH_H

#include "common/buf.h"
#include "report/figure.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct pkb_publish_options {
    /* Figures: the report's options (gnuplot, Python, time limit); `no_plots` publishes the pages
     * without figures. `written` is ignored. */
    pkb_report_options report;
    /* When not NULL, a line per study as it is rendered ("publish: [2/5] studies/x"), for a long
     * publish to show where it is. */
    FILE *progress;
    /* The index's title; NULL: "pkbench studies". */
    const char *title;
    /* The history pages (report/history.h): the git repository that orders the revisions (NULL:
     * the current directory), and same-host ratios to each scenario's baseline instead of
     * medians (what a shared machine's history needs). */
    const char *repo;
    bool ratio;
} pkb_publish_options;

typedef struct pkb_publish_summary {
    size_t studies;   /* results files published, a page each */
    size_t skipped;   /* pkbench results files that could not be (listed on the index, and below) */
    size_t other;     /* JSON files under DIR that are not pkbench results files (ignored) */
    pkb_buf warnings; /* a line per skipped file: "path: why" (the caller frees it) */
} pkb_publish_summary;

/* Publishes every results file under in_dir (searched recursively, in path order; hidden
 * directories and a site pkbench published are not entered) into out_dir.
 *
 * Returns 0, or a negative errno with a one-line message in err naming the argument or the file:
 *   -ENOENT, -ENOTDIR  in_dir missing or not a directory; -ENOENT also when it holds no results
 *                      file that could be published (the count of JSON files looked at is named)
 *   -EEXIST            out_dir exists and is neither empty nor a site pkbench published
 *   -EINVAL            out_dir is in_dir, or contains it (the site would replace its sources)
 *   -EIO, -ETIMEDOUT,  a plotting tool failed (report.h's kinds), for the study named
 *   PK_ENOTFOUND
 *   other -errno       creating, writing or renaming the site's files
 *   -ENOMEM
 * A results file that cannot be published (invalid, or of a suite this pkbench does not know) is
 * not an error: it is named on the index and in sum->warnings, and the rest is published. On any
 * error out_dir is left as it was. sum may be NULL. */
int pkb_publish(const char *in_dir,
                const char *out_dir,
                const pkb_publish_options *opts,
                pkb_publish_summary *sum,
                char *err,
                size_t err_len);

#endif /* PKB_PUBLISH_H */
