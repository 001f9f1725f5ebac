/*
 * view — what the files of harness/publish/ share about the site being built (private to the
 * folder; no source file is named after it, so site.c and multi.c never tie back to each other
 * through it): where it comes from and goes, the files found, and the pages over many files.
 */
#ifndef PKB_PUBLISH_VIEW_H
#define PKB_PUBLISH_VIEW_H

#include "publish/publish.h"
#include "publish/scan.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* A history page: one host's files in the order of the project's history. */
struct pkb__history_page {
    char *dir;       /* under history/ */
    char *host, *os; /* as results/identity.h names them */
    size_t files;    /* the host's results files */
};

struct pkb__site {
    const char *in, *out;
    const pkb_publish_options *o;
    char stage[PATH_MAX]; /* the site being built; "" once swapped in */
    pkb__scan scan;
    char **ids; /* per scanned file: its study's folder under studies/ (NULL: not published) */
    char when[32];
    size_t published;
    /* The pages over many files (multi.c). */
    size_t cross_hosts; /* hosts in cross-host/index.html; 0: no such page */
    struct pkb__history_page *histories;
    size_t nhistories;
};

#endif /* PKB_PUBLISH_VIEW_H */
