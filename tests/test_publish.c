/*
 * pkbench publish (harness/publish/): the Markdown-to-HTML conversion the site's pages are made
 * with — each construct pkbench's reports write, text that must stay text, links and images that
 * must not point elsewhere, and a real report whose every table cell survives — and the site
 * itself: what it writes, what it refuses to replace, what it keeps when it fails, and the command
 * line. The browser's view of the site is tests/site/run.sh (a stage of ./x test).
 */
#define _GNU_SOURCE
#include "test.h"

#include "synth.h"

#include "publish/html.h"
#include "publish/publish.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PK_TEST_DATA_DIR
#error "PK_TEST_DATA_DIR must name tests/data"
#endif
#ifndef PK_PKBENCH_PATH
#define PK_PKBENCH_PATH ""
#endif

#define FIXTURE    PK_TEST_DATA_DIR "/compare-fixture.json"
#define FIXTURE_MD PK_TEST_DATA_DIR "/compare-fixture.md"

/* The HTML of a Markdown text (the caller frees it). */
static char *html_of(const char *md)
{
    pkb_buf b = {0};
    pkb_md_to_html(md, strlen(md), &b);
    ASSERT(!b.failed);
    return b.data != NULL ? b.data : strdup("");
}

#define HAS(hay, needle)                                                                           \
    do {                                                                                           \
        if (strstr((hay), (needle)) == NULL)                                                       \
            pk_test_fail(__FILE__, __LINE__, "expected %s in:\n%s", (needle), (hay));              \
    } while (0)
#define HAS_NOT(hay, needle)                                                                       \
    do {                                                                                           \
        if (strstr((hay), (needle)) != NULL)                                                       \
            pk_test_fail(__FILE__, __LINE__, "did not expect %s in:\n%s", (needle), (hay));        \
    } while (0)

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

TEST_IMPL(publish_markdown_blocks)
{
    char *h = html_of("# compare: full profile\n\nA first line\nand its second.\n\n"
                      "## How to read it\n\n## How to read it\n\n"
                      "| contender | median (µs) | 95% CI |\n|---|---:|:---:|\n"
                      "| `a\\|b` | 611.2 | [-2.2%, +4.5%] |\n| short |\n\n"
                      "- one\n- two\n  - two.a\n- three\n\n3. third\n4. fourth\n\n"
                      "> **Incomplete run.** Only what finished.\n\n"
                      "```\n<not> *markup*\n```\n\n---\n\n"
                      "![median per contender](x-fig.gnuplot.svg)\n\n"
                      "`libuv` (1/8 disturbed[^noisy]) and again[^noisy], never[^nowhere].\n\n"
                      "[^noisy]: A repetition is marked disturbed when *others* ran.\n"
                      "[^unused]: Said, never referred to.\n");
    HAS(h, "<h1 id=\"compare-full-profile\">compare: full profile</h1>");
    HAS(h, "<p>A first line\nand its second.</p>");
    HAS(h, "<h2 id=\"how-to-read-it\">How to read it</h2>");
    HAS(h, "<h2 id=\"how-to-read-it-2\">How to read it</h2>"); /* ids stay unique */
    HAS(h, "<thead><tr><th>contender</th><th class=\"r\">median (µs)</th>"
           "<th class=\"c\">95% CI</th></tr>");
    HAS(h, "<tr><td><code>a|b</code></td><td class=\"r\">611.2</td>"
           "<td class=\"c\">[-2.2%, +4.5%]</td></tr>");
    HAS(h, "<tr><td>short</td><td class=\"r\"></td><td class=\"c\"></td></tr>"); /* padded */
    HAS(h, "<ul>\n<li>one\n</li>\n<li>two\n<ul>\n<li>two.a\n</li>\n</ul>\n</li>\n<li>three\n");
    HAS(h, "<ol start=\"3\">\n<li>third\n</li>\n<li>fourth\n</li>\n</ol>");
    HAS(h, "<blockquote>\n<p><strong>Incomplete run.</strong> Only what finished.</p>\n"
           "</blockquote>");
    HAS(h, "<pre><code>&lt;not&gt; *markup*\n</code></pre>");
    HAS(h, "<hr>");
    HAS(h, "<figure><img src=\"x-fig.gnuplot.svg\" alt=\"median per contender\">"
           "<figcaption>median per contender</figcaption></figure>");
    /* Footnotes: numbered by first reference, one back link, an undefined one left as text. */
    HAS(h, "<sup class=\"fnref\"><a href=\"#fn-noisy\" id=\"fnref-noisy\">1</a></sup>");
    HAS(h, "again<sup class=\"fnref\"><a href=\"#fn-noisy\">1</a></sup>");
    HAS(h, "never[^nowhere].");
    HAS(h, "<li id=\"fn-noisy\" value=\"1\">A repetition is marked disturbed when <em>others</em> "
           "ran. <a href=\"#fnref-noisy\" class=\"back\">↩</a></li>");
    HAS(h, "<li id=\"fn-unused\" value=\"2\">Said, never referred to.</li>");
    HAS_NOT(h, "[^noisy]:");
    free(h);
}

