/*
 * multi — the cross-host page and the history pages (multi.h). The report room builds and writes
 * each document (Markdown, JSON, figures) into the page's folder exactly as `pkbench report
 * FILE...` and `pkbench history` would; this decides which pages the files call for, and wraps
 * each document as a page. Only the files the site publishes go in: a results file that could
 * not be read is on the index, not in a table.
 */
#define _GNU_SOURCE
#include "publish/multi.h"

#include "publish/escape.h"
#include "publish/html.h"
#include "publish/page.h"
#include "report/cross.h"
#include "report/history.h"
#include "results/identity.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether file i was measured on `host` (its name and platform, as results/identity.h names
 * them, which is how report/history.h groups a history). */
static bool on_host(const struct pkb__site *s, size_t i, const pkb_identity *host)
{
    pkb_identity id;
    pkb_identity_of(&s->scan.files[i].r, &id);
    return strcmp(id.host, host->host) == 0 && strcmp(id.os, host->os) == 0;
}

/* The paths of the published files (on `host` only, unless NULL), in the site's order (the
 * caller frees the array). */
static const char **published_paths(const struct pkb__site *s, const pkb_identity *host, size_t *n)
{
    const char **v = calloc(s->scan.n ? s->scan.n : 1, sizeof *v);
    *n = 0;
    for (size_t i = 0; v != NULL && i < s->scan.n; i++)
        if (s->ids[i] != NULL && (host == NULL || on_host(s, i, host)))
            v[(*n)++] = s->scan.files[i].path;
    return v;
}

/* Wraps dir/<name>.md, which the report room wrote, as dir/index.html: the frame (the root is
 * `root` away), `facts` (HTML), links to the document's Markdown and JSON, then the document. */
static int document_page(const char *dir,
                         const char *name,
                         const char *title,
                         const char *root,
                         const pkb_buf *facts,
                         char *err,
                         size_t err_len)
{
    pkb_buf md = {0}, path = {0}, page = {0};
    pkb_buf_printf(&path, "%s/%s.md", dir, name);
    int rc = path.failed ? -ENOMEM : pkb_page_read(path.data, &md);
    if (rc != 0) {
        pkb_buf_free(&path);
        return pkb_fail(err, err_len, rc, "cannot read %s/%s.md: %s", dir, name, strerror(-rc));
    }
    pkb_page_head(&page, title, root);
    pkb_buf_printf(&page, "%s", facts->data ? facts->data : "");
    pkb_html_printf(&page,
                    "<p class=\"facts\">This page as Markdown: <a href=\"%s.md\">%s.md</a>; as "
                    "JSON: <a href=\"%s.json\">%s.json</a>.</p>\n",
                    name, name, name, name);
    pkb_md_to_html(md.data ? md.data : "", md.len, &page);
    pkb_page_foot(&page, "Published by <code>pkbench publish</code> from the results files the "
                         "index lists; every number on this page is computed from them.");
    page.failed |= facts->failed;
    rc = pkb_page_put(dir, "index.html", &page, err, err_len);
    pkb_buf_free(&md);
    pkb_buf_free(&path);
    pkb_buf_free(&page);
    return rc;
}

/* ==== Across hosts ============================================================================ */

/* How many hosts (host and platform) the published files come from. */
static size_t count_hosts(const struct pkb__site *s)
{
    size_t hosts = 0;
    for (size_t i = 0; i < s->scan.n; i++) {
        if (s->ids[i] == NULL)
            continue;
        pkb_identity a, b;
        pkb_identity_of(&s->scan.files[i].r, &a);
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            if (s->ids[j] == NULL)
                continue;
            pkb_identity_of(&s->scan.files[j].r, &b);
            seen = strcmp(a.host, b.host) == 0 && strcmp(a.os, b.os) == 0;
        }
        hosts += !seen;
    }
    return hosts;
}

int pkb__multi_cross(struct pkb__site *s, char *err, size_t err_len)
{
    size_t hosts = count_hosts(s), n = 0;
    if (hosts < 2)
        return 0;
    const char **paths = published_paths(s, NULL, &n);
    if (paths == NULL)
        return pkb_fail(err, err_len, -ENOMEM, "out of memory");
    pkb_cross c;
    int rc = pkb_cross_build(paths, n, &(pkb_cross_options){0}, &c, err, err_len);
    free(paths);
    if (rc != 0)
        return rc;
    pkb_buf dir = {0}, facts = {0};
    pkb_buf_printf(&dir, "%s/cross-host", s->stage);
    pkb_report_options ro = s->o->report;
    ro.written = NULL;
    rc = dir.failed ? -ENOMEM : pkb_cross_write(&c, dir.data, "cross-host", &ro, err, err_len);
    pkb_buf_printf(&facts,
                   "<p class=\"facts\">%zu results files from %zu hosts, one table per suite. "
                   "Each cell is a same-host ratio: the series against its own file's baseline "
                   "contender, with its 95%% CI; no time is compared across hosts. A warning names "
                   "every key that differs inside a row.</p>\n",
                   n, hosts);
    if (rc == 0)
        rc = document_page(dir.data, "cross-host", "Across hosts", "../", &facts, err, err_len);
    if (rc == 0)
        s->cross_hosts = hosts;
    pkb_cross_free(&c);
    pkb_buf_free(&dir);
    pkb_buf_free(&facts);
    return rc;
}

