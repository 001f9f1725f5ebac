/*
 * identity — who measured a results file, on what, and which code: the host (its name and id),
 * the platform, the revision, and the value of any key a table of many files is grouped by. The
 * readers that put many files together (`pkbench report FILE...`, `pkbench history`) read
 * every file's identity here, so they name and group hosts and revisions alike.
 *
 * Files written before the identity fields (environment.host, host_id, git_commit_time) still
 * load: their host is a stand-in derived from what their environment does say (cpu_model,
 * logical_cpus, machine, distribution), marked derived, and their revision is git_commit as
 * recorded then.
 */
#ifndef PKB_RESULTS_IDENTITY_H
#define PKB_RESULTS_IDENTITY_H

#include "results/results.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct pkb_identity {
    char host[128];          /* environment.host, else "host-<6 hex digits>" (derived) */
    char host_id[16];        /* environment.host_id, else 12 hex digits (derived) */
    bool host_derived;       /* an older file: host and host_id derived from its environment */
    char os[128];            /* "Linux", "Windows", or "Windows (Wine 8.0)" */
    char revision[48];       /* the commit's first 12 digits, "-dirty" appended when tracked
                                files differed from it; "unknown" */
    const char *commit;      /* environment.git_commit as the file gives it ("unknown") */
    int dirty;               /* 1, 0, or -1 when unknown */
    const char *commit_time; /* environment.git_commit_time; NULL when the file has none */
    const char *created;     /* when the run started (ISO 8601 UTC) */
} pkb_identity;

/* The suite's current name for a results file's `suite`: the scenarios suite was called
 * "compare" until the `pkbench compare` command needed the name, and its older files say so. */
const char *pkb_identity_suite(const char *suite);

/* The identity of a loaded file (pointers borrowed from r). */
void pkb_identity_of(const pkb_results *r, pkb_identity *id);

/* The keys a table of many files can be grouped by, each with what it is, in --help order:
 * host, host_id, os, kernel, cpu, cpus, machine, distribution, libc, compiler, build_type,
 * spawn, containment, revision, profile, suite, scenario, contender, series, file. Any other
 * name is a field of the files' `environment`, else of their `settings`; "environment.X" and
 * "settings.X" name one of them explicitly. */
typedef struct pkb_identity_key_def {
    const char *name;
    const char *what;
} pkb_identity_key_def;
extern const pkb_identity_key_def pkb_identity_keys[];
extern const size_t pkb_identity_key_count;

/* Whether `key` is one of pkb_identity_keys (an alias counts: glibc for libc, cpu_model for cpu,
 * spawn_mechanism for spawn). */
bool pkb_identity_key_named(const char *key);

/* Whether r has `key`: a named key, or a field of its environment or settings (of the one named,
 * for "environment.X" and "settings.X"). */
bool pkb_identity_key_in(const pkb_results *r, const char *key);

/* The value of `key` for r — and for series s, which the keys scenario, contender and series
 * need (NULL: those read "n/a") — into buf as text: a string as is, a number shortest, a boolean
 * "true"/"false", null or a field the file lacks "n/a", anything else compact JSON. */
void pkb_identity_key(
    const pkb_results *r, const pkb_results_series *s, const char *key, char *buf, size_t cap);

/* Parses a comma-separated list of keys ("host, os") into a malloc'd array of *n keys: blanks
 * around a key dropped. Returns 0, or -EINVAL with a message naming `what` (the option) for an
 * empty list, an empty key or a key named twice, or -ENOMEM. Free with pkb_strings_free
 * (common/buf.h). */
int pkb_identity_parse_keys(
    const char *list, const char *what, char ***keys, size_t *n, char *err, size_t err_len);

/* Whether `key` is among keys[0..n), an alias counting as its key (glibc is libc). */
bool pkb_identity_key_among(char *const *keys, size_t n, const char *key);

/* The keys files are compared on, in order: the named keys (but the series' own — suite,
 * scenario, contender, series — and file), then every field of the files' environments that is
 * not a named key's source or skipped (pkb_identity_env_skipped), then every field of their
 * settings as "settings.X"; a key among `exclude` (aliases count) left out. Returns 0 or
 * -ENOMEM; free with pkb_strings_free (common/buf.h). */
int pkb_identity_compared_keys(const pkb_results *const *files,
                               size_t nfiles,
                               char *const *exclude,
                               size_t nexclude,
                               char ***keys,
                               size_t *n);

/* Whether an environment field says nothing about what was measured on (the process and thread
 * counts, the load average: they differ from run to run), or is already one of the named keys'
 * sources (cpu_model, logical_cpus, spawn_mechanism, host*, git_*, wine): a comparison of two
 * files' environments skips it. */
bool pkb_identity_env_skipped(const char *field);

#endif /* PKB_RESULTS_IDENTITY_H */
