/*
 * site — `pkbench publish` (publish.h): finds the results files (scan.h), renders each one's
 * report through the suite registry into its study's folder, turns the Markdown into a page
 * (html.h) inside the site's frame (page.h), writes the index, and swaps the finished site in
 * for the old one. Everything is built in a staging directory beside the site, so a reader, or a
 * failure half-way, never sees a site that is part old and part new.
 */
#define _GNU_SOURCE
#include "publish/publish.h"

#include "common/files.h"
#include "publish/escape.h"
#include "publish/html.h"
#include "publish/page.h"
#include "publish/multi.h"
#include "publish/scan.h"
#include "publish/view.h"
#include "results/identity.h"
#include "suites/suite.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MARK ".pkbench-site"
#define MARK_TEXT                                                                                  \
    "A site written by `pkbench publish`; the next publish with --out here replaces it.\n"

/* ==== What a study is ========================================================================= */

static const char *env_str(const pkb_results *r, const char *key)
{
    const char *s = json_string_value(pkb_results_field(r, "environment", key));
    return s != NULL && s[0] != '\0' ? s : NULL;
}

/* The host the file was measured on, as every document of many files names it
 * (results/identity.h); an older file's host is derived from its environment, and says so. */
static void study_host(const pkb_results *r, pkb_buf *b)
{
    pkb_identity id;
    pkb_identity_of(r, &id);
    pkb_html_text(b, id.host);
    const char *cpu = env_str(r, "cpu_model");
    if (cpu != NULL) {
        pkb_buf_puts(b, " <span class=\"facts\">(");
        pkb_html_text(b, cpu);
        if (r->logical_cpus > 0)
            pkb_buf_printf(b, ", %lld CPUs", r->logical_cpus);
        pkb_buf_puts(b, id.host_derived ? "; named from these)</span>" : ")</span>");
    }
}

/* The platform: the system (Wine named), the kernel's release on Linux and the distribution,
 * the architecture. */
static void study_platform(const pkb_results *r, pkb_buf *b)
{
    pkb_identity id;
    pkb_identity_of(r, &id);
    const char *kernel = env_str(r, "kernel"), *distribution = env_str(r, "distribution");
    const char *machine = env_str(r, "machine");
    bool on_linux = strcmp(id.os, "Linux") == 0;
    pkb_buf_puts(b, strstr(id.os, "Wine") != NULL ? "<strong>" : "");
    pkb_html_text(b, id.os);
    pkb_buf_puts(b, strstr(id.os, "Wine") != NULL ? "</strong>" : "");
    if (on_linux && kernel != NULL) {
        pkb_buf_puts(b, " ");
        pkb_html_text_n(b, kernel, strcspn(kernel, " ")); /* the release, not the build line */
    }
    if (on_linux && distribution != NULL) {
        pkb_buf_puts(b, ", ");
        pkb_html_text(b, distribution);
    }
    if (machine != NULL) {
        pkb_buf_puts(b, ", ");
        pkb_html_text(b, machine);
    }
}

/* The measured tree's revision, as results/identity.h names it ("-dirty" when it had changes). */
static void study_revision(const pkb_results *r, pkb_buf *b)
{
    pkb_identity id;
    pkb_identity_of(r, &id);
    pkb_buf_puts(b, "<code>");
    pkb_html_text(b, id.revision);
    pkb_buf_puts(b, "</code>");
}

/* The suite's name today (a file of the scenarios suite from before its rename says "compare"). */
static const char *study_suite(const pkb_results *r)
{
    const pkb_suite *suite = pkb_suite_find(r->suite);
    return suite != NULL ? suite->name : r->suite;
}

static size_t measured_series(const pkb_results *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nseries; i++)
        n += r->series[i].measured;
    return n;
}

/* A study's folder: its path under DIR without ".json", each '/' as "--", each byte outside
 * [A-Za-z0-9_.-] as '_'. */