/* ==== History ================================================================================= */

/* Whether the host of published file i measured one suite in three files or more, and how many
 * files it has. */
static bool has_history(const struct pkb__site *s, size_t i, size_t *files)
{
    pkb_identity host;
    pkb_identity_of(&s->scan.files[i].r, &host);
    size_t most = 0;
    *files = 0;
    for (size_t j = 0; j < s->scan.n; j++) {
        if (s->ids[j] == NULL || !on_host(s, j, &host))
            continue;
        (*files)++;
        size_t same_suite = 0;
        for (size_t k = 0; k < s->scan.n; k++)
            same_suite += s->ids[k] != NULL && on_host(s, k, &host) &&
                          strcmp(s->scan.files[k].r.suite, s->scan.files[j].r.suite) == 0;
        most = same_suite > most ? same_suite : most;
    }
    return most >= 3;
}

/* The history of the host of published file i into history/<host>--<platform>/. */
static int history_page(struct pkb__site *s, size_t i, size_t files, char *err, size_t err_len)
{
    pkb_identity id;
    pkb_identity_of(&s->scan.files[i].r, &id);
    size_t n = 0;
    const char **paths = published_paths(s, &id, &n);
    struct pkb__history_page *v = realloc(s->histories, (s->nhistories + 1) * sizeof *v);
    if (paths == NULL || v == NULL) {
        free(paths);
        return pkb_fail(err, err_len, -ENOMEM, "out of memory");
    }
    s->histories = v;
    pkb_history_options ho = {.repo = s->o->repo, .ratio = s->o->ratio}; /* its files only */
    pkb_history h;
    int rc = pkb_history_build(paths, n, &ho, &h, err, err_len);
    free(paths);
    if (rc != 0)
        return rc;
    pkb_buf name = {0}, dir = {0}, facts = {0}, title = {0};
    pkb_buf_sanitized(&name, id.host);
    pkb_buf_puts(&name, "--");
    pkb_buf_sanitized(&name, id.os);
    pkb_buf_printf(&dir, "%s/history/%s", s->stage, name.data);
    pkb_buf_printf(&title, "History: %s", id.host);
    pkb_report_options ro = s->o->report;
    ro.written = NULL;
    rc = dir.failed ? -ENOMEM : pkb_history_write(&h, dir.data, "history", &ro, err, err_len);
    pkb_html_printf(&facts,
                    "<p class=\"facts\">The %zu results files of host <strong>%s</strong> (%s",
                    files, id.host, id.os);
    pkb_buf_printf(&facts,
                   "), every series %s over the project's history, with the change points "
                   "E-divisive means found (a t-test decides each).</p>\n",
                   s->o->ratio ? "as its same-host ratio to its scenario's baseline"
                               : "as its median time");
    if (rc == 0)
        rc = document_page(dir.data, "history", title.failed ? "History" : title.data, "../../",
                           &facts, err, err_len);
    struct pkb__history_page *p = &s->histories[s->nhistories];
    *p = (struct pkb__history_page){.files = files};
    if (rc == 0 && (p->dir = strdup(name.data)) != NULL && (p->host = strdup(id.host)) != NULL &&
        (p->os = strdup(id.os)) != NULL)
        s->nhistories++;
    else if (rc == 0)
        rc = pkb_fail(err, err_len, -ENOMEM, "out of memory");
    if (rc != 0 || p->os == NULL) {
        free(p->dir);
        free(p->host);
    }
    pkb_history_free(&h);
    pkb_buf_free(&name);
    pkb_buf_free(&dir);
    pkb_buf_free(&facts);
    pkb_buf_free(&title);
    return rc;
}

int pkb__multi_histories(struct pkb__site *s, char *err, size_t err_len)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->scan.n; i++) {
        if (s->ids[i] == NULL)
            continue;
        pkb_identity a;
        pkb_identity_of(&s->scan.files[i].r, &a);
        bool seen = false; /* a host's page is made at its first file */
        for (size_t j = 0; j < i && !seen; j++)
            seen = s->ids[j] != NULL && on_host(s, j, &a);
        size_t files;
        if (!seen && has_history(s, i, &files))
            rc = history_page(s, i, files, err, err_len);
    }
    return rc;
}

void pkb__multi_free(struct pkb__site *s)
{
    for (size_t i = 0; i < s->nhistories; i++) {
        free(s->histories[i].dir);
        free(s->histories[i].host);
        free(s->histories[i].os);
    }
    free(s->histories);
    s->histories = NULL;
    s->nhistories = 0;
}
