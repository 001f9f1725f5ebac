/*
 * html — pkbench's Markdown as HTML (html.h), the outer layer: a line-oriented pass over a piece
 * of text that recognises headings, fences, tables, quotes, lists and paragraphs, converts the
 * inside of a quote or a list item by calling itself on that text, and hands each heading, cell
 * and paragraph to the inline pass (inline.h). Footnote definitions are read first, so a
 * reference knows whether its note exists.
 */
#define _GNU_SOURCE
#include "publish/html.h"

#include "publish/escape.h"
#include "publish/inline.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ==== Lines =================================================================================== */

struct line {
    const char *s;
    size_t n;
};

struct lines {
    struct line *v;
    size_t n;
};

/* Splits md into lines (without "\n" or "\r\n"); false when out of memory. */
static bool split_lines(const char *md, size_t len, struct lines *L)
{
    size_t count = 1;
    for (size_t i = 0; i < len; i++)
        count += md[i] == '\n';
    L->v = calloc(count, sizeof *L->v);
    L->n = 0;
    if (L->v == NULL)
        return false;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(md + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - md) : len, n = end - at;
        if (n > 0 && md[at + n - 1] == '\r')
            n--;
        L->v[L->n++] = (struct line){md + at, n};
        at = end + 1;
    }
    return true;
}

static size_t indent_of(struct line l)
{
    size_t i = 0;
    while (i < l.n && l.s[i] == ' ')
        i++;
    return i;
}

static bool blank(struct line l)
{
    return indent_of(l) == l.n;
}

/* The width of a list marker ("- ", "* ", "+ ", "12. ") after the indentation, or 0. */
static size_t list_marker(struct line l, bool *ordered)
{
    size_t i = indent_of(l);
    if (i + 1 < l.n && strchr("-*+", l.s[i]) && l.s[i + 1] == ' ') {
        *ordered = false;
        return i + 2;
    }
    size_t d = i;
    while (d < l.n && isdigit((unsigned char)l.s[d]) && d - i < 9)
        d++;
    if (d > i && d + 1 < l.n && l.s[d] == '.' && l.s[d + 1] == ' ') {
        *ordered = true;
        return d + 2;
    }
    return 0;
}

/* ==== Blocks ================================================================================== */

static void blocks(struct pkb__md_ctx *c, const char *md, size_t len, bool tight, pkb_buf *out);

static bool is_fence(struct line l)
{
    size_t i = indent_of(l);
    return i < 4 && l.n - i >= 3 && memcmp(l.s + i, "```", 3) == 0;
}

static int heading_level(struct line l)
{
    size_t i = 0;
    while (i < l.n && l.s[i] == '#')
        i++;
    return i >= 1 && i <= 6 && (i == l.n || l.s[i] == ' ') ? (int)i : 0;
}

/* "---", "***" or "___" (three or more, blanks between allowed). */
static bool is_rule(struct line l)
{
    size_t i = indent_of(l), count = 0;
    if (i >= 4 || i >= l.n || !strchr("-*_", l.s[i]))
        return false;
    for (size_t k = i; k < l.n; k++) {
        if (l.s[k] == l.s[i])
            count++;
        else if (l.s[k] != ' ')
            return false;
    }
    return count >= 3;
}

static bool is_quote(struct line l)
{
    size_t i = indent_of(l);
    return i < 4 && i < l.n && l.s[i] == '>';
}

/* The cells of a table row, trimmed, into cells (room for l.n + 1); their count. A "\|" is a
 * pipe inside a cell, not its end. */
static size_t split_cells(struct line l, struct line *cells)
{
    size_t i = indent_of(l), end = l.n, n = 0;
    while (end > i && l.s[end - 1] == ' ')
        end--;
    if (i < end && l.s[i] == '|')
        i++;
    if (end > i && l.s[end - 1] == '|' && !(end >= i + 2 && l.s[end - 2] == '\\'))
        end--;
    for (size_t k = i, from = i; k <= end; k++) {
        if (k < end && l.s[k] == '\\' && k + 1 < end) {
            k++;
            continue;
        }
        if (k < end && l.s[k] != '|')
            continue;
        struct line cell = {l.s + from, k - from};
        while (cell.n > 0 && cell.s[0] == ' ')
            cell.s++, cell.n--;
        while (cell.n > 0 && cell.s[cell.n - 1] == ' ')
            cell.n--;
        cells[n++] = cell;
        from = k + 1;
    }
    return n;
}

