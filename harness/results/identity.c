/*
 * identity — a results file's host, platform and revision, and the values of the grouping keys
 * (identity.h). Everything is read from the loaded file's `environment` (and `settings`, the
 * top-level `profile` and `suite`); nothing here asks the machine.
 */
#define _GNU_SOURCE
#include "results/identity.h"

#include "common/buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pkb_identity_key_def pkb_identity_keys[] = {
    {"host", "the host's name (PKBENCH_HOST, else its host name)"},
    {"host_id", "the host's id (a digest of its machine id)"},
    {"os", "Linux, Windows, or Windows under Wine"},
    {"kernel", "the kernel's release and build, or the Windows version"},
    {"cpu", "the CPU model"},
    {"cpus", "the logical CPUs"},
    {"machine", "the architecture"},
    {"distribution", "the distribution"},
    {"libc", "the C library (glibc and its version)"},
    {"compiler", "the compiler and its version"},
    {"build_type", "the build type"},
    {"spawn", "the library's spawn mechanism"},
    {"containment", "the library's containment"},
    {"revision", "the commit measured (12 digits, -dirty)"},
    {"profile", "the run's profile"},
    {"suite", "the suite"},
    {"scenario", "the series' scenario"},
    {"contender", "the series' contender"},
    {"series", "the series (scenario/contender)"},
    {"file", "the results file"},
};
const size_t pkb_identity_key_count = sizeof pkb_identity_keys / sizeof pkb_identity_keys[0];

/* Other spellings of a named key. */
static const struct {
    const char *alias, *key;
} aliases[] = {
    {"glibc", "libc"},        {"cpu_model", "cpu"},
    {"logical_cpus", "cpus"}, {"spawn_mechanism", "spawn"},
    {"platform", "os"},
};

static const char *canonical(const char *key)
{
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(key, aliases[i].alias) == 0)
            return aliases[i].key;
    return key;
}

const char *pkb_identity_suite(const char *suite)
{
    return suite != NULL && strcmp(suite, "compare") == 0 ? "scenarios" : suite;
}

bool pkb_identity_key_named(const char *key)
{
    key = canonical(key);
    for (size_t i = 0; i < pkb_identity_key_count; i++)
        if (strcmp(key, pkb_identity_keys[i].name) == 0)
            return true;
    return false;
}

static const json_t *env_field(const pkb_results *r, const char *field)
{
    return pkb_results_field(r, "environment", field);
}

static const char *env_string(const pkb_results *r, const char *field)
{
    return json_string_value(env_field(r, field));
}

/* FNV-1a over a string, continuing from h. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; s != NULL && *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* An older file's host: what its environment says about the machine, digested. */
static void derive_host(const pkb_results *r, pkb_identity *id)
{
    char cpus[32];
    snprintf(cpus, sizeof cpus, "\n%lld\n", r->logical_cpus);
    uint64_t h = fnv1a(0xcbf29ce484222325ull, "pkbench derived host\n");
    h = fnv1a(fnv1a(h, env_string(r, "cpu_model")), cpus);
    h = fnv1a(fnv1a(fnv1a(h, env_string(r, "machine")), "\n"), env_string(r, "distribution"));
    snprintf(id->host_id, sizeof id->host_id, "%012llx", (unsigned long long)(h >> 16));
    snprintf(id->host, sizeof id->host, "host-%.6s", id->host_id);
    id->host_derived = true;
}

void pkb_identity_of(const pkb_results *r, pkb_identity *id)
{
    memset(id, 0, sizeof *id);
    const char *host = env_string(r, "host"), *host_id = env_string(r, "host_id");
    if (host != NULL && host_id != NULL) {
        snprintf(id->host, sizeof id->host, "%s", host);
        snprintf(id->host_id, sizeof id->host_id, "%s", host_id);
    } else {
        derive_host(r, id);
    }
    const char *wine = env_string(r, "wine"), *kernel = env_string(r, "kernel");
    if (wine != NULL)
        snprintf(id->os, sizeof id->os, "Windows (Wine %s)", wine);
    else if (kernel != NULL && strncmp(kernel, "Windows", 7) == 0)
        snprintf(id->os, sizeof id->os, "Windows");
    else
        snprintf(id->os, sizeof id->os, "Linux");
    id->commit = env_string(r, "git_commit");
    const json_t *dirty = env_field(r, "git_dirty");
    id->dirty = json_is_boolean(dirty) ? json_is_true(dirty) : -1;
    id->commit_time = env_string(r, "git_commit_time");
    id->created = json_string_value(pkb_results_field(r, NULL, "created"));
    if (id->commit == NULL || strcmp(id->commit, "unknown") == 0 || id->commit[0] == '\0')
        snprintf(id->revision, sizeof id->revision, "unknown");
    else
        snprintf(id->revision, sizeof id->revision, "%.12s%s", id->commit,
                 id->dirty == 1 ? "-dirty" : "");
}

