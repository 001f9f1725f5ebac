/*
 * fuzz_capture — bounded capture (keep all / none / head / tail / fail, with byte and line caps)
 * against its specification, whatever the read boundaries.
 *
 * A capped capture is what lets a caller run a child that writes gigabytes; what it keeps must
 * still be exactly what processkit.h promises, since callers show it as "the first" or "the
 * last" output. The bytes go through the library's stream pump over a pipe (feed.h), cut into
 * reads as the input says and then whole. Properties, with "lines" from the reference split and
 * a line's size counting its newline:
 *
 *   - chunking does not change what is kept, nor the totals or the truncated flag;
 *   - head (and fail): the kept bytes are the first k bytes of the input, k at a line boundary,
 *     within max_bytes and max_lines, and maximal: the next line is dropped (longer than
 *     max_line) or would not fit; truncated exactly when something was not kept;
 *   - tail: the kept bytes are the last k bytes of the input, k at a line boundary, within the
 *     caps, and maximal: the line before is dropped or would not fit; truncated likewise;
 *   - all: the delivered lines, truncated when one was dropped; none: nothing, never truncated;
 *   - with no consumer and no cap (the bulk path) every policy keeps the whole input.
 */
#define _GNU_SOURCE
#include "feed.h"

#include <stdlib.h>
#include <string.h>

static void ignore_line(void *user, const pk_line *line)
{
    (void)user;
    (void)line;
}

static size_t size_of(const struct ref_line *l)
{
    return l->len + l->nl;
}

static const char *keep_name(pk_keep k)
{
    static const char *const names[] = {"all", "none", "tail", "head", "fail"};
    return (unsigned)k < 5 ? names[k] : "?";
}

/* Head: the first k bytes, whole lines, within the caps, and the next line could not be kept. */
static void
check_head(const struct feed_input *in, const pk_output *o, const struct ref_line *l, size_t n)
{
    size_t k = o->len, mb = in->cfg.capture.max_bytes, ml = in->cfg.capture.max_lines;
    CHECK(k <= in->len && (k == 0 || memcmp(o->data, in->data, k) == 0),
          "head: the %zu kept bytes are not the input's first", k);
    size_t j = 0, at = 0;
    while (j < n && at + size_of(&l[j]) <= k)
        at += size_of(&l[j++]);
    CHECK(at == k, "head: %zu kept bytes end inside line %zu", k, j);
    for (size_t i = 0; i < j; i++)
        CHECK(!l[i].dropped, "head: kept line %zu is longer than max_line", i);
    CHECK(mb == 0 || k <= mb, "head: %zu bytes kept, max_bytes %zu", k, mb);
    CHECK(ml == 0 || j <= ml, "head: %zu lines kept, max_lines %zu", j, ml);
    if (j < n)
        CHECK(l[j].dropped || (mb != 0 && k + size_of(&l[j]) > mb) || (ml != 0 && j + 1 > ml),
              "head: line %zu (%zu bytes) would have fit after %zu bytes in %zu lines", j,
              size_of(&l[j]), k, j);
    CHECK(o->truncated == (j < n), "head: truncated %d with %zu of %zu lines kept", o->truncated, j,
          n);
}

/* Tail: the last k bytes, whole lines, within the caps, and the line before could not be kept. */
static void
check_tail(const struct feed_input *in, const pk_output *o, const struct ref_line *l, size_t n)
{
    size_t k = o->len, mb = in->cfg.capture.max_bytes, ml = in->cfg.capture.max_lines;
    CHECK(k <= in->len && (k == 0 || memcmp(o->data, in->data + in->len - k, k) == 0),
          "tail: the %zu kept bytes are not the input's last", k);
    size_t j = n;
    while (j > 0 && l[j - 1].off >= in->len - k)
        j--;
    CHECK(j == n ? k == 0 : l[j].off == in->len - k, "tail: %zu kept bytes start inside a line", k);
    for (size_t i = j; i < n; i++)
        CHECK(!l[i].dropped, "tail: kept line %zu is longer than max_line", i);
    CHECK(mb == 0 || k <= mb, "tail: %zu bytes kept, max_bytes %zu", k, mb);
    CHECK(ml == 0 || n - j <= ml, "tail: %zu lines kept, max_lines %zu", n - j, ml);
    if (j > 0)
        CHECK(l[j - 1].dropped || (mb != 0 && k + size_of(&l[j - 1]) > mb) ||
                  (ml != 0 && n - j + 1 > ml),
              "tail: line %zu (%zu bytes) would have fit before %zu bytes in %zu lines", j - 1,
              size_of(&l[j - 1]), k, n - j);
    CHECK(o->truncated == (j > 0), "tail: truncated %d with %zu of %zu lines kept", o->truncated,
          n - j, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct feed_input in;
    if (!feed_parse(data, size, &in))
        return 0;
    pk_output a, b;
    bool line_path, line_path_b;
    feed_run(&in, true, ignore_line, NULL, &a, &line_path);
    feed_run(&in, false, ignore_line, NULL, &b, &line_path_b);
    CHECK(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0),
          "keep %s: chunking changed the kept bytes (%zu vs %zu)", keep_name(in.cfg.capture.keep),
          a.len, b.len);
    CHECK(a.truncated == b.truncated && a.total_lines == b.total_lines &&
              a.dropped_lines == b.dropped_lines && a.total_bytes == b.total_bytes,
          "keep %s: chunking changed the totals", keep_name(in.cfg.capture.keep));
    CHECK(b.data == NULL || b.data[b.len] == '\0', "the kept bytes are not NUL-terminated");

    struct ref_line *l;
    size_t n = ref_split(in.data, in.len, ref_max_line(&in.cfg), &l);
    CHECK(b.total_lines == n, "total_lines %llu, reference %zu", (unsigned long long)b.total_lines,
          n);
    if (!line_path) {
        CHECK(b.len == in.len && (b.len == 0 || memcmp(b.data, in.data, b.len) == 0) &&
                  !b.truncated && b.dropped_lines == 0,
              "keep %s, bulk path: kept %zu of %zu bytes", keep_name(in.cfg.capture.keep), b.len,
              in.len);
    } else {
        switch (in.cfg.capture.keep) {
        case PK_KEEP_NONE:
            CHECK(b.data == NULL && b.len == 0 && !b.truncated, "keep none kept %zu bytes", b.len);
            break;
        case PK_KEEP_ALL: {
            size_t at = 0, dropped = 0;
            bool ok = true;
            for (size_t i = 0; ok && i < n; i++) {
                if (l[i].dropped) {
                    dropped++;
                    continue;
                }
                ok = at + size_of(&l[i]) <= b.len &&
                     memcmp(b.data + at, in.data + l[i].off, size_of(&l[i])) == 0;
                at += size_of(&l[i]);
            }
            CHECK(ok && at == b.len, "keep all: kept %zu bytes, not the delivered lines", b.len);
            CHECK(b.truncated == (dropped > 0), "keep all: truncated %d, %zu dropped", b.truncated,
                  dropped);
            break;
        }
        case PK_KEEP_HEAD:
        case PK_KEEP_FAIL:
            check_head(&in, &b, l, n);
            break;
        case PK_KEEP_TAIL:
            check_tail(&in, &b, l, n);
            break;
        }
    }
    free(l);
    free(a.data);
    free(b.data);
    feed_input_free(&in);
    return 0;
}