/* The alignment of a separator cell (":--" left 'l', "--:" right 'r', ":-:" centre 'c', "---"
 * none '-'), or 0 when the cell is not one. */
static char alignment(struct line cell)
{
    size_t a = 0, b = cell.n;
    bool left = b > 0 && cell.s[0] == ':', right = b > 1 && cell.s[b - 1] == ':';
    a += left;
    b -= right;
    if (b <= a)
        return 0;
    for (size_t k = a; k < b; k++)
        if (cell.s[k] != '-')
            return 0;
    return left && right ? 'c' : right ? 'r' : left ? 'l' : '-';
}

/* Whether lines i and i+1 open a table: a row starting with '|' and a separator row with as many
 * cells. The alignments go into align (room for the row's length + 1) when it is one. */
static size_t table_head(const struct lines *L, size_t i, char *align, struct line *cells)
{
    if (i + 1 >= L->n || indent_of(L->v[i]) >= 4 || L->v[i].s[indent_of(L->v[i])] != '|')
        return 0;
    size_t ncols = split_cells(L->v[i], cells);
    if (L->v[i + 1].n + 1 < ncols || split_cells(L->v[i + 1], cells) != ncols)
        return 0;
    for (size_t k = 0; k < ncols; k++)
        if ((align[k] = alignment(cells[k])) == 0)
            return 0;
    return ncols;
}

static void table_row(struct pkb__md_ctx *c,
                      struct line l,
                      const char *tag,
                      const char *align,
                      size_t ncols,
                      struct line *cells,
                      pkb_buf *out)
{
    size_t n = split_cells(l, cells);
    pkb_buf_puts(out, "<tr>");
    for (size_t k = 0; k < (n > ncols ? n : ncols); k++) { /* a short row is padded, never cut */
        char a = k < ncols ? align[k] : '-';
        pkb_buf_printf(out, "<%s%s>", tag,
                       a == 'r'   ? " class=\"r\""
                       : a == 'c' ? " class=\"c\""
                                  : "");
        if (k < n)
            pkb__md_inlines(c, cells[k].s, cells[k].n, out);
        pkb_buf_printf(out, "</%s>", tag);
    }
    pkb_buf_puts(out, "</tr>\n");
}

/* The table at line i; the line after it. */
static size_t table(struct pkb__md_ctx *c, const struct lines *L, size_t i, pkb_buf *out)
{
    size_t width = 1;
    for (size_t k = i; k < L->n; k++)
        width = L->v[k].n + 1 > width ? L->v[k].n + 1 : width;
    char *align = malloc(width);
    struct line *cells = calloc(width, sizeof *cells);
    size_t ncols = align && cells ? table_head(L, i, align, cells) : 0;
    if (ncols == 0) { /* out of memory: the caller saw a table, so it was no parse failure */
        out->failed = true;
        free(align);
        free(cells);
        return L->n;
    }
    pkb_buf_puts(out, "<div class=\"table\"><table>\n<thead>");
    table_row(c, L->v[i], "th", align, ncols, cells, out);
    pkb_buf_puts(out, "</thead>\n<tbody>\n");
    size_t k = i + 2;
    for (; k < L->n && !blank(L->v[k]) && L->v[k].s[indent_of(L->v[k])] == '|'; k++)
        table_row(c, L->v[k], "td", align, ncols, cells, out);
    pkb_buf_puts(out, "</tbody>\n</table></div>\n");
    free(align);
    free(cells);
    return k;
}

/* A heading's id: its words in lower case joined by '-', unique on the page. */
static void heading_id(struct pkb__md_ctx *c, struct line text, pkb_buf *out)
{
    pkb_buf slug = {0};
    bool dash = false;
    for (size_t k = 0; k < text.n; k++) {
        unsigned char ch = (unsigned char)text.s[k];
        if (isalnum(ch) || ch == '_' || ch >= 0x80) {
            if (dash && slug.len > 0)
                pkb_buf_puts(&slug, "-");
            pkb_buf_printf(&slug, "%c", (char)tolower(ch));
            dash = false;
        } else if (ch == ' ' || ch == '-') {
            dash = true;
        }
    }
    if (slug.len == 0)
        pkb_buf_puts(&slug, "section");
    pkb_buf id = {0};
    for (int n = 1;; n++) {
        id.len = 0;
        pkb_buf_printf(&id, n == 1 ? "%s" : "%s-%d", slug.data, n);
        bool used = false;
        for (size_t k = 0; k < c->nslugs && !used && !id.failed; k++)
            used = strcmp(c->slugs[k], id.data) == 0;
        if (!used || id.failed)
            break;
    }
    char **v = pkb__md_grow(c, c->slugs, &c->capslugs, c->nslugs + 1, sizeof *v);
    char *copy = id.failed ? NULL : strdup(id.data);
    if (v != NULL && copy != NULL) {
        c->slugs = v;
        c->slugs[c->nslugs++] = copy;
        pkb_html_text(out, copy);
    } else {
        free(copy);
        out->failed = true;
    }
    pkb_buf_free(&slug);
    pkb_buf_free(&id);
}