TEST_IMPL(publish_markdown_text_stays_text)
{
    char *h = html_of("<script>alert(1)</script> & \"quotes\" 'single'\n\n"
                      "[run](javascript:alert(1)) [rel](other/page.html#x) [web](https://x.org/a)"
                      " [mail](mailto:a@b.c) [proto](//evil.example/x) [data](data:text/html,x)\n\n"
                      "![remote](https://evil.example/x.png) ![local](a.svg) "
                      "![sneaky](java\tscript:x)\n\n"
                      "[quote](a\"onmouseover=\"x.html)\n\n"
                      "2 * 3 * 4, **unclosed and *also, \\*escaped\\*, `` a`b ``\n\n"
                      "| a | b |\n|---|---|\n| <b>x</b> | [l](javascript:y) |\n");
    HAS(h, "<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot; &#39;single&#39;");
    HAS_NOT(h, "<script");
    HAS_NOT(h, "javascript:");
    HAS_NOT(h, "evil.example");
    HAS_NOT(h, "data:");
    HAS(h, "run <a href=\"other/page.html#x\">rel</a> <a href=\"https://x.org/a\">web</a> "
           "<a href=\"mailto:a@b.c\">mail</a> proto data");
    HAS(h, "remote <img src=\"a.svg\" alt=\"local\"> sneaky");
    HAS(h, "<a href=\"a&quot;onmouseover=&quot;x.html\">quote</a>");
    HAS(h, "2 * 3 * 4, **unclosed and *also, *escaped*, <code>a`b</code>");
    HAS(h, "<td>&lt;b&gt;x&lt;/b&gt;</td><td>l</td>");
    free(h);
}

/* Each table row of a Markdown text and of its HTML, as cell texts joined by '\t'. The HTML's
 * cells lose their tags and entities; the Markdown's their code marks and escapes. */
static void md_rows(const char *md, pkb_buf *rows)
{
    for (const char *line = md; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (n > 0 && line[0] == '|' && strncmp(line, "|---", 4) != 0 && strncmp(line, "|:", 2)) {
            for (size_t i = 1; i < n; i++) {
                if (line[i] == '\\' && line[i + 1] == '|')
                    pkb_buf_puts(rows, "|"), i++;
                else if (line[i] == '|')
                    pkb_buf_puts(rows, i + 1 < n ? "\t" : "\n");
                else if (line[i] != '`' && line[i] != '*' &&
                         !((line[i] == ' ') && (line[i - 1] == '|' || line[i + 1] == '|')))
                    pkb_buf_printf(rows, "%c", line[i]);
            }
        }
        line += n + (nl != NULL);
    }
}

static void html_rows(const char *h, pkb_buf *rows)
{
    static const struct {
        const char *entity, *text;
    } ents[] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}};
    for (const char *p = h; (p = strstr(p, "<tr>")) != NULL;) {
        const char *end = strstr(p, "</tr>");
        bool first = true;
        for (const char *c = p + 4; c < end; c++) {
            if (strncmp(c, "</td>", 5) == 0 || strncmp(c, "</th>", 5) == 0) {
                c += 4;
                first = false;
                continue;
            }
            if (*c == '<') {
                bool cell = strncmp(c, "<td", 3) == 0 || strncmp(c, "<th", 3) == 0;
                if (cell && !first)
                    pkb_buf_puts(rows, "\t");
                /* a footnote reference's number is the Markdown's "[^noisy]" */
                if (strncmp(c, "<sup class=\"fnref\">", 19) == 0) {
                    const char *id = strstr(c, "#fn-") + 4;
                    pkb_buf_printf(rows, "[^%.*s]", (int)strcspn(id, "\""), id);
                    c = strstr(c, "</sup>") + 5;
                    continue;
                }
                c = strchr(c, '>');
                continue;
            }
            size_t k = 0;
            while (k < sizeof ents / sizeof ents[0] &&
                   strncmp(c, ents[k].entity, strlen(ents[k].entity)) != 0)
                k++;
            if (k < sizeof ents / sizeof ents[0]) {
                pkb_buf_puts(rows, ents[k].text);
                c += strlen(ents[k].entity) - 1;
            } else {
                pkb_buf_printf(rows, "%c", *c);
            }
        }
        pkb_buf_puts(rows, "\n");
        p = end;
    }
}