/* An explicit field: "environment.X" or "settings.X" (NULL object otherwise). */
static const json_t *explicit_field(const pkb_results *r, const char *key, bool *is_explicit)
{
    static const char *const objects[] = {"environment", "settings"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(objects[i]);
        if (strncmp(key, objects[i], n) == 0 && key[n] == '.') {
            *is_explicit = true;
            return pkb_results_field(r, objects[i], key + n + 1);
        }
    }
    *is_explicit = false;
    return NULL;
}

bool pkb_identity_key_in(const pkb_results *r, const char *key)
{
    bool is_explicit;
    const json_t *v = explicit_field(r, key, &is_explicit);
    if (is_explicit)
        return v != NULL;
    return pkb_identity_key_named(key) || env_field(r, key) != NULL ||
           pkb_results_field(r, "settings", key) != NULL;
}

/* A JSON value as one line of text. */
static void value_text(const json_t *v, char *buf, size_t cap)
{
    if (v == NULL || json_is_null(v)) {
        snprintf(buf, cap, "n/a");
    } else if (json_is_string(v)) {
        snprintf(buf, cap, "%s", json_string_value(v));
    } else if (json_is_integer(v)) {
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(buf, cap, "%.15g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        snprintf(buf, cap, "%s", json_is_true(v) ? "true" : "false");
    } else {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
        snprintf(buf, cap, "%s", text != NULL ? text : "?");
        free(text);
    }
}

/* The environment field behind a named key that is one field as is. */
static const char *env_source(const char *key)
{
    static const struct {
        const char *key, *field;
    } direct[] = {
        {"kernel", "kernel"},
        {"cpu", "cpu_model"},
        {"cpus", "logical_cpus"},
        {"machine", "machine"},
        {"distribution", "distribution"},
        {"libc", "libc"},
        {"compiler", "compiler"},
        {"build_type", "build_type"},
        {"spawn", "spawn_mechanism"},
        {"containment", "containment"},
    };
    for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++)
        if (strcmp(key, direct[i].key) == 0)
            return direct[i].field;
    return NULL;
}

void pkb_identity_key(
    const pkb_results *r, const pkb_results_series *s, const char *key, char *buf, size_t cap)
{
    bool is_explicit;
    const json_t *v = explicit_field(r, key, &is_explicit);
    if (is_explicit) {
        value_text(v, buf, cap);
        return;
    }
    key = canonical(key);
    const char *field = env_source(key);
    if (field != NULL) {
        value_text(env_field(r, field), buf, cap);
        return;
    }
    pkb_identity id;
    pkb_identity_of(r, &id);
    const char *text = strcmp(key, "host") == 0       ? id.host
                       : strcmp(key, "host_id") == 0  ? id.host_id
                       : strcmp(key, "os") == 0       ? id.os
                       : strcmp(key, "revision") == 0 ? id.revision
                       : strcmp(key, "file") == 0     ? r->file
                                                      : NULL;
    if (text == NULL && strcmp(key, "suite") == 0)
        text = pkb_identity_suite(r->suite);
    if (text == NULL && strcmp(key, "profile") == 0) {
        value_text(pkb_results_field(r, NULL, key), buf, cap);
        return;
    }
    if (text == NULL && s != NULL)
        text = strcmp(key, "scenario") == 0    ? s->scenario
               : strcmp(key, "contender") == 0 ? s->contender
               : strcmp(key, "series") == 0    ? s->name
                                               : NULL;
    else if (text == NULL && (strcmp(key, "scenario") == 0 || strcmp(key, "contender") == 0 ||
                              strcmp(key, "series") == 0))
        text = "n/a";
    if (text != NULL) {
        snprintf(buf, cap, "%s", text);
        return;
    }
    v = env_field(r, key);
    value_text(v != NULL ? v : pkb_results_field(r, "settings", key), buf, cap);
}

