/*
 * The part of a stream --json records: its head or its tail, whole lines only, within a byte cap
 * (1 MiB unless --max-bytes says otherwise) and an optional line cap; the totals are exact.
 *
 * It works on the chunks the relay reads, never splitting lines as they pass, so its cost is a
 * newline count and at most one copy of each byte, however short the lines: the whole-line rule
 * is applied once, when the kept text is asked for. A relay that reads only to capture (the teed
 * one) reads straight into the kept text (pkr_capture_slot), so those bytes are copied once, by
 * the read itself, and never again from a buffer into the ring.
 *   HEAD (and FAIL): the first max_bytes bytes are stored; at the end the text is cut back to the
 *     last newline when more came, then to max_lines lines. A prefix, sealed at the first line
 *     that did not fit.
 *   TAIL: a ring of max_bytes + 1 bytes holds the latest ones; at the end a partial first line is
 *     dropped (the extra byte says whether the window starts at a line start), then all but the
 *     last max_lines lines.
 * A final line without a newline is a line. Memory stays within max_bytes + 1 bytes.
 */
#define _GNU_SOURCE
#include "capture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Sixteen bytes at a time with the compiler's vector extension (SSE2 on x86-64, NEON on arm64):
 * a compare gives -1 per newline lane, subtracted into byte counters that are summed before
 * they can wrap (255 rounds). Short lines are where a per-line memchr would crawl. */
typedef unsigned char pkr_v16 __attribute__((vector_size(16)));

uint64_t pkr_count_newlines(const char *data, size_t len)
{
    const pkr_v16 nl = (pkr_v16){0} + '\n';
    uint64_t n = 0;
    size_t i = 0;
    while (len - i >= 16) {
        pkr_v16 acc = {0};
        size_t rounds = (len - i) / 16 < 255 ? (len - i) / 16 : 255;
        for (size_t r = 0; r < rounds; r++, i += 16) {
            pkr_v16 v;
            memcpy(&v, data + i, 16);
            acc -= (pkr_v16)(v == nl);
        }
        unsigned char lanes[16];
        memcpy(lanes, &acc, 16);
        for (int k = 0; k < 16; k++)
            n += lanes[k];
    }
    for (; i < len; i++)
        n += data[i] == '\n';
    return n;
}

void pkr_capture_init(struct pkr_capture *c, pk_keep keep, size_t max_bytes, size_t max_lines)
{
    *c = (struct pkr_capture){.keep = keep, .max_bytes = max_bytes, .max_lines = max_lines};
}

/* The kept text's buffer, allocated at the first byte: max_bytes (HEAD) or max_bytes + 1 (TAIL). */
static int ensure_buf(struct pkr_capture *c)
{
    if (c->buf != NULL)
        return 0;
    c->cap = c->keep == PK_KEEP_TAIL ? c->max_bytes + 1 : c->max_bytes;
    c->buf = malloc(c->cap);
    return c->buf != NULL ? 0 : -ENOMEM;
}

/* The totals of bytes that just arrived, wherever they are. */
static void count(struct pkr_capture *c, const char *data, size_t len)
{
    c->total_bytes += len;
    c->newlines += pkr_count_newlines(data, len);
    c->last = data[len - 1];
}

/* Where the next byte of the ring goes. */
static size_t ring_end(const struct pkr_capture *c)
{
    return (c->head + c->len) % c->cap;
}

/* len more bytes at the ring's end (written there already): the oldest make way. */
static void ring_grew(struct pkr_capture *c, size_t len)
{
    if (c->len + len <= c->cap) {
        c->len += len;
    } else {
        c->head = (c->head + c->len + len) % c->cap;
        c->len = c->cap;
    }
}

int pkr_capture_feed(struct pkr_capture *c, const char *data, size_t len)
{
    if (len == 0)
        return 0;
    count(c, data, len);
    if (c->max_bytes == 0)
        return 0;
    if (ensure_buf(c) != 0)
        return -ENOMEM;
    if (c->keep != PK_KEEP_TAIL) {
        size_t room = c->cap - c->len, n = len < room ? len : room;
        memcpy(c->buf + c->len, data, n);
        c->len += n;
        return 0;
    }
    /* The ring: only the last cap bytes of this chunk can matter. */
    if (len >= c->cap) {
        memcpy(c->buf, data + len - c->cap, c->cap);
        c->head = 0;
        c->len = c->cap;
        return 0;
    }
    size_t tail = ring_end(c);
    size_t first = len < c->cap - tail ? len : c->cap - tail;
    memcpy(c->buf + tail, data, first);
    memcpy(c->buf, data + first, len - first);
    ring_grew(c, len);
    return 0;
}

