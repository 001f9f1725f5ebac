/*
 * inline — the inner layer of html.h's conversion: one pass over a span of text that turns
 * backslash escapes, code spans, links, images, footnote references and emphasis into HTML and
 * escapes every other byte; and the escaping and URL rules every page of the site uses. The
 * blocks (html.c) call it on each heading, cell, item and paragraph.
 */
#define _GNU_SOURCE
#include "publish/inline.h"

#include "common/buf.h"
#include "publish/escape.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ==== Context: footnotes and heading ids ====================================================== */

void *pkb__md_grow(struct pkb__md_ctx *c, void *v, size_t *cap, size_t need, size_t size)
{
    void *nv = pkb_grow(v, cap, need, size, 8);
    if (nv == NULL)
        c->failed_to->failed = true;
    return nv;
}

struct pkb__md_note *pkb__md_note_find(struct pkb__md_ctx *c, const char *id, size_t n, bool add)
{
    for (size_t i = 0; i < c->nnotes; i++)
        if (strlen(c->notes[i].id) == n && memcmp(c->notes[i].id, id, n) == 0)
            return &c->notes[i];
    if (!add)
        return NULL;
    struct pkb__md_note *v = pkb__md_grow(c, c->notes, &c->capnotes, c->nnotes + 1, sizeof *v);
    char *copy = strndup(id, n);
    if (v == NULL || copy == NULL) {
        free(copy);
        c->failed_to->failed = true;
        return NULL;
    }
    c->notes = v;
    c->notes[c->nnotes] = (struct pkb__md_note){.id = copy};
    return &c->notes[c->nnotes++];
}

/* ==== Inlines ================================================================================= */

static bool is_punct(char ch)
{
    return ch > ' ' && ch < 127 && !isalnum((unsigned char)ch);
}

/* s[0] is a backtick run; the code span's length consumed, or 0 when it never closes. */
static size_t code_span(const char *s, size_t n, pkb_buf *out)
{
    size_t run = 0;
    while (run < n && s[run] == '`')
        run++;
    for (size_t i = run; i < n; i++) {
        if (s[i] != '`')
            continue;
        size_t k = 0;
        while (i + k < n && s[i + k] == '`')
            k++;
        if (k == run) {
            const char *body = s + run;
            size_t len = i - run;
            if (len >= 2 && body[0] == ' ' && body[len - 1] == ' ') /* "`` `x` ``" */
                body++, len -= 2;
            pkb_buf_puts(out, "<code>");
            for (size_t j = 0; j < len; j++) { /* pkb_md_code's "\|" is a pipe */
                bool pipe = body[j] == '\\' && j + 1 < len && body[j + 1] == '|';
                pkb_html_text_n(out, body + j + pipe, 1);
                j += pipe;
            }
            pkb_buf_puts(out, "</code>");
            return i + k;
        }
        i += k - 1;
    }
    return 0;
}

/* s[0] == '[' (or s[0..1] == "![", from = 1): the index of the matching ']' followed by '(' and
 * the ')' that closes it in *close, or 0 when this is no link. */
size_t pkb__md_link_shape(const char *s, size_t n, size_t from, size_t *close)
{
    int depth = 0;
    for (size_t i = from; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            i++;
        } else if (s[i] == '`') { /* a code span's brackets are its own */
            size_t k = i + 1;
            while (k < n && s[k] != '`')
                k++;
            i = k < n ? k : i;
        } else if (s[i] == '[') {
            depth++;
        } else if (s[i] == ']' && --depth == 0) {
            if (i + 1 >= n || s[i + 1] != '(')
                return 0;
            int parens = 0; /* a target may hold balanced parentheses, as CommonMark's */
            for (size_t k = i + 2; k < n && s[k] != ' '; k++) {
                parens += s[k] == '(';
                if (s[k] == ')' && parens-- == 0) {
                    *close = k;
                    return i;
                }
            }
            return 0;
        }
    }
    return 0;
}

/* "[text](href)" or "![alt](src)" at s; the length consumed, or 0 when it is neither. */
size_t pkb__md_link(struct pkb__md_ctx *c, const char *s, size_t n, pkb_buf *out)
{
    bool image = s[0] == '!';
    size_t close = 0, end = pkb__md_link_shape(s, n, image ? 1 : 0, &close);
    if (end == 0)
        return 0;
    const char *text = s + (image ? 2 : 1), *href = s + end + 2;
    size_t tn = (size_t)(s + end - text), hn = close - end - 2;
    if (!pkb_html_safe_url(href, hn, image)) {
        pkb__md_inlines(c, text, tn, out); /* the words stay, the target goes */
        return close + 1;
    }
    if (image) {
        pkb_buf_puts(out, "<img src=\"");
        pkb_html_text_n(out, href, hn);
        pkb_buf_puts(out, "\" alt=\"");
        pkb_html_text_n(out, text, tn);
        pkb_buf_puts(out, "\">");
    } else {
        pkb_buf_puts(out, "<a href=\"");
        pkb_html_text_n(out, href, hn);
        pkb_buf_puts(out, "\">");
        pkb__md_inlines(c, text, tn, out);
        pkb_buf_puts(out, "</a>");
    }
    return close + 1;
}