static size_t heading(struct pkb__md_ctx *c, struct line l, int level, pkb_buf *out)
{
    struct line text = {l.s + level, l.n - (size_t)level};
    while (text.n > 0 && text.s[0] == ' ')
        text.s++, text.n--;
    while (text.n > 0 && (text.s[text.n - 1] == ' ' || text.s[text.n - 1] == '#'))
        text.n--; /* a closing "##" is decoration */
    pkb_buf_printf(out, "<h%d id=\"", level);
    heading_id(c, text, out);
    pkb_buf_puts(out, "\">");
    pkb__md_inlines(c, text.s, text.n, out);
    pkb_buf_printf(out, "</h%d>\n", level);
    return 1;
}

/* The fenced code block at line i; the line after its closing fence (or the end). */
static size_t fence(const struct lines *L, size_t i, pkb_buf *out)
{
    struct line open = L->v[i];
    size_t at = indent_of(open) + 3;
    while (at < open.n && open.s[at] == '`')
        at++;
    while (at < open.n && open.s[at] == ' ')
        at++;
    size_t lang = strcspn(open.s + at, " `");
    lang = at + lang > open.n ? open.n - at : lang;
    pkb_buf_puts(out, "<pre><code");
    if (lang > 0) {
        pkb_buf_puts(out, " class=\"language-");
        pkb_html_text_n(out, open.s + at, lang);
        pkb_buf_puts(out, "\"");
    }
    pkb_buf_puts(out, ">");
    size_t k = i + 1;
    for (; k < L->n && !is_fence(L->v[k]); k++) {
        pkb_html_text_n(out, L->v[k].s, L->v[k].n);
        pkb_buf_puts(out, "\n");
    }
    pkb_buf_puts(out, "</code></pre>\n");
    return k < L->n ? k + 1 : k;
}

/* The block quote at line i: its lines without the '>' (and one blank), as blocks. */
static size_t quote(struct pkb__md_ctx *c, const struct lines *L, size_t i, pkb_buf *out)
{
    pkb_buf inner = {0};
    size_t k = i;
    for (; k < L->n && is_quote(L->v[k]); k++) {
        struct line l = L->v[k];
        size_t at = indent_of(l) + 1;
        at += at < l.n && l.s[at] == ' ';
        pkb_buf_printf(&inner, "%.*s\n", (int)(l.n - at), l.s + at);
    }
    pkb_buf_puts(out, "<blockquote>\n");
    blocks(c, inner.data ? inner.data : "", inner.len, false, out);
    pkb_buf_puts(out, "</blockquote>\n");
    out->failed |= inner.failed;
    pkb_buf_free(&inner);
    return k;
}

/* Whether table() would take line k: a row starting with '|' over a separator row. */
static bool opens_table(const struct lines *L, size_t k)
{
    if (k + 1 >= L->n || blank(L->v[k]) || L->v[k].s[indent_of(L->v[k])] != '|')
        return false;
    size_t width = (L->v[k].n > L->v[k + 1].n ? L->v[k].n : L->v[k + 1].n) + 1;
    char *align = malloc(width);
    struct line *cells = calloc(width, sizeof *cells);
    bool yes = align && cells && table_head(L, k, align, cells) > 0;
    free(align);
    free(cells);
    return yes;
}

/* Whether line k starts a block, which ends a paragraph or a list item's lazy line. */
static bool starts_block(const struct lines *L, size_t k)
{
    bool ordered;
    struct line l = L->v[k];
    return blank(l) || heading_level(l) > 0 || is_fence(l) || is_quote(l) || is_rule(l) ||
           list_marker(l, &ordered) > 0 || opens_table(L, k);
}