static char *study_id(const char *rel)
{
    pkb_buf b = {0};
    size_t n = strlen(rel) - strlen(".json");
    for (size_t at = 0; at < n;) {
        size_t k = strcspn(rel + at, "/");
        k = at + k > n ? n - at : k;
        char *piece = strndup(rel + at, k);
        if (piece == NULL)
            b.failed = true;
        else
            pkb_buf_sanitized(&b, piece);
        free(piece);
        at += k;
        if (at < n) {
            pkb_buf_puts(&b, "--");
            at++;
        }
    }
    if (b.failed || b.data == NULL) {
        pkb_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* ==== A study's page ========================================================================== */

static void study_facts(const pkb__found *f, pkb_buf *b)
{
    const pkb_results *r = &f->r;
    pkb_html_printf(b,
                    "<p class=\"facts\">Results file <a href=\"%s\"><code>%s</code></a> (its "
                    "report as Markdown: <a href=\"%s.md\">%s.md</a>). Host: ",
                    r->file, f->rel, r->name, r->name);
    study_host(r, b);
    pkb_buf_puts(b, ". Platform: ");
    study_platform(r, b);
    pkb_buf_puts(b, ". Revision: ");
    study_revision(r, b);
    pkb_buf_puts(b, ".</p>\n");
}

/* Renders the report of scan file i into studies/<id>/ and wraps it as index.html there, with
 * the results file beside it. */
static int study_page(struct pkb__site *s, size_t i, char *err, size_t err_len)
{
    const pkb__found *f = &s->scan.files[i];
    pkb_buf dir = {0}, md = {0}, page = {0}, json = {0}, mdname = {0}, title = {0};
    pkb_buf_printf(&dir, "%s/studies/%s", s->stage, s->ids[i]);
    pkb_buf_printf(&mdname, "%s/%s.md", dir.data, f->r.name);
    pkb_report_options ro = s->o->report;
    ro.written = NULL;
    int rc = dir.failed || mdname.failed ? -ENOMEM : 0;
    if (rc == 0)
        rc = pkb_report_render(f->path, dir.data, &ro, err, err_len);
    if (rc == 0 && (rc = pkb_page_read(mdname.data, &md)) != 0)
        pkb_fail(err, err_len, rc, "cannot read %s: %s", mdname.data, strerror(-rc));
    if (rc == 0 && (rc = pkb_page_read(f->path, &json)) != 0)
        pkb_fail(err, err_len, rc, "cannot read %s: %s", f->path, strerror(-rc));
    if (rc == 0) {
        pkb_buf_printf(&title, "%s: %s", study_suite(&f->r), f->r.name);
        pkb_page_head(&page, title.failed ? "" : title.data, "../../");
        study_facts(f, &page);
        pkb_md_to_html(md.data ? md.data : "", md.len, &page);
        pkb_page_foot(&page, "Published by <code>pkbench publish</code> from the results file "
                             "above; every number on this page is its report's.");
        rc = pkb_page_put(dir.data, "index.html", &page, err, err_len);
    }
    if (rc == 0)
        rc = pkb_page_put(dir.data, f->r.file, &json, err, err_len);
    pkb_buf_free(&dir);
    pkb_buf_free(&md);
    pkb_buf_free(&page);
    pkb_buf_free(&json);
    pkb_buf_free(&mdname);
    pkb_buf_free(&title);
    return rc;
}

/* ==== The index =============================================================================== */

static void index_row(const struct pkb__site *s, size_t i, pkb_buf *b)
{
    const pkb__found *f = &s->scan.files[i];
    const pkb_results *r = &f->r;
    const char *profile = json_string_value(pkb_results_field(r, NULL, "profile"));
    pkb_html_printf(b,
                    "<tr><td><a href=\"studies/%s/index.html\"><code>%s</code></a></td><td>%s"
                    "</td><td>%s</td><td>",
                    s->ids[i], f->rel, study_suite(r), profile != NULL ? profile : "");
    study_host(r, b);
    pkb_buf_puts(b, "</td><td>");
    study_platform(r, b);
    pkb_buf_puts(b, "</td><td>");
    study_revision(r, b);
    pkb_buf_puts(b, "</td><td>");
    const char *created = json_string_value(pkb_results_field(r, NULL, "created"));
    pkb_html_text(b, created != NULL ? created : "");
    pkb_buf_printf(b, "</td><td class=\"r\">%zu of %zu</td><td>", measured_series(r), r->nseries);
    pkb_buf_puts(b, json_is_true(pkb_results_field(r, NULL, "complete"))
                        ? "complete"
                        : "<span class=\"state-incomplete\">incomplete</span>");
    pkb_buf_puts(b, "</td></tr>\n");
}

static void index_skipped(const struct pkb__site *s, pkb_buf *b)
{
    size_t skipped = s->scan.n - s->published;
    if (skipped > 0) {
        pkb_buf_puts(b, "<h2 id=\"not-published\">Not published</h2>\n<p>These files name the "
                        "pkbench results schema but could not be read as results:</p>\n<ul>\n");
        for (size_t i = 0; i < s->scan.n; i++) {
            if (s->scan.files[i].why == NULL)
                continue;
            pkb_html_printf(b, "<li><code>%s</code>: %s</li>\n", s->scan.files[i].rel,
                            s->scan.files[i].why);
        }
        pkb_buf_puts(b, "</ul>\n");
    }
    if (s->scan.other > 0)
        pkb_buf_printf(b,
                       "<p class=\"facts\">%zu other JSON file%s under the directory (not "
                       "pkbench results files) %s left out.</p>\n",
                       s->scan.other, s->scan.other == 1 ? "" : "s",
                       s->scan.other == 1 ? "was" : "were");
}

/* The pages over many files: the table across hosts, and a row per host's history. */
static void index_many(const struct pkb__site *s, pkb_buf *b)
{
    if (s->cross_hosts > 0)
        pkb_buf_printf(b,
                       "<h2 id=\"across-hosts\">Across hosts</h2>\n<p><a "
                       "href=\"cross-host/index.html\">One table of every study across the %zu "
                       "hosts</a>: per suite, a column per host, each cell a same-host ratio "
                       "against that host's baseline contender.</p>\n",
                       s->cross_hosts);
    if (s->nhistories == 0)
        return;
    pkb_buf_puts(b, "<h2 id=\"history\">History</h2>\n<div class=\"table\"><table>\n<thead><tr>"
                    "<th>host</th><th>platform</th><th class=\"r\">results files</th>"
                    "</tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < s->nhistories; i++) {
        const struct pkb__history_page *h = &s->histories[i];
        pkb_html_printf(b,
                        "<tr><td><a href=\"history/%s/index.html\">%s</a></td><td>%s</td><td "
                        "class=\"r\">%zu</td></tr>\n",
                        h->dir, h->host, h->os, h->files);
    }
    pkb_buf_puts(b, "</tbody>\n</table></div>\n");
}

static int index_page(struct pkb__site *s, char *err, size_t err_len)
{
    const char *title = s->o->title != NULL ? s->o->title : "pkbench studies";
    pkb_buf b = {0};
    pkb_page_head(&b, title, "");
    pkb_html_printf(&b,
                    "<h1>%s</h1>\n<p class=\"facts\">%zu stud%s published by <code>pkbench "
                    "publish</code> from <code>%s</code> at %s. A study is one results file: its "
                    "page is its report, with the file.</p>\n\n",
                    title, s->published, s->published == 1 ? "y" : "ies", s->in, s->when);
    index_many(s, &b);
    pkb_buf_puts(&b, "<h2 id=\"studies\">Studies</h2>\n<div class=\"table\"><table>\n<thead><tr>"
                     "<th>results file</th><th>suite</th><th>profile</th><th>host</th>"
                     "<th>platform</th><th>revision</th><th>created</th>"
                     "<th class=\"r\">series measured</th><th>run</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < s->scan.n; i++)
        if (s->ids[i] != NULL)
            index_row(s, i, &b);
    pkb_buf_puts(&b, "</tbody>\n</table></div>\n");
    index_skipped(s, &b);
    pkb_page_foot(&b, "Published by <code>pkbench publish</code>. Plain HTML and SVG: no script, "
                      "nothing loaded from elsewhere.");
    int rc = pkb_page_put(s->stage, "index.html", &b, err, err_len);
    pkb_buf_free(&b);
    return rc;
}

/* ==== Where the site goes ===================================================================== */

/* out_dir may be replaced: absent, an empty directory, or a site pkbench published; and it must
 * not hold in_dir. */
static int check_out(const char *in, const char *out, char *err, size_t err_len)
{
    struct stat st;
    if (stat(out, &st) != 0)
        return errno == ENOENT
                   ? 0
                   : pkb_fail(err, err_len, -errno, "--out '%s': %s", out, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return pkb_fail(err, err_len, -ENOTDIR, "--out '%s' is not a directory", out);
    if (pkb__dir_inside(in, out))
        return pkb_fail(err, err_len, -EINVAL,
                        "--out '%s' holds DIR '%s': the site would replace its own sources", out,
                        in);
    pkb_buf mark = {0};
    pkb_buf_printf(&mark, "%s/" MARK, out);
    bool ours = !mark.failed && stat(mark.data, &st) == 0;
    pkb_buf_free(&mark);
    if (ours)
        return 0;
    DIR *d = opendir(out);
    if (d == NULL)
        return pkb_fail(err, err_len, -errno, "--out '%s': %s", out, strerror(errno));
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d)) != NULL;)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    if (!empty)
        return pkb_fail(err, err_len, -EEXIST,
                        "--out '%s' is a directory that pkbench publish did not write (no %s "
                        "in it): name a new or empty directory, or remove it",
                        out, MARK);
    return 0;
}

/* The staging directory: a hidden sibling of out_dir, so the final rename stays on one file
 * system. */
static int make_stage(struct pkb__site *s, char *err, size_t err_len)
{
    char parent[PATH_MAX], base[PATH_MAX];
    size_t n = strlen(s->out);
    while (n > 1 && strchr(PKB_DIR_SEPARATORS, s->out[n - 1]))
        n--;
    size_t cut = n;
    while (cut > 0 && !strchr(PKB_DIR_SEPARATORS, s->out[cut - 1]))
        cut--;
    if (n - cut == 0 || n - cut >= sizeof base || cut >= sizeof parent)
        return pkb_fail(err, err_len, -EINVAL, "--out '%s' names no directory", s->out);
    snprintf(base, sizeof base, "%.*s", (int)(n - cut), s->out + cut);
    snprintf(parent, sizeof parent, "%.*s", (int)cut, s->out);
    if (parent[0] == '\0')
        strcpy(parent, ".");
    int rc = pkb_make_dirs(parent);
    if (rc != 0)
        return pkb_fail(err, err_len, rc, "cannot create %s: %s", parent, strerror(-rc));
    if (snprintf(s->stage, sizeof s->stage, "%s/.%s.publish-XXXXXX", parent, base) >=
        (int)sizeof s->stage)
        return pkb_fail(err, err_len, -ENAMETOOLONG, "--out '%s': name too long", s->out);
    if (mkdtemp(s->stage) == NULL) {
        rc = -errno;
        s->stage[0] = '\0';
        return pkb_fail(err, err_len, rc, "cannot stage the site beside %s: %s", s->out,
                        strerror(-rc));
    }
    return 0;
}

/* Swaps the finished stage in: the old site (if any) is renamed aside, the stage renamed into its
 * place, and only then the old one removed; if the second rename fails the old site goes back. */
static int commit(struct pkb__site *s, char *err, size_t err_len)
{
    struct stat st;
    char old[PATH_MAX + 8] = "";
    if (stat(s->out, &st) == 0) {
        snprintf(old, sizeof old, "%s.old", s->stage);
        if (rename(s->out, old) != 0)
            return pkb_fail(err, err_len, -errno, "cannot move the old site %s aside: %s", s->out,
                            strerror(errno));
    }
    if (rename(s->stage, s->out) != 0) {
        int rc = -errno;
        if (old[0] != '\0')
            rename(old, s->out);
        return pkb_fail(err, err_len, rc, "cannot move the new site into %s: %s", s->out,
                        strerror(-rc));
    }
    s->stage[0] = '\0';
    if (old[0] != '\0')
        pkb_remove_tree(old);
    return 0;
}

/* ==== Publishing ============================================================================== */

/* Each loadable file's folder, unique (a second "a_b" after sanitizing becomes "a_b-2"). */
static int assign_ids(struct pkb__site *s)
{
    s->ids = calloc(s->scan.n ? s->scan.n : 1, sizeof *s->ids);
    if (s->ids == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < s->scan.n; i++) {
        if (s->scan.files[i].why != NULL)
            continue;
        char *id = study_id(s->scan.files[i].rel);
        for (int k = 2; id != NULL; k++) {
            bool taken = false;
            for (size_t j = 0; j < i && !taken; j++)
                taken = s->ids[j] != NULL && strcmp(s->ids[j], id) == 0;
            if (!taken)
                break;
            pkb_buf again = {0};
            pkb_buf_printf(&again, "%s-%d", id, k);
            free(id);
            id = again.failed ? NULL : again.data;
            if (id == NULL)
                pkb_buf_free(&again);
        }
        if (id == NULL)
            return -ENOMEM;
        s->ids[i] = id;
        s->published++;
    }
    return 0;
}

static int nothing_to_publish(const struct pkb__site *s, char *err, size_t err_len)
{
    for (size_t i = 0; i < s->scan.n; i++) /* say why the first one failed */
        if (s->scan.files[i].why != NULL)
            return pkb_fail(err, err_len, -ENOENT,
                            "DIR '%s' holds no results file that can be published (%zu JSON "
                            "files looked at; %s)",
                            s->in, s->scan.looked, s->scan.files[i].why);
    return pkb_fail(err, err_len, -ENOENT,
                    "DIR '%s' holds no pkbench results file (%zu JSON files looked at)", s->in,
                    s->scan.looked);
}

static int build(struct pkb__site *s, char *err, size_t err_len)
{
    int rc = assign_ids(s);
    if (rc != 0)
        return pkb_fail(err, err_len, rc, "out of memory");
    if (s->published == 0)
        return nothing_to_publish(s, err, err_len);
    for (size_t i = 0, k = 0; rc == 0 && i < s->scan.n; i++) {
        if (s->ids[i] == NULL)
            continue;
        if (s->o->progress != NULL) {
            fprintf(s->o->progress, "pkbench: publish: [%zu/%zu] studies/%s\n", ++k, s->published,
                    s->ids[i]);
            fflush(s->o->progress);
        }
        rc = study_page(s, i, err, err_len);
    }
    if (rc == 0 && s->o->progress != NULL)
        fprintf(s->o->progress, "pkbench: publish: the tables across hosts and the histories\n");
    if (rc == 0)
        rc = pkb__multi_cross(s, err, err_len);
    if (rc == 0)
        rc = pkb__multi_histories(s, err, err_len);
    pkb_buf css = {0}, mark = {0};
    pkb_buf_puts(&css, pkb_page_css);
    pkb_buf_puts(&mark, MARK_TEXT);
    if (rc == 0)
        rc = pkb_page_put(s->stage, "style.css", &css, err, err_len);
    if (rc == 0)
        rc = index_page(s, err, err_len);
    if (rc == 0) /* last: a stage without it is never taken for a site */
        rc = pkb_page_put(s->stage, MARK, &mark, err, err_len);
    pkb_buf_free(&css);
    pkb_buf_free(&mark);
    return rc;
}

static void summarize(const struct pkb__site *s, pkb_publish_summary *sum)
{
    sum->studies = s->published;
    sum->skipped = s->scan.n - s->published;
    sum->other = s->scan.other;
    for (size_t i = 0; i < s->scan.n; i++)
        if (s->scan.files[i].why != NULL)
            pkb_buf_printf(&sum->warnings, "%s: %s\n", s->scan.files[i].path, s->scan.files[i].why);
}

int pkb_publish(const char *in_dir,
                const char *out_dir,
                const pkb_publish_options *opts,
                pkb_publish_summary *sum,
                char *err,
                size_t err_len)
{
    static const pkb_publish_options defaults = {0};
    if (in_dir == NULL || in_dir[0] == '\0')
        return pkb_fail(err, err_len, -EINVAL, "no DIR given");
    if (out_dir == NULL || out_dir[0] == '\0')
        return pkb_fail(err, err_len, -EINVAL, "--out needs a directory");
    struct pkb__site s = {.in = in_dir, .out = out_dir, .o = opts != NULL ? opts : &defaults};
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) != NULL)
        strftime(s.when, sizeof s.when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int rc = pkb__scan_dir(in_dir, &s.scan, err, err_len);
    if (rc == 0)
        rc = check_out(in_dir, out_dir, err, err_len);
    if (rc == 0)
        rc = make_stage(&s, err, err_len);
    if (rc == 0)
        rc = build(&s, err, err_len);
    if (rc == 0)
        rc = commit(&s, err, err_len);
    if (s.stage[0] != '\0')
        pkb_remove_tree(s.stage);
    if (sum != NULL && rc == 0)
        summarize(&s, sum);
    for (size_t i = 0; s.ids != NULL && i < s.scan.n; i++)
        free(s.ids[i]);
    free(s.ids);
    pkb__multi_free(&s);
    pkb__scan_free(&s.scan);
    return rc;
}
