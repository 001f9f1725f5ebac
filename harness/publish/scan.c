/*
 * scan — the results files under `pkbench publish`'s DIR (scan.h). Directories are read in name
 * order, so the site's order is the files' order whatever the file system returns. A JSON file is
 * a pkbench results file when its first 4 KiB name the schema "pkbench-results": such a file is
 * loaded (and validated) by the one loader, and when that fails the loader's one-line reason is
 * kept for the index, so a broken file is named rather than silently left out. Other JSON (a
 * pk_floor file, a drift-study summary) is counted and left alone.
 */
#define _GNU_SOURCE
#include "publish/scan.h"

#include "common/buf.h"
#include "common/files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_DEPTH = 16 };

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir (without hidden ones), sorted; NULL-terminated in *names. */
static int list_dir(const char *dir, char ***names, size_t *count)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -errno;
    char **v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue; /* ., .., .git, a staging directory */
        char **nv = pkb_grow(v, &cap, n + 2, sizeof *nv, 16);
        if (nv == NULL) {
            rc = -ENOMEM;
            break;
        }
        v = nv;
        if ((v[n] = strdup(e->d_name)) == NULL)
            rc = -ENOMEM;
        else
            n++;
    }
    closedir(d);
    if (n > 0)
        qsort(v, n, sizeof *v, by_name);
    *names = v;
    *count = n;
    return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Whether the file's head names the results schema. */
static bool names_results_schema(const char *path)
{
    char head[4097];
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return true; /* unreadable: the loader says why */
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    return strstr(head, "\"pkbench-results\"") != NULL;
}

static int add_file(pkb__scan *s, const char *path, const char *rel)
{
    s->looked++;
    if (!names_results_schema(path)) {
        s->other++;
        return 0;
    }
    pkb__found *v = pkb_grow(s->files, &s->cap, s->n + 1, sizeof *v, 16);
    if (v == NULL)
        return -ENOMEM;
    s->files = v;
    pkb__found *f = &s->files[s->n];
    *f = (pkb__found){.path = strdup(path), .rel = strdup(rel)};
    if (f->path == NULL || f->rel == NULL) {
        free(f->path);
        free(f->rel);
        return -ENOMEM;
    }
    s->n++;
    char why[512] = "";
    int rc = pkb_results_load(path, &f->r, why, sizeof why);
    if (rc == -ENOMEM)
        return rc;
    /* The loader's message starts with the path, which the index shows beside it already. */
    const char *text = why[0] ? why : strerror(-rc);
    size_t pn = strlen(path);
    if (strncmp(text, path, pn) == 0 && strncmp(text + pn, ": ", 2) == 0)
        text += pn + 2;
    if (rc != 0 && (f->why = strdup(text)) == NULL)
        return -ENOMEM;
    return 0;
}

static int walk(pkb__scan *s, const char *dir, const char *rel, int depth)
{
    char **names = NULL;
    size_t n = 0;
    int rc = list_dir(dir, &names, &n);
    for (size_t i = 0; i < n; i++) {
        pkb_buf path = {0}, sub = {0}, mark = {0};
        pkb_buf_printf(&path, "%s/%s", dir, names[i]);
        pkb_buf_printf(&sub, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        pkb_buf_printf(&mark, "%s/.pkbench-site", path.data);
        struct stat st;
        if (rc != 0 || path.failed || sub.failed || mark.failed)
            rc = rc != 0 ? rc : -ENOMEM;
        else if (stat(path.data, &st) != 0)
            ; /* vanished, or a dangling link: nothing to publish */
        else if (S_ISDIR(st.st_mode) && depth < MAX_DEPTH && stat(mark.data, &st) != 0)
            rc = walk(s, path.data, sub.data, depth + 1);
        else if (S_ISREG(st.st_mode) && ends_with(names[i], ".json"))
            rc = add_file(s, path.data, sub.data);
        pkb_buf_free(&path);
        pkb_buf_free(&sub);
        pkb_buf_free(&mark);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int pkb__scan_dir(const char *dir, pkb__scan *s, char *err, size_t err_len)
{
    *s = (pkb__scan){0};
    struct stat st;
    if (stat(dir, &st) != 0)
        return pkb_fail(err, err_len, -errno, "DIR '%s': %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return pkb_fail(err, err_len, -ENOTDIR, "DIR '%s' is not a directory", dir);
    int rc = walk(s, dir, "", 0);
    if (rc != 0) {
        pkb__scan_free(s);
        return pkb_fail(err, err_len, rc, "reading DIR '%s': %s", dir, strerror(-rc));
    }
    return 0;
}

void pkb__scan_free(pkb__scan *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->files[i].why == NULL)
            pkb_results_free(&s->files[i].r);
        free(s->files[i].path);
        free(s->files[i].rel);
        free(s->files[i].why);
    }
    free(s->files);
    *s = (pkb__scan){0};
}