/* One list item from line *k (a marker at `base`) into item; *k moves past it. Returns false
 * when the list ends after it, true when another item of the list follows. *loose is set when a
 * blank line separates items or an item's blocks. */
static bool
list_item(const struct lines *L, size_t *k, size_t base, bool ordered, pkb_buf *item, bool *loose)
{
    bool kind;
    size_t content = list_marker(L->v[*k], &kind);
    pkb_buf_printf(item, "%.*s\n", (int)(L->v[*k].n - content), L->v[*k].s + content);
    for ((*k)++; *k < L->n;) {
        struct line l = L->v[*k];
        size_t ind = indent_of(l);
        if (blank(l)) {
            size_t j = *k;
            while (j < L->n && blank(L->v[j]))
                j++;
            bool next = j < L->n && indent_of(L->v[j]) == base && list_marker(L->v[j], &kind) &&
                        kind == ordered;
            if (j >= L->n || (indent_of(L->v[j]) <= base && !next))
                return false; /* the blank lines belong to what follows the list */
            *loose = true;
            for (; *k < j; (*k)++)
                pkb_buf_puts(item, "\n");
            if (next)
                return true;
            continue;
        }
        if (ind > base) { /* a continuation, de-indented to the item's own margin */
            size_t cut = ind < content ? ind : content;
            pkb_buf_printf(item, "%.*s\n", (int)(l.n - cut), l.s + cut);
        } else if (list_marker(l, &kind)) {
            return kind == ordered && ind == base;
        } else if (!starts_block(L, *k)) {
            pkb_buf_printf(item, "%.*s\n", (int)(l.n - ind), l.s + ind); /* a lazy line */
        } else {
            return false;
        }
        (*k)++;
    }
    return false;
}

/* The list at line i; the line after it. */
static size_t list(struct pkb__md_ctx *c, const struct lines *L, size_t i, pkb_buf *out)
{
    bool ordered, loose = false;
    size_t base = indent_of(L->v[i]);
    list_marker(L->v[i], &ordered);
    long start = ordered ? strtol(L->v[i].s + base, NULL, 10) : 1;
    pkb_buf *items = NULL;
    size_t n = 0, k = i;
    for (bool more = true; more;) {
        pkb_buf *v = realloc(items, (n + 1) * sizeof *v);
        if (v == NULL) {
            out->failed = true;
            break;
        }
        items = v;
        items[n] = (pkb_buf){0};
        more = list_item(L, &k, base, ordered, &items[n++], &loose);
    }
    if (ordered && start != 1)
        pkb_buf_printf(out, "<ol start=\"%ld\">\n", start);
    else
        pkb_buf_puts(out, ordered ? "<ol>\n" : "<ul>\n");
    for (size_t j = 0; j < n; j++) {
        pkb_buf_puts(out, "<li>");
        blocks(c, items[j].data ? items[j].data : "", items[j].len, !loose, out);
        pkb_buf_puts(out, "</li>\n");
        out->failed |= items[j].failed;
        pkb_buf_free(&items[j]);
    }
    pkb_buf_puts(out, ordered ? "</ol>\n" : "</ul>\n");
    free(items);
    return k;
}

/* The paragraph at line i (in a tight list item, its text without <p>); the line after it. A
 * paragraph that is one image is a figure, captioned with the image's text. */
static size_t
paragraph(struct pkb__md_ctx *c, const struct lines *L, size_t i, bool tight, pkb_buf *out)
{
    pkb_buf text = {0};
    size_t k = i;
    do {
        size_t ind = indent_of(L->v[k]);
        pkb_buf_printf(&text, "%s%.*s", k > i ? "\n" : "", (int)(L->v[k].n - ind), L->v[k].s + ind);
        k++;
    } while (k < L->n && !starts_block(L, k));
    const char *t = text.data ? text.data : "";
    size_t close = 0, end = 0;
    if (text.len > 2 && t[0] == '!' && t[1] == '[')
        end = pkb__md_link_shape(t, text.len, 1, &close);
    if (end > 0 && close == text.len - 1 && pkb_html_safe_url(t + end + 2, close - end - 2, true)) {
        pkb_buf_puts(out, "<figure>");
        pkb__md_link(c, t, text.len, out);
        pkb_buf_puts(out, "<figcaption>");
        pkb__md_inlines(c, t + 2, end - 2, out);
        pkb_buf_puts(out, "</figcaption></figure>\n");
    } else {
        pkb_buf_puts(out, tight ? "" : "<p>");
        pkb__md_inlines(c, t, text.len, out);
        pkb_buf_puts(out, tight ? "\n" : "</p>\n");
    }
    out->failed |= text.failed;
    pkb_buf_free(&text);
    return k;
}

