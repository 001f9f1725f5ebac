/*
 * fuzz_lines — the line splitter and decoder (lib/src/pump.c) against a reference model.
 *
 * Arbitrary bytes (feed.h's format: options, payload, chunking) go through the library's stream
 * pump over a pipe twice: cut into reads as the input says, and in reads as large as the pipe
 * gives. The pump is what every child's output passes through, byte-exact in raw mode and
 * decoded in text mode, with an 8-bytes-at-a-time ASCII shortcut, a buffer compacted once per
 * read and long lines discarded as they arrive — each an easy place to lose, split or mis-decode
 * a byte at a read boundary. Properties:
 *
 *   - chunking does not change the result: the same lines (number, bytes, newline flag) and the
 *     same totals whatever the read boundaries and whenever lines are taken;
 *   - the lines are the reference's: the input split at '\n', a line longer than max_line
 *     counted and dropped, and in text mode one CR of a CRLF dropped and each maximal invalid
 *     subsequence replaced by U+FFFD (ref_decode, a different algorithm from the library's);
 *   - text mode delivers only valid UTF-8; raw mode never delivers a line over max_line, and
 *     re-joining its lines and newlines gives back the input when nothing was dropped;
 *   - totals are exact (bytes, lines, dropped lines); keeping everything keeps exactly the
 *     delivered lines' raw bytes (the bulk path: the input itself); keeping nothing keeps nothing.
 */
#define _GNU_SOURCE
#include "feed.h"

#include <stdlib.h>
#include <string.h>

/* The lines one run delivered, their bytes in one pool. */
struct seen {
    struct rec {
        uint64_t number;
        size_t off, len;
        bool nl;
    } * v;
    size_t n, cap;
    unsigned char *pool;
    size_t used, pool_cap;
    size_t max_line;
    bool raw;
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(p, c * size);
    CHECK(q != NULL, "out of memory");
    *cap = c;
    return q;
}

static void record(struct seen *s, uint64_t number, const void *data, size_t len, bool nl)
{
    s->v = grow(s->v, &s->cap, s->n + 1, sizeof *s->v);
    s->pool = grow(s->pool, &s->pool_cap, s->used + len + 1, 1);
    memcpy(s->pool + s->used, data, len);
    s->v[s->n++] = (struct rec){.number = number, .off = s->used, .len = len, .nl = nl};
    s->used += len;
}

static void on_line(void *user, const pk_line *line)
{
    struct seen *s = user;
    const unsigned char *p = (const unsigned char *)line->data;
    if (s->raw)
        CHECK(line->len <= s->max_line, "line %llu: %zu bytes, max_line %zu",
              (unsigned long long)line->number, line->len, s->max_line);
    else
        CHECK(ref_valid_utf8(p, line->len), "line %llu: invalid UTF-8 in text mode",
              (unsigned long long)line->number);
    record(s, line->number, p, line->len, line->newline);
}

static void seen_free(struct seen *s)
{
    free(s->v);
    free(s->pool);
}

/* The first difference between two runs' lines, or -1. */
static long first_difference(const struct seen *a, const struct seen *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        const struct rec *x = &a->v[i], *y = &b->v[i];
        if (x->number != y->number || x->nl != y->nl || x->len != y->len ||
            memcmp(a->pool + x->off, b->pool + y->off, x->len) != 0)
            return (long)i;
    }
    return a->n == b->n ? -1 : (long)n;
}