/* "[^id]" at s: a numbered reference; the length consumed, or 0. */
static size_t footnote_ref(struct pkb__md_ctx *c, const char *s, size_t n, pkb_buf *out)
{
    size_t i = 2;
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_'))
        i++;
    if (i == 2 || i >= n || s[i] != ']' || i - 2 > 60)
        return 0;
    struct pkb__md_note *f = pkb__md_note_find(c, s + 2, i - 2, false);
    if (f == NULL) /* never defined: the text stays as written, no dangling link */
        return 0;
    bool first = !f->referred;
    if (first)
        f->number = ++c->next_number;
    f->referred = true;
    /* The first reference carries the id the note's back link returns to. */
    pkb_buf_printf(out, "<sup class=\"fnref\"><a href=\"#fn-%s\"%s%s%s>%d</a></sup>", f->id,
                   first ? " id=\"fnref-" : "", first ? f->id : "", first ? "\"" : "", f->number);
    return i + 1;
}

/* "**x**" (k 2) or "*x*" (k 1) at s: the emphasis, or 0 when the stars are plain text. A star
 * opens only before a non-blank and closes only after one, so "2 * 3 * 4" stays as it is. */
static size_t emphasis(struct pkb__md_ctx *c, const char *s, size_t n, size_t k, pkb_buf *out)
{
    if (n <= 2 * k || s[k] == ' ' || s[k] == '*')
        return 0;
    for (size_t i = k + 1; i + k <= n; i++) {
        if (s[i] == '`') { /* skip a code span: its stars are its own */
            size_t j = i + 1;
            while (j < n && s[j] != '`')
                j++;
            i = j < n ? j : i;
            continue;
        }
        if (s[i] == '\\') {
            i++;
            continue;
        }
        if (s[i] != '*' || s[i - 1] == ' ')
            continue;
        size_t run = 0;
        while (i + run < n && s[i + run] == '*')
            run++;
        if (run == k || (k == 2 && run == 3)) {
            pkb_buf_puts(out, k == 2 ? "<strong>" : "<em>");
            pkb__md_inlines(c, s + k, i - k, out);
            pkb_buf_puts(out, k == 2 ? "</strong>" : "</em>");
            return i + k;
        }
        i += run - 1;
    }
    return 0;
}

void pkb__md_inlines(struct pkb__md_ctx *c, const char *s, size_t n, pkb_buf *out)
{
    size_t text = 0; /* the start of the plain text not yet written */
    for (size_t i = 0; i < n;) {
        size_t used = 0;
        pkb_buf piece = {0};
        if (s[i] == '\\' && i + 1 < n && is_punct(s[i + 1])) {
            pkb_html_text_n(&piece, s + i + 1, 1);
            used = 2;
        } else if (s[i] == '`') {
            used = code_span(s + i, n - i, &piece);
        } else if (s[i] == '!' && i + 1 < n && s[i + 1] == '[') {
            used = pkb__md_link(c, s + i, n - i, &piece);
        } else if (s[i] == '[' && i + 1 < n && s[i + 1] == '^') {
            used = footnote_ref(c, s + i, n - i, &piece);
        } else if (s[i] == '[') {
            used = pkb__md_link(c, s + i, n - i, &piece);
        } else if (s[i] == '*') {
            size_t k = i + 1 < n && s[i + 1] == '*' ? 2 : 1;
            used = emphasis(c, s + i, n - i, k, &piece);
        }
        if (used == 0) {
            pkb_buf_free(&piece);
            i += s[i] == '`' || s[i] == '*' ? strspn(s + i, s[i] == '`' ? "`" : "*") : 1;
            if (i > n)
                i = n;
            continue;
        }
        pkb_html_text_n(out, s + text, i - text);
        pkb_buf_printf(out, "%s", piece.data ? piece.data : "");
        out->failed |= piece.failed;
        pkb_buf_free(&piece);
        i += used;
        text = i;
    }
    pkb_html_text_n(out, s + text, n - text);
}