static void blocks(struct pkb__md_ctx *c, const char *md, size_t len, bool tight, pkb_buf *out)
{
    struct lines L;
    if (!split_lines(md, len, &L)) {
        out->failed = true;
        return;
    }
    for (size_t i = 0; i < L.n;) {
        struct line l = L.v[i];
        bool ordered;
        int level;
        if (blank(l))
            i++;
        else if (is_fence(l))
            i = fence(&L, i, out);
        else if ((level = heading_level(l)) > 0)
            i += heading(c, l, level, out);
        else if (opens_table(&L, i))
            i = table(c, &L, i, out);
        else if (is_rule(l))
            i++, pkb_buf_puts(out, "<hr>\n");
        else if (is_quote(l))
            i = quote(c, &L, i, out);
        else if (list_marker(l, &ordered) > 0)
            i = list(c, &L, i, out);
        else
            i = paragraph(c, &L, i, tight, out);
    }
    free(L.v);
}

/* ==== The whole text ========================================================================== */

/* Whether l is a footnote definition "[^id]: text"; the id's length in *idn. */
static bool footnote_def(struct line l, size_t *idn)
{
    if (l.n < 5 || l.s[0] != '[' || l.s[1] != '^')
        return false;
    size_t i = 2;
    while (i < l.n && (isalnum((unsigned char)l.s[i]) || l.s[i] == '-' || l.s[i] == '_'))
        i++;
    *idn = i - 2;
    return i > 2 && i - 2 <= 60 && i + 1 < l.n && l.s[i] == ']' && l.s[i + 1] == ':';
}

static void footnotes(struct pkb__md_ctx *c, pkb_buf *out)
{
    if (c->nnotes == 0)
        return;
    for (size_t k = 0; k < c->nnotes; k++) /* defined, never referred to: still shown, last */
        if (!c->notes[k].referred)
            c->notes[k].number = ++c->next_number;
    pkb_buf_puts(out, "<section class=\"footnotes\">\n<ol>\n");
    for (int n = 1; n <= c->next_number; n++) {
        for (size_t k = 0; k < c->nnotes; k++) {
            const struct pkb__md_note *f = &c->notes[k];
            if (f->number != n)
                continue;
            pkb_buf_printf(out, "<li id=\"fn-%s\" value=\"%d\">", f->id, n);
            pkb__md_inlines(c, f->text, strlen(f->text), out);
            if (f->referred)
                pkb_buf_printf(out, " <a href=\"#fnref-%s\" class=\"back\">↩</a>", f->id);
            pkb_buf_puts(out, "</li>\n");
        }
    }
    pkb_buf_puts(out, "</ol>\n</section>\n");
}

void pkb_md_to_html(const char *md, size_t len, pkb_buf *out)
{
    struct pkb__md_ctx c = {.failed_to = out};
    struct lines L;
    if (!split_lines(md, len, &L)) {
        out->failed = true;
        return;
    }
    pkb_buf body = {0};
    bool in_fence = false;
    for (size_t i = 0; i < L.n; i++) { /* the notes first, so a reference knows its note */
        struct line l = L.v[i];
        size_t idn;
        in_fence ^= is_fence(l);
        if (!in_fence && footnote_def(l, &idn)) {
            struct pkb__md_note *f = pkb__md_note_find(&c, l.s + 2, idn, true);
            size_t at = idn + 4;
            while (at < l.n && l.s[at] == ' ')
                at++;
            if (f != NULL && f->text == NULL && (f->text = strndup(l.s + at, l.n - at)) == NULL)
                out->failed = true;
            continue;
        }
        pkb_buf_printf(&body, "%.*s\n", (int)l.n, l.s);
    }
    free(L.v);
    blocks(&c, body.data ? body.data : "", body.len, false, out);
    footnotes(&c, out);
    out->failed |= body.failed;
    pkb_buf_free(&body);
    for (size_t k = 0; k < c.nnotes; k++) {
        free(c.notes[k].id);
        free(c.notes[k].text);
    }
    free(c.notes);
    for (size_t k = 0; k < c.nslugs; k++)
        free(c.slugs[k]);
    free(c.slugs);
}
