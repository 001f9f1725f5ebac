/*
 * many — loading a study's results files (many.h): the paths given, directories walked in path
 * order, every file through the one loader (load.c).
 */
#define _GNU_SOURCE
#include "results/many.h"

#include "common/buf.h"
#include "common/files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* dir/name (name alone when dir is NULL), malloc'd; NULL when out of memory. */
static char *join(const char *dir, const char *name)
{
    size_t n = (dir != NULL ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, "%s%s%s", dir != NULL ? dir : "", dir != NULL ? "/" : "", name);
    return s;
}

/* A growing list of paths. */
struct paths {
    char **v;
    size_t n, cap;
};

static int push(struct paths *p, const char *dir, const char *name)
{
    if (p->n >= PKB_MANY_MAX_FILES)
        return -E2BIG;
    char **v = pkb_grow(p->v, &p->cap, p->n + 1, sizeof *v, 16);
    if (v == NULL)
        return -ENOMEM;
    p->v = v;
    char *s = join(dir, name);
    if (s == NULL)
        return -ENOMEM;
    p->v[p->n++] = s;
    return 0;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_json(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".json") == 0;
}

/* Every *.json under dir (hidden entries skipped), unsorted; depth bounds a symlink loop. */
static int walk(const char *dir, int depth, struct paths *out)
{
    if (depth > 32)
        return 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return -errno;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *path = join(dir, e->d_name);
        if (path == NULL) {
            rc = -ENOMEM;
            break;
        }
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rc = walk(path, depth + 1, out);
        else if (is_json(e->d_name))
            rc = push(out, NULL, path);
        free(path);
    }
    closedir(d);
    return rc;
}

/* The files `paths` name: a file as given, a directory's results files in path order. */
static int expand(const char *const *paths, size_t n, struct paths *out, char *err, size_t err_len)
{
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            int rc = push(out, NULL, paths[i]);
            if (rc != 0)
                return pkb_fail(err, err_len, rc, "%s: %s", paths[i],
                                rc == -E2BIG ? "more than 10000 results files" : strerror(-rc));
            continue;
        }
        size_t first = out->n;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", paths[i]);
        for (size_t k = strlen(dir); k > 1 && strchr(PKB_DIR_SEPARATORS, dir[k - 1]); k--)
            dir[k - 1] = '\0';
        int rc = walk(dir, 0, out);
        if (rc != 0)
            return pkb_fail(err, err_len, rc, "%s: %s", paths[i],
                            rc == -E2BIG ? "more than 10000 results files" : strerror(-rc));
        if (out->n == first)
            return pkb_fail(err, err_len, -ENOENT, "%s: no results file (*.json) in it", paths[i]);
        qsort(out->v + first, out->n - first, sizeof *out->v, cmp_path);
    }
    return 0;
}

static bool in_directory(const char *const *paths, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(paths[i], path) == 0)
            return false; /* given by name */
    return true;
}

/* A file named twice (given twice, or given and found in a directory also given) would be
 * counted twice: refused, naming both. */
static int check_twice(const struct paths *found, char *err, size_t err_len)
{
    struct stat *st = calloc(found->n > 0 ? found->n : 1, sizeof *st);
    if (st == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < found->n; i++) {
        if (stat(found->v[i], &st[i]) != 0) {
            st[i].st_ino = 0; /* unreadable: the loader says why */
            continue;
        }
        for (size_t j = 0; rc == 0 && j < i; j++)
            if (st[j].st_ino != 0 && st[j].st_ino == st[i].st_ino && st[j].st_dev == st[i].st_dev)
                rc = pkb_fail(err, err_len, -EINVAL, "%s: the same file as %s, given twice",
                              found->v[i], found->v[j]);
    }
    free(st);
    return rc;
}

int pkb_many_load(const char *const *paths, size_t n, pkb_many *m, char *err, size_t err_len)
{
    memset(m, 0, sizeof *m);
    struct paths found = {0};
    int rc = expand(paths, n, &found, err, err_len);
    if (rc == 0)
        rc = check_twice(&found, err, err_len);
    if (rc == 0 && (m->files = calloc(found.n > 0 ? found.n : 1, sizeof *m->files)) == NULL)
        rc = pkb_fail(err, err_len, -ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < found.n; i++) {
        pkb_many_file *f = &m->files[m->n];
        char why[512] = "";
        rc = pkb_results_load(found.v[i], &f->r, why, sizeof why);
        /* In a directory, a JSON file that is not a results file at all is not part of it. */
        if (rc == -EBADMSG && strstr(why, "not a pkbench results file") != NULL &&
            in_directory(paths, n, found.v[i])) {
            pkb_buf_printf(&m->skipped, "%s%c", found.v[i], '\0');
            m->nskipped++;
            rc = 0;
            continue;
        }
        if (rc != 0) {
            pkb_fail(err, err_len, rc, "%s", why);
            break;
        }
        f->path = found.v[i];
        found.v[i] = NULL;
        pkb_identity_of(&f->r, &f->id);
        m->n++;
    }
    if (rc == 0 && m->n == 0)
        rc = pkb_fail(err, err_len, -ENOENT, "%s: no results file among the %zu JSON files",
                      paths[0], m->nskipped);
    if (rc == 0 && m->skipped.failed)
        rc = pkb_fail(err, err_len, -ENOMEM, "out of memory");
    for (size_t i = 0; i < found.n; i++)
        free(found.v[i]);
    free(found.v);
    if (rc != 0)
        pkb_many_free(m);
    return rc;
}

void pkb_many_free(pkb_many *m)
{
    for (size_t i = 0; i < m->n; i++) {
        pkb_results_free(&m->files[i].r);
        free(m->files[i].path);
    }
    free(m->files);
    pkb_buf_free(&m->skipped);
    memset(m, 0, sizeof *m);
}
