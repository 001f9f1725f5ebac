/*
 * scan — what `pkbench publish` finds under DIR (private to harness/publish/): the JSON files, in
 * path order, sorted into pkbench results files that load, pkbench results files that do not (with
 * the loader's reason), and other JSON; and whether one directory lies inside another.
 */
#ifndef PKB_PUBLISH_SCAN_H
#define PKB_PUBLISH_SCAN_H

#include "results/results.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct pkb__found {
    char *path; /* as opened: DIR/rel */
    char *rel;  /* under DIR, '/'-separated */
    char *why;  /* NULL: loaded into r; else why this results file cannot be published */
    pkb_results r;
} pkb__found;

typedef struct pkb__scan {
    pkb__found *files; /* results files, loaded or not, in path order */
    size_t n, cap;
    size_t other;  /* JSON files that are not pkbench results files */
    size_t looked; /* every JSON file seen */
} pkb__scan;

/* Walks dir (hidden entries and directories holding a .pkbench-site are not entered; at most 16
 * levels, so a symlink loop ends) and loads every "*.json" that names the schema pkbench-results.
 * Returns 0, or a negative errno with its message in err (dir unreadable: -ENOENT, -ENOTDIR, ...;
 * -ENOMEM). */
int pkb__scan_dir(const char *dir, pkb__scan *s, char *err, size_t err_len);
void pkb__scan_free(pkb__scan *s);

/* Whether directory `inner` is `outer` or lies below it (both must exist; false when either
 * cannot be resolved). Per platform: scan.posix.c, scan.windows.c. */
bool pkb__dir_inside(const char *inner, const char *outer);

#endif /* PKB_PUBLISH_SCAN_H */