char *pkr_capture_slot(struct pkr_capture *c, size_t want, size_t *room)
{
    *room = 0;
    if (c->max_bytes == 0 || ensure_buf(c) != 0)
        return NULL;
    if (c->keep == PK_KEEP_TAIL) {
        /* A ring smaller than the read would take many reads to fill: read the chunk elsewhere
         * and feed it, which copies only its last cap bytes. */
        if (c->cap < want)
            return NULL;
        size_t tail = ring_end(c);
        *room = c->cap - tail; /* up to the ring's end: the next read wraps */
        return c->buf + tail;
    }
    if (c->len == c->cap)
        return NULL; /* the head is sealed: later bytes are only counted */
    *room = c->cap - c->len;
    return c->buf + c->len;
}

void pkr_capture_commit(struct pkr_capture *c, size_t len)
{
    if (len == 0)
        return;
    if (c->keep == PK_KEEP_TAIL) {
        count(c, c->buf + ring_end(c), len);
        ring_grew(c, len);
    } else {
        count(c, c->buf + c->len, len);
        c->len += len;
    }
}

/* The text from the first of its last `lines` lines (a final unterminated line counts). */
static size_t last_lines_start(const char *p, size_t n, size_t lines)
{
    size_t seen = 0;
    size_t i = n;
    if (i > 0 && p[i - 1] == '\n')
        i--; /* the newline ending the last line */
    while (i > 0) {
        if (p[i - 1] == '\n' && ++seen == lines)
            return i;
        i--;
    }
    return 0;
}

/* The length of the first `lines` lines of p[0, n). */
static size_t first_lines_len(const char *p, size_t n, size_t lines)
{
    size_t seen = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\n' && ++seen == lines)
            return i + 1;
    return n;
}

void pkr_capture_kept(struct pkr_capture *c, const char **text, size_t *len, bool *truncated)
{
    const char *p = c->buf != NULL ? c->buf : "";
    size_t n = c->len;
    if (c->keep == PK_KEEP_TAIL && c->len > 0 && c->head != 0) {
        /* Linearise the ring in place: rotate left by head. */
        char *tmp = malloc(c->len);
        if (tmp != NULL) {
            for (size_t i = 0; i < c->len; i++)
                tmp[i] = c->buf[(c->head + i) % c->cap];
            memcpy(c->buf, tmp, c->len);
            free(tmp);
            c->head = 0;
        } else {
            n = 0; /* out of memory: keep nothing rather than bytes out of order */
        }
    }
    if (c->keep == PK_KEEP_TAIL) {
        if (c->total_bytes > n || n > c->max_bytes) {
            /* The window lost its start: one byte more than the cap says whether it begins a
             * line; otherwise the partial first line goes. */
            size_t skip = n - (n > c->max_bytes ? c->max_bytes : n);
            bool at_line = skip > 0 ? p[skip - 1] == '\n' : false;
            p += skip, n -= skip;
            if (!at_line) {
                const char *nl = memchr(p, '\n', n);
                size_t drop = nl != NULL ? (size_t)(nl - p) + 1 : n;
                p += drop, n -= drop;
            }
        }
        if (c->max_lines > 0) {
            size_t from = last_lines_start(p, n, c->max_lines);
            p += from, n -= from;
        }
    } else {
        if (c->total_bytes > n) {
            /* More came than fits: back to the last whole line. */
            while (n > 0 && p[n - 1] != '\n')
                n--;
        }
        if (c->max_lines > 0)
            n = first_lines_len(p, n, c->max_lines);
    }
    *text = p;
    *len = n;
    *truncated = n < c->total_bytes;
}

uint64_t pkr_capture_lines(const struct pkr_capture *c)
{
    return c->newlines + (c->total_bytes > 0 && c->last != '\n');
}

void pkr_capture_release(struct pkr_capture *c)
{
    free(c->buf);
    c->buf = NULL;
}