bool pkb_identity_env_skipped(const char *field)
{
    static const char *const skipped[] = {
        "processes_start", "processes_end", "threads_start", "threads_end",     "loadavg_start",
        "loadavg_end",     "cpu_model",     "logical_cpus",  "spawn_mechanism", "host",
        "host_id",         "host_id_from",  "git_commit",    "git_dirty",       "git_commit_time",
        "revision_from",   "wine",
    };
    for (size_t i = 0; i < sizeof skipped / sizeof skipped[0]; i++)
        if (strcmp(field, skipped[i]) == 0)
            return true;
    return false;
}

/* ==== key lists =============================================================================== */

bool pkb_identity_key_among(char *const *keys, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(canonical(keys[i]), canonical(key)) == 0)
            return true;
    return false;
}

int pkb_identity_parse_keys(
    const char *list, const char *what, char ***keys, size_t *n, char *err, size_t err_len)
{
    *keys = NULL;
    *n = 0;
    size_t commas = 0;
    for (const char *c = list; *c; c++)
        commas += *c == ',';
    char *copy = strdup(list);
    *keys = calloc(commas + 1, sizeof **keys);
    int rc = copy != NULL && *keys != NULL ? 0 : pkb_fail(err, err_len, -ENOMEM, "out of memory");
    for (char *k = copy, *next; rc == 0 && k != NULL; k = next) {
        next = strchr(k, ',');
        if (next != NULL)
            *next++ = '\0';
        while (*k == ' ')
            k++;
        for (size_t e = strlen(k); e > 0 && k[e - 1] == ' '; e--)
            k[e - 1] = '\0';
        if (k[0] == '\0')
            rc = pkb_fail(err, err_len, -EINVAL, "%s: an empty key in '%s'", what, list);
        else if (pkb_identity_key_among(*keys, *n, k))
            rc = pkb_fail(err, err_len, -EINVAL, "%s: the key '%s' is named twice", what, k);
        else if (((*keys)[(*n)++] = strdup(k)) == NULL)
            rc = pkb_fail(err, err_len, -ENOMEM, "out of memory");
    }
    free(copy);
    if (rc != 0) {
        pkb_strings_free(*keys, *n);
        *keys = NULL;
        *n = 0;
    }
    return rc;
}

/* Appends `key` to the list unless it is there or excluded. */
static int add_key(
    char ***keys, size_t *n, size_t *cap, char *const *exclude, size_t nexclude, const char *key)
{
    if (pkb_identity_key_among(exclude, nexclude, key) || pkb_identity_key_among(*keys, *n, key))
        return 0;
    char **v = pkb_grow(*keys, cap, *n + 1, sizeof *v, 64);
    if (v == NULL)
        return -ENOMEM;
    *keys = v;
    return ((*keys)[*n] = strdup(key)) != NULL ? ((*n)++, 0) : -ENOMEM;
}

int pkb_identity_compared_keys(const pkb_results *const *files,
                               size_t nfiles,
                               char *const *exclude,
                               size_t nexclude,
                               char ***keys,
                               size_t *n)
{
    static const char *const own[] = {"suite", "scenario", "contender", "series", "file"};
    *keys = NULL;
    *n = 0;
    size_t cap = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < pkb_identity_key_count; i++) {
        bool skip = false;
        for (size_t j = 0; j < sizeof own / sizeof own[0]; j++)
            skip = skip || strcmp(pkb_identity_keys[i].name, own[j]) == 0;
        if (!skip)
            rc = add_key(keys, n, &cap, exclude, nexclude, pkb_identity_keys[i].name);
    }
    static const char *const objects[] = {"environment", "settings"};
    for (size_t o = 0; o < 2; o++) {
        for (size_t f = 0; rc == 0 && f < nfiles; f++) {
            const char *field;
            const json_t *v;
            json_object_foreach((json_t *)pkb_results_field(files[f], NULL, objects[o]), field, v)
            {
                if (o == 0 && (pkb_identity_env_skipped(field) || pkb_identity_key_named(field)))
                    continue;
                char name[300];
                snprintf(name, sizeof name, "%s%s", o == 1 ? "settings." : "", field);
                if (rc == 0 && !(o == 0 && pkb_identity_key_among(exclude, nexclude, field)))
                    rc = add_key(keys, n, &cap, exclude, nexclude, name);
            }
        }
    }
    if (rc != 0) {
        pkb_strings_free(*keys, *n);
        *keys = NULL;
        *n = 0;
    }
    return rc;
}
