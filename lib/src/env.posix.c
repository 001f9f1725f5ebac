/*
 * The child's environment: inherit (the default, no copy at all), clear, set and unset.
 *
 * The built array points into the caller's strings and into `environ`; it only has to live until
 * the child has exec'd, which happens before the spawn returns (vfork semantics), so nothing is
 * duplicated but the pointer array itself. Order: start from environ (unless clear), apply set
 * (a later entry replaces an earlier one of the same name), then remove unset names.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Length of the NAME part of "NAME=VALUE", or 0 when the entry is malformed. */
static size_t name_len(const char *entry)
{
    const char *eq = strchr(entry, '=');
    return (eq == NULL || eq == entry) ? 0 : (size_t)(eq - entry);
}

static bool same_name(const char *entry, const char *name, size_t len)
{
    return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static bool is_unset(const pk_env *env, const char *entry)
{
    for (const char *const *u = env->unset; u != NULL && *u != NULL; u++)
        if (same_name(entry, *u, strlen(*u)))
            return true;
    return false;
}

/* True when a later entry in env->set (after index i) has the same name. */
static bool overridden_later(const pk_env *env, size_t i, const char *entry, size_t len)
{
    for (const char *const *e = env->set + i + 1; *e != NULL; e++)
        if (same_name(*e, entry, len))
            return true;
    return false;
}

static bool overridden_by_set(const pk_env *env, const char *entry)
{
    size_t len = name_len(entry);
    if (len == 0)
        return false;
    for (const char *const *e = env->set; e != NULL && *e != NULL; e++)
        if (same_name(*e, entry, len))
            return true;
    return false;
}

int pk__build_env(const pk_env *env, char *const **envp, char ***owned)
{
    *owned = NULL;
    *envp = environ;
    if (env == NULL || (!env->clear && env->set == NULL && env->unset == NULL))
        return 0;

    size_t nset = 0;
    for (const char *const *e = env->set; e != NULL && *e != NULL; e++, nset++)
        if (name_len(*e) == 0)
            return PK_EBADENV;
    for (const char *const *u = env->unset; u != NULL && *u != NULL; u++)
        if ((*u)[0] == '\0' || strchr(*u, '=') != NULL)
            return PK_EBADENV;

    size_t ninherit = 0;
    if (!env->clear)
        for (char **e = environ; e != NULL && *e != NULL; e++)
            ninherit++;

    char **arr = malloc((ninherit + nset + 1) * sizeof *arr);
    if (arr == NULL)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < ninherit; i++) {
        char *e = environ[i];
        if (!overridden_by_set(env, e) && !is_unset(env, e))
            arr[n++] = e;
    }
    for (size_t i = 0; i < nset; i++) {
        const char *e = env->set[i];
        if (!overridden_later(env, i, e, name_len(e)) && !is_unset(env, e))
            arr[n++] = (char *)e;
    }
    arr[n] = NULL;
    *owned = arr;
    *envp = arr;
    return 0;
}
