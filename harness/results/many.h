/*
 * many — the results files of a study: every file given, or every results file found under a
 * directory, loaded and validated in one order, each with its identity (results/identity.h).
 * What `pkbench report FILE... | DIR` and `pkbench history DIR` read.
 *
 * A directory is walked to any depth (hidden entries, such as a report's staging directory,
 * skipped), its `*.json` files taken in path order; a JSON file there that is not a pkbench
 * results file at all (a `pkbench compare --format json` output, a study's summary) is skipped
 * and named, while a results file that does not validate is an error, as a file given by name is.
 */
#ifndef PKB_RESULTS_MANY_H
#define PKB_RESULTS_MANY_H

#include "common/buf.h"
#include "results/identity.h"
#include "results/results.h"

#include <stddef.h>

/* The most files one study reads: more is a mistake (a home directory given for a study). */
#define PKB_MANY_MAX_FILES 10000

typedef struct pkb_many_file {
    char *path; /* as given, or found under the directory */
    pkb_results r;
    pkb_identity id;
} pkb_many_file;

typedef struct pkb_many {
    pkb_many_file *files;
    size_t n;
    pkb_buf skipped; /* the paths of JSON files that are not results files, each and a NUL */
    size_t nskipped;
} pkb_many;

/* Loads `paths` (n ≥ 1): each a results file, or a directory whose results files are taken.
 * Returns 0, or a negative errno with a one-line message naming the file: the loader's errors
 * (results.h), -ENOENT for a directory holding no results file, -E2BIG past
 * PKB_MANY_MAX_FILES, -ENOMEM. On error *m needs no freeing. */
int pkb_many_load(const char *const *paths, size_t n, pkb_many *m, char *err, size_t err_len);

void pkb_many_free(pkb_many *m);

#endif /* PKB_RESULTS_MANY_H */