static bool same_output(const pk_output *a, const pk_output *b)
{
    return a->len == b->len && a->total_bytes == b->total_bytes &&
           a->total_lines == b->total_lines && a->dropped_lines == b->dropped_lines &&
           a->truncated == b->truncated && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

/* What the reference expects: every line that is not dropped, decoded as the mode says. */
static void
expect(const struct feed_input *in, const struct ref_line *lines, size_t n, struct seen *want)
{
    size_t longest = 0;
    for (size_t i = 0; i < n; i++)
        longest = !lines[i].dropped && lines[i].len > longest ? lines[i].len : longest;
    unsigned char *tmp = malloc(longest * 3 + 1);
    CHECK(tmp != NULL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const struct ref_line *l = &lines[i];
        if (l->dropped)
            continue;
        const unsigned char *p = in->data + l->off;
        size_t len = l->len;
        if (!in->cfg.raw) {
            if (l->nl && len > 0 && p[len - 1] == '\r')
                len--;
            len = ref_decode(p, len, tmp);
            p = tmp;
        }
        record(want, i + 1, p, len, l->nl);
    }
    free(tmp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct feed_input in;
    if (!feed_parse(data, size, &in))
        return 0;
    size_t max_line = ref_max_line(&in.cfg);
    struct seen a = {.max_line = max_line, .raw = in.cfg.raw}, b = a, want = a;
    pk_output oa, ob;
    bool line_path, line_path_b;
    feed_run(&in, true, on_line, &a, &oa, &line_path);
    feed_run(&in, false, on_line, &b, &ob, &line_path_b);

    long d = first_difference(&a, &b);
    CHECK(d < 0, "chunking changed line %ld (%zu vs %zu lines)", d, a.n, b.n);
    CHECK(same_output(&oa, &ob), "chunking changed the output: %zu vs %zu bytes kept", oa.len,
          ob.len);

    struct ref_line *lines;
    size_t nlines = ref_split(in.data, in.len, max_line, &lines);
    size_t ndropped = 0;
    for (size_t i = 0; i < nlines; i++)
        ndropped += lines[i].dropped;
    CHECK(ob.total_bytes == in.len, "total_bytes %llu, input %zu",
          (unsigned long long)ob.total_bytes, in.len);
    CHECK(ob.total_lines == nlines, "total_lines %llu, reference %zu",
          (unsigned long long)ob.total_lines, nlines);

    if (line_path) {
        expect(&in, lines, nlines, &want);
        d = first_difference(&b, &want);
        CHECK(d < 0, "line %ld differs from the reference (%zu lines, reference %zu)", d, b.n,
              want.n);
        CHECK(ob.dropped_lines == ndropped, "dropped_lines %llu, reference %zu",
              (unsigned long long)ob.dropped_lines, ndropped);
        if (in.cfg.raw && ndropped == 0) {
            /* Re-joined, the raw lines are the input. */
            size_t at = 0;
            for (size_t i = 0; i < b.n; i++) {
                const struct rec *r = &b.v[i];
                CHECK(at + r->len + r->nl <= in.len &&
                          memcmp(in.data + at, b.pool + r->off, r->len) == 0 &&
                          (!r->nl || in.data[at + r->len] == '\n'),
                      "raw line %zu does not re-join at offset %zu", i, at);
                at += r->len + r->nl;
            }
            CHECK(at == in.len, "raw lines re-join to %zu of %zu bytes", at, in.len);
        }
    } else {
        CHECK(b.n == 0, "the bulk path delivered %zu lines", b.n);
    }

    if (in.cfg.capture.keep == PK_KEEP_ALL) {
        /* Everything delivered, as raw bytes (the bulk path delivers nothing and keeps all). */
        size_t at = 0;
        bool ok = true;
        for (size_t i = 0; ok && i < nlines; i++) {
            const struct ref_line *l = &lines[i];
            if (line_path && l->dropped)
                continue;
            size_t total = l->len + l->nl;
            ok = at + total <= ob.len && memcmp(ob.data + at, in.data + l->off, total) == 0;
            at += total;
        }
        CHECK(ok && at == ob.len, "keep all: kept %zu bytes, not the %s lines", ob.len,
              line_path ? "delivered" : "input's");
        CHECK(ob.truncated == (line_path && ndropped > 0), "keep all: truncated %d", ob.truncated);
    } else if (in.cfg.capture.keep == PK_KEEP_NONE) {
        CHECK(ob.data == NULL && ob.len == 0 && !ob.truncated, "keep none kept %zu bytes", ob.len);
    }
    CHECK(ob.data == NULL || ob.data[ob.len] == '\0', "the kept bytes are not NUL-terminated");

    free(lines);
    free(oa.data);
    free(ob.data);
    seen_free(&a);
    seen_free(&b);
    seen_free(&want);
    feed_input_free(&in);
    return 0;
}