/* A real report: every table row, and every cell in it, comes through as the Markdown has it. */
TEST_IMPL(publish_markdown_report_tables_survive)
{
    FILE *f = fopen(FIXTURE_MD, "rbe");
    ASSERT(f != NULL);
    pkb_buf md = {0};
    char chunk[4096];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;)
        pkb_buf_printf(&md, "%.*s", (int)n, chunk);
    fclose(f);
    char *h = html_of(md.data);
    pkb_buf want = {0}, got = {0};
    md_rows(md.data, &want);
    html_rows(h, &got);
    ASSERT(want.len > 1000); /* the fixture's report has many tables */
    ASSERT_STR_EQ(got.data, want.data);
    /* Every table of the Markdown is one <table>, every figure an image that stays local. */
    size_t tables = 0;
    for (const char *p = md.data; (p = strstr(p, "\n|---")) != NULL; p++)
        tables++;
    ASSERT_EQ(count(h, "<table>"), tables);
    ASSERT_EQ(count(h, "<figure><img src=\"compare-fixture-"), count(md.data, "\n![")); /* none */
    HAS_NOT(h, "|---");
    free(h);
    pkb_buf_free(&md);
    pkb_buf_free(&want);
    pkb_buf_free(&got);
}

/* ==== The site ================================================================================ */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rbe");
    if (f == NULL)
        return NULL;
    pkb_buf b = {0};
    char chunk[65536];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;)
        pkb_buf_printf(&b, "%.*s", (int)n, chunk);
    fclose(f);
    return b.data != NULL ? b.data : strdup("");
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wbe");
    ASSERT(f != NULL);
    ASSERT_EQ(fputs(text, f) >= 0, true);
    ASSERT_EQ(fclose(f), 0);
}

static char *tmp(const char *name)
{
    char *p = NULL;
    ASSERT(asprintf(&p, "%s/%s", pk_test_tmpdir(), name) > 0);
    return p;
}

/* DIR with the scenarios fixture at "vm/scenarios.json" (and again at "vm/scenarios copy.json"
 * and "vm/scenarios_copy.json" when `twins`), a broken results file and a JSON file that is not
 * pkbench's. */
static char *make_input(bool twins)
{
    char *in = tmp("in");
    char path[4096];
    snprintf(path, sizeof path, "%s/vm", in);
    ASSERT_OK(mkdir(in, 0755));
    ASSERT_OK(mkdir(path, 0755));
    char *fixture = slurp(FIXTURE);
    ASSERT(fixture != NULL);
    snprintf(path, sizeof path, "%s/vm/scenarios.json", in);
    put_file(path, fixture);
    if (twins) {
        snprintf(path, sizeof path, "%s/vm/scenarios copy.json", in);
        put_file(path, fixture);
        snprintf(path, sizeof path, "%s/vm/scenarios_copy.json", in);
        put_file(path, fixture);
    }
    free(fixture);
    snprintf(path, sizeof path, "%s/broken.json", in);
    put_file(path, "{\"schema\": \"pkbench-results\", \"schema_version\": 1,");
    snprintf(path, sizeof path, "%s/floor.json", in);
    put_file(path, "{\"tool\": \"pk_floor\"}");
    return in;
}

