/*
 * page — the frame of every page of the site and its stylesheet (page.h). The policy below is
 * what makes "no script, nothing from elsewhere" a browser's rule and not only a promise: a page
 * may load images and its stylesheet from its own site and nothing else, and runs no script.
 */
#include "publish/page.h"

#include "common/files.h"
#include "publish/escape.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* 'self' is the page's own origin (the site's host, or file:// opened from disk). */
#define CSP                                                                                        \
    "default-src 'none'; img-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'"

void pkb_page_head(pkb_buf *b, const char *title, const char *root)
{
    pkb_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"" CSP "\">\n"
                    "<meta name=\"generator\" content=\"pkbench publish\">\n");
    pkb_html_printf(b,
                    "<title>%s</title>\n<link rel=\"stylesheet\" href=\"%sstyle.css\">\n</head>\n"
                    "<body>\n",
                    title, root);
    if (root[0] != '\0')
        pkb_html_printf(b, "<nav><a href=\"%sindex.html\">← every study</a></nav>\n", root);
    pkb_buf_puts(b, "<main>\n");
}

void pkb_page_foot(pkb_buf *b, const char *note)
{
    pkb_buf_puts(b, "</main>\n<footer>");
    pkb_buf_puts(b, note);
    pkb_buf_puts(b, "</footer>\n</body>\n</html>\n");
}

int pkb_page_read(const char *path, pkb_buf *b)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -errno;
    char chunk[65536];
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;)
        pkb_buf_printf(b, "%.*s", (int)n, chunk);
    int rc = ferror(f) ? -EIO : b->failed ? -ENOMEM : 0;
    fclose(f);
    return rc;
}

int pkb_page_put(const char *dir, const char *name, pkb_buf *b, char *err, size_t err_len)
{
    int rc = b->failed ? -ENOMEM : pkb_write_file(dir, name, b->data ? b->data : "", b->len);
    if (rc != 0)
        return pkb_fail(err, err_len, rc, "cannot write %s/%s: %s", dir, name, strerror(-rc));
    return 0;
}

/* Plain, readable, print-friendly: a measure of text, numbers in tabular figures and aligned as
 * the Markdown's alignment row says, wide tables scrolling inside their box, figures as wide as
 * the text. */
const char pkb_page_css[] =
    "/* pkbench publish: the site's one stylesheet. */\n"
    ":root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --soft: #f6f8fa; "
    "--accent: #0a58ca; }\n"
    "* { box-sizing: border-box; }\n"
    "body { margin: 0; color: var(--fg); background: #fff; font: 16px/1.5 system-ui, "
    "-apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; }\n"
    "main, nav, footer { max-width: 78rem; margin: 0 auto; padding: 0 1.5rem; }\n"
    "nav { padding-top: 1rem; font-size: 0.9rem; }\n"
    "main { padding-bottom: 2rem; }\n"
    "footer { border-top: 1px solid var(--line); color: var(--muted); font-size: 0.85rem; "
    "padding-top: 0.75rem; padding-bottom: 2rem; }\n"
    "h1 { font-size: 1.7rem; margin: 1.2rem 0 0.6rem; }\n"
    "h2 { font-size: 1.35rem; margin: 2rem 0 0.6rem; padding-bottom: 0.2rem; "
    "border-bottom: 1px solid var(--line); }\n"
    "h3 { font-size: 1.1rem; margin: 1.5rem 0 0.5rem; }\n"
    "p, li { max-width: 60rem; }\n"
    "a { color: var(--accent); }\n"
    "code { font: 0.88em/1.4 ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; "
    "background: var(--soft); padding: 0.05em 0.3em; border-radius: 3px; }\n"
    "pre { background: var(--soft); padding: 0.8rem; overflow-x: auto; }\n"
    "pre code { background: none; padding: 0; }\n"
    "blockquote { margin: 1rem 0; padding: 0.4rem 1rem; border-left: 4px solid #d4a72c; "
    "background: #fff8c5; }\n"
    "blockquote p { margin: 0.3rem 0; }\n"
    ".table { overflow-x: auto; margin: 0.8rem 0 1.2rem; }\n"
    "table { border-collapse: collapse; font-size: 0.92rem; }\n"
    "th, td { border: 1px solid var(--line); padding: 0.3rem 0.6rem; text-align: left; "
    "vertical-align: top; }\n"
    "th { background: var(--soft); font-weight: 600; }\n"
    "tbody tr:nth-child(even) td { background: #fbfcfd; }\n"
    "td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }\n"
    "td.c, th.c { text-align: center; }\n"
    "figure { margin: 1rem 0 1.5rem; }\n"
    "figure img { max-width: 100%; height: auto; border: 1px solid var(--line); "
    "background: #fff; }\n"
    "figcaption { color: var(--muted); font-size: 0.9rem; }\n"
    "sup.fnref { font-size: 0.75em; }\n"
    ".footnotes { border-top: 1px solid var(--line); margin-top: 2rem; font-size: 0.9rem; "
    "color: var(--muted); }\n"
    ".facts { color: var(--muted); font-size: 0.92rem; }\n"
    ".state-incomplete { color: #9a6700; font-weight: 600; }\n"
    "@media print { nav { display: none; } .table { overflow: visible; } }\n";