static bool exists(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* Entries of dir whose names start with prefix. */
static int entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    ASSERT(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

TEST_IMPL(publish_site_pages_and_index)
{
    char *in = make_input(true), *out = tmp("site"), err[1024] = "";
    pkb_publish_summary sum = {0};
    pkb_publish_options o = {.report = {.no_plots = true}, .title = "A <fleet>"};
    ASSERT_EQ(pkb_publish(in, out, &o, &sum, err, sizeof err), 0);
    ASSERT_EQ(sum.studies, 3);
    ASSERT_EQ(sum.skipped, 1);
    ASSERT_EQ(sum.other, 1);
    HAS(sum.warnings.data, "broken.json: not valid JSON");
    ASSERT(exists(out, ".pkbench-site") && exists(out, "style.css"));
    /* A page per file; names that sanitize alike stay apart. */
    ASSERT(exists(out, "studies/vm--scenarios/index.html"));
    ASSERT(exists(out, "studies/vm--scenarios_copy/index.html"));
    ASSERT(exists(out, "studies/vm--scenarios_copy-2/index.html"));
    ASSERT(exists(out, "studies/vm--scenarios/scenarios.md"));
    /* The results file is on the site, byte for byte. */
    char path[4096];
    snprintf(path, sizeof path, "%s/studies/vm--scenarios/scenarios.json", out);
    char *copy = slurp(path), *orig = slurp(FIXTURE);
    ASSERT(copy != NULL && orig != NULL);
    ASSERT_STR_EQ(copy, orig);
    free(copy);
    free(orig);
    /* The index: escaped title, every study linked with its facts, the broken file named. */
    snprintf(path, sizeof path, "%s/index.html", out);
    char *index = slurp(path);
    HAS(index, "<title>A &lt;fleet&gt;</title>");
    HAS(index, "<a href=\"studies/vm--scenarios/index.html\"><code>vm/scenarios.json</code></a>");
    /* An older file: its host named from its environment (results/identity.h), and saying so. */
    HAS(index, "<td>scenarios</td><td>full</td><td>host-");
    HAS(index, "<span class=\"facts\">(AMD EPYC 7B13, 2 CPUs; named from these)</span></td>"
               "<td>Linux 6.18.0, Debian GNU/Linux 12 (bookworm)</td>");
    HAS(index, "<code>580c2497b027</code>");
    HAS(index, "<td class=\"r\">18 of 20</td><td>complete</td>");
    HAS(index, "<li><code>broken.json</code>: not valid JSON");
    HAS(index, "1 other JSON file under the directory");
    HAS(index, "Content-Security-Policy");
    HAS_NOT(index, "<script");
    free(index);
    /* A study: the frame, the facts, the report's own tables. */
    snprintf(path, sizeof path, "%s/studies/vm--scenarios/index.html", out);
    char *page = slurp(path);
    HAS(page, "<link rel=\"stylesheet\" href=\"../../style.css\">");
    HAS(page, "<a href=\"../../index.html\">");
    HAS(page, "Results file <a href=\"scenarios.json\"><code>vm/scenarios.json</code></a>");
    HAS(page, "<h3 id=\"spawn_capture_small\"><code>spawn_capture_small</code></h3>");
    HAS(page, "<td class=\"r\">611.2</td>");
    free(page);
    /* Nothing left beside the site: no staging directory, no old site. */
    ASSERT_EQ(entries(pk_test_tmpdir(), ".site."), 0);
    pkb_buf_free(&sum.warnings);
    free(in);
    free(out);
}

TEST_IMPL(publish_site_refuses_what_it_must_not_replace)
{
    char *in = make_input(false), *out = tmp("mine"), err[1024] = "";
    pkb_publish_options o = {.report = {.no_plots = true}};
    /* A directory publish did not write: untouched. */
    ASSERT_OK(mkdir(out, 0755));
    char keep[4096];
    snprintf(keep, sizeof keep, "%s/thesis.tex", out);
    put_file(keep, "precious");
    ASSERT_EQ(pkb_publish(in, out, &o, NULL, err, sizeof err), -EEXIST);
    HAS(err, "--out '");
    HAS(err, "did not write (no .pkbench-site in it)");
    ASSERT(exists(out, "thesis.tex"));
    /* A file as --out, a site around its own sources, a missing or empty DIR. */
    ASSERT_EQ(pkb_publish(in, keep, &o, NULL, err, sizeof err), -ENOTDIR);
    HAS(err, "is not a directory");
    ASSERT_EQ(pkb_publish(in, pk_test_tmpdir(), &o, NULL, err, sizeof err), -EINVAL);
    HAS(err, "the site would replace its own sources");
    char *missing = tmp("nothing-here"), *s1 = tmp("s1"), *s2 = tmp("s2");
    ASSERT_EQ(pkb_publish(missing, s1, &o, NULL, err, sizeof err), -ENOENT);
    HAS(err, "DIR '");
    HAS(err, "No such file or directory");
    ASSERT_OK(mkdir(missing, 0755));
    snprintf(keep, sizeof keep, "%s/floor.json", missing);
    put_file(keep, "{}");
    ASSERT_EQ(pkb_publish(missing, s2, &o, NULL, err, sizeof err), -ENOENT);
    HAS(err, "holds no pkbench results file (1 JSON files looked at)");
    ASSERT(!exists(pk_test_tmpdir(), "s1") && !exists(pk_test_tmpdir(), "s2"));
    ASSERT_EQ(entries(pk_test_tmpdir(), ".s"), 0);
    free(s1);
    free(s2);
    free(missing);
    free(in);
    free(out);
}

TEST_IMPL(publish_site_replaced_whole_or_not_at_all)
{
    char *in = make_input(false), *out = tmp("site"), err[1024] = "";
    pkb_publish_options o = {.report = {.no_plots = true}};
    ASSERT_EQ(pkb_publish(in, out, &o, NULL, err, sizeof err), 0);
    char stray[4096], index[4096];
    snprintf(stray, sizeof stray, "%s/stray.html", out);
    snprintf(index, sizeof index, "%s/index.html", out);
    put_file(stray, "from the first site");
    char *before = slurp(index);
    /* A failing render (plots on, a gnuplot that is not there): the old site stays as it was. */
    pkb_publish_options bad = {.report = {.gnuplot = "/nonexistent/gnuplot"}};
    ASSERT(pkb_publish(in, out, &bad, NULL, err, sizeof err) < 0);
    HAS(err, "gnuplot");
    char *after = slurp(index);
    ASSERT_STR_EQ(after, before);
    ASSERT(exists(out, "stray.html"));
    ASSERT_EQ(entries(pk_test_tmpdir(), ".site."), 0);
    /* A second publish replaces the whole site: what the first one had is gone. */
    ASSERT_EQ(pkb_publish(in, out, &o, NULL, err, sizeof err), 0);
    ASSERT(!exists(out, "stray.html"));
    ASSERT(exists(out, "studies/vm--scenarios/index.html"));
    ASSERT_EQ(entries(pk_test_tmpdir(), ".site."), 0);
    free(before);
    free(after);
    free(in);
    free(out);
}

/* A synthetic results file of `host` (its id, its revision, Wine or not) at path. */
static void host_file(const char *path, const char *host, const char *id, int rev, bool wine)
{
    double base[8], pk[8];
    pks_rng rng;
    pks_rng_seed(&rng, 7 + (uint64_t)rev);
    pk_test_lognormal(&rng, base, 8, 100e3, 0.02);
    pk_test_lognormal(&rng, pk, 8, 90e3, 0.02);
    const pk_test_series series[] = {{"spawn_only/posix_spawn", base, 8, NULL},
                                     {"spawn_only/processkit", pk, 8, NULL}};
    json_t *doc = pk_test_results_doc(series, 2);
    json_t *env = json_object_get(doc, "environment");
    char commit[41], created[32];
    snprintf(commit, sizeof commit, "%040d", rev + 1);
    snprintf(created, sizeof created, "2026-02-%02dT00:00:00Z", rev + 1);
    json_object_set_new(env, "host", json_string(host));
    json_object_set_new(env, "host_id", json_string(id));
    json_object_set_new(env, "git_commit", json_string(commit));
    json_object_set_new(doc, "created", json_string(created));
    if (wine)
        json_object_set_new(env, "wine", json_string("8.0"));
    pk_test_write_doc(doc, path);
}

/* Files of two hosts make the table across hosts; a host with a suite measured three times, its
 * history; one host alone, no table across hosts. */
TEST_IMPL(publish_site_across_hosts_and_history)
{
    char *in = tmp("in"), *out = tmp("site"), err[1024] = "", path[4096];
    ASSERT_OK(mkdir(in, 0755));
    for (int rev = 0; rev < 3; rev++) {
        snprintf(path, sizeof path, "%s/vm-a-%d.json", in, rev);
        host_file(path, "vm-a", "0000000000a1", rev, false);
    }
    pkb_publish_options o = {.report = {.no_plots = true}};
    ASSERT_EQ(pkb_publish(in, out, &o, NULL, err, sizeof err), 0);
    ASSERT(!exists(out, "cross-host"));
    ASSERT(exists(out, "history/vm-a--Linux/index.html"));
    snprintf(path, sizeof path, "%s/index.html", out);
    char *index = slurp(path);
    HAS_NOT(index, "Across hosts");
    HAS(index, "<tr><td><a href=\"history/vm-a--Linux/index.html\">vm-a</a></td>"
               "<td>Linux</td><td class=\"r\">3</td></tr>");
    free(index);
    /* A second host, under Wine, with one file: a table across both; still one history. */
    snprintf(path, sizeof path, "%s/wine.json", in);
    host_file(path, "vm-b", "0000000000b2", 0, true);
    ASSERT_EQ(pkb_publish(in, out, &o, NULL, err, sizeof err), 0);
    ASSERT(exists(out, "cross-host/cross-host.md") && exists(out, "cross-host/cross-host.json"));
    ASSERT(!exists(out, "history/vm-b--Windows__Wine_8.0_"));
    snprintf(path, sizeof path, "%s/index.html", out);
    index = slurp(path);
    HAS(index, "<a href=\"cross-host/index.html\">One table of every study across the 2 hosts</a>");
    free(index);
    snprintf(path, sizeof path, "%s/cross-host/index.html", out);
    char *cross = slurp(path);
    HAS(cross, "<title>Across hosts</title>");
    HAS(cross, "<a href=\"../index.html\">");
    HAS(cross, "4 results files from 2 hosts");
    HAS(cross, "Windows (Wine 8.0)");
    HAS(cross, "<table>");
    free(cross);
    snprintf(path, sizeof path, "%s/history/vm-a--Linux/index.html", out);
    char *history = slurp(path);
    HAS(history, "<title>History: vm-a</title>");
    HAS(history, "The 3 results files of host <strong>vm-a</strong> (Linux)");
    HAS(history, ">History of 3 results files</h1>"); /* the host's files only, not vm-b's */
    HAS(history, "<link rel=\"stylesheet\" href=\"../../style.css\">");
    free(history);
    free(in);
    free(out);
}

static int pkbench(const char *const *args, pk_result *r)
{
    const char *argv[16] = {PK_PKBENCH_PATH};
    int n = 1;
    for (; args[n - 1] != NULL && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    ASSERT_OK(pk_run(&(pk_command){.argv = argv, .timeout_ms = 120000}, r));
    ASSERT_EQ(r->outcome.kind, PK_OUTCOME_EXITED);
    return r->outcome.code;
}

#define PKBENCH(r, ...) pkbench((const char *const[]){__VA_ARGS__, NULL}, r)

TEST_IMPL(publish_command_line)
{
    if (PK_PKBENCH_PATH[0] == '\0')
        pk_test_skip_gate("build", "pkbench is built only with PK_BUILD_BENCH");
    char *in = make_input(false), *out = tmp("site");
    pk_result r;
    ASSERT_EQ(PKBENCH(&r, "publish", in), 1);
    HAS(r.err.data, "publish: --out SITE is required");
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "publish", "--out", out), 1);
    HAS(r.err.data, "publish: no DIR given");
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "publish", in, "extra", "--out", out), 1);
    HAS(r.err.data, "publish: extra argument 'extra'");
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "publish", in, "--out="), 1);
    HAS(r.err.data, "publish: --out needs a directory");
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "publish", in, "--bogus", "--out", out), 1);
    HAS(r.err.data, "bogus");
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "publish", "--help"), 0);
    HAS(r.out.data, "pkbench publish DIR --out SITE");
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "publish", in, "--out", out, "--no-plots", "--title=Fleet"), 0);
    HAS(r.out.data, "/site/index.html (1 study; 1 file not published, named on the index)\n");
    HAS(r.err.data, "pkbench: publish: [1/1] studies/vm--scenarios\n");
    HAS(r.err.data, "pkbench: publish: not published: ");
    HAS(r.err.data, "broken.json: not valid JSON");
    pk_result_release(&r);
    ASSERT_EQ(PKBENCH(&r, "publish", in, "--out", in), 1);
    HAS(r.err.data, "holds DIR");
    pk_result_release(&r);
    free(in);
    free(out);
}
