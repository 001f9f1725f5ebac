/*
 * The stream pump: what happens to the bytes a child writes to a captured pipe.
 *
 * Two paths. The bulk path (keep everything, nobody wants lines) reads straight into the capture
 * buffer and only counts newlines. The line path reads into a splitter buffer and walks it with a
 * cursor: each complete line is handed out in place (its newline overwritten by a NUL), and the
 * unfinished tail is moved to the front once per read — never a memmove per line, never an
 * allocation per line once the buffer has grown. A line longer than max_line is not assembled:
 * once the unfinished tail exceeds the cap, its bytes are discarded as they arrive until the next
 * newline, and the line is counted in dropped_lines. Memory therefore stays within max_line plus
 * one read chunk whatever the child writes, newline-free floods included.
 *
 * Each complete line goes to the capture policy (all, none, tail ring, sealed head, fail-loud)
 * as raw bytes, and to the consumer (callback or pull) decoded: in text mode UTF-8 is validated
 * and each maximal invalid subsequence becomes U+FFFD (into a reused scratch buffer; valid lines,
 * the common case, are handed out in place after a vector ASCII scan per read), and one CR of
 * a CRLF is dropped. Raw mode hands out the bytes unchanged.
 */
#define _GNU_SOURCE
#include "ascii.h"
#include "pump.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK            65536
#define DEFAULT_MAX_LINE (16u << 20)

/* One splitter buffer per thread is kept between runs: allocating and freeing 64 KiB per run
 * made the allocator trim and re-fault those pages every time (zeroed pages, and TLB shootdowns
 * to the CPU where the last child ran), which cost more than the line splitting itself. */
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static pthread_key_t cache_key;
static _Thread_local char *cached_buf;
static _Thread_local size_t cached_cap;

static void free_cached(void *p)
{
    free(p);
}

static void make_cache_key(void)
{
    (void)pthread_key_create(&cache_key, free_cached);
}

static char *take_cached(size_t *cap)
{
    char *b = cached_buf;
    *cap = b != NULL ? cached_cap : 0;
    cached_buf = NULL;
    if (b != NULL)
        (void)pthread_setspecific(cache_key, NULL);
    return b;
}

static void give_cached(char *b, size_t cap)
{
    if (b == NULL)
        return;
    if (cached_buf != NULL || cap > 4 * (CHUNK + 1)) {
        free(b); /* keep only one, and only a chunk-sized one */
        return;
    }
    pthread_once(&cache_once, make_cache_key);
    cached_buf = b;
    cached_cap = cap;
    (void)pthread_setspecific(cache_key, b); /* freed when the thread exits */
}

void pk__stream_cache_release(void)
{
    size_t cap;
    free(take_cached(&cap));
}

void pk__stream_init(struct pk__stream *s, int id, const pk_stdio *cfg, bool lines)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->id = id;
    s->keep = cfg->capture.keep;
    s->max_bytes = cfg->capture.max_bytes;
    s->max_lines = cfg->capture.max_lines;
    s->raw = cfg->raw;
    s->max_line = cfg->max_line;
    if (s->max_line == 0)
        s->max_line = s->max_bytes != 0 ? s->max_bytes : DEFAULT_MAX_LINE;
    /* A tail ring cannot hold a line longer than its byte cap: such a line is dropped whole. */
    if (s->keep == PK_KEEP_TAIL && s->max_bytes != 0 && s->max_line > s->max_bytes)
        s->max_line = s->max_bytes;
    bool capped = s->max_bytes != 0 || s->max_lines != 0;
    s->lines = lines || s->keep == PK_KEEP_NONE || (s->keep != PK_KEEP_ALL && capped);
}

void pk__stream_want_lines(struct pk__stream *s)
{
    /* Switching is only possible before the bulk path has read anything. */
    if (s->kept.len == 0 && s->total_bytes == 0)
        s->lines = true;
}

/* ---- capture policies -------------------------------------------------------------------- */

static int buf_reserve(struct pk__buffer *b, size_t extra)
{
    if (b->cap - b->len > extra)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len <= extra)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL)
        return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

static int buf_append(struct pk__buffer *b, const char *p, size_t n, bool nl)
{
    if (buf_reserve(b, n + 1) != 0)
        return -ENOMEM;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    if (nl)
        b->data[b->len++] = '\n';
    return 0;
}

/* The tail ring: bytes in a circular buffer of max_bytes (or growing when only lines are
 * capped), line lengths in a circular queue, oldest lines evicted until the new one fits. */
static int ring_lines_push(struct pk__stream *s, size_t len)
{
    struct pk__ring *r = &s->ring;
    if (r->nlines == r->lcap) {
        size_t ncap = r->lcap ? r->lcap * 2 : 64;
        size_t *q = malloc(ncap * sizeof *q);
        if (q == NULL)
            return -ENOMEM;
        for (size_t i = 0; i < r->nlines; i++)
            q[i] = r->lens[(r->lhead + i) % r->lcap];
        free(r->lens);
        r->lens = q;
        r->lcap = ncap;
        r->lhead = 0;
    }
    r->lens[(r->lhead + r->nlines++) % r->lcap] = len;
    return 0;
}

static void ring_evict_one(struct pk__stream *s)
{
    struct pk__ring *r = &s->ring;
    size_t len = r->lens[r->lhead];
    r->lhead = (r->lhead + 1) % r->lcap;
    r->nlines--;
    r->head = (r->head + len) % r->cap;
    r->len -= len;
    s->truncated = true;
}

/* Grows the ring to hold `need` bytes: doubling, so that memory follows what the child wrote,
 * never past the byte cap `max` (0: none), which `need` never exceeds. */
static int ring_grow(struct pk__ring *r, size_t need, size_t max)
{
    size_t ncap = r->cap ? r->cap : 4096;
    while (ncap < need)
        ncap *= 2;
    if (max != 0 && ncap > max)
        ncap = max;
    char *d = malloc(ncap);
    if (d == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < r->len; i++)
        d[i] = r->data[(r->head + i) % r->cap];
    free(r->data);
    r->data = d;
    r->cap = ncap;
    r->head = 0;
    return 0;
}

static void ring_clear(struct pk__stream *s)
{
    while (s->ring.nlines > 0)
        ring_evict_one(s);
    s->truncated = true;
}

static int keep_tail(struct pk__stream *s, const char *p, size_t n, bool nl)
{
    struct pk__ring *r = &s->ring;
    size_t total = n + (nl ? 1 : 0);
    if (s->max_bytes != 0 && total > s->max_bytes) {
        /* Cannot fit even alone: a line of exactly max_bytes (the cap max_line is clamped to)
         * and its newline. What the ring holds is no longer the end of the stream. */
        ring_clear(s);
        return 0;
    }
    while (r->nlines > 0 && ((s->max_bytes != 0 && r->len + total > s->max_bytes) ||
                             (s->max_lines != 0 && r->nlines + 1 > s->max_lines)))
        ring_evict_one(s);
    if (r->len + total > r->cap && ring_grow(r, r->len + total, s->max_bytes) != 0)
        return -ENOMEM;
    size_t at = (r->head + r->len) % r->cap;
    size_t first = r->cap - at < n ? r->cap - at : n; /* up to the wrap, then the rest */
    memcpy(r->data + at, p, first);
    memcpy(r->data, p + first, n - first);
    if (nl)
        r->data[(at + n) % r->cap] = '\n';
    r->len += total;
    return ring_lines_push(s, total);
}

/* Out of line: the capture policies are not the hot path of a stream that keeps nothing. */
int pk__stream_keep_line(struct pk__stream *s, const char *p, size_t n, bool nl)
{
    switch (s->keep) {
    case PK_KEEP_ALL:
        return buf_append(&s->kept, p, n, nl);
    case PK_KEEP_NONE:
        return 0;
    case PK_KEEP_TAIL:
        return keep_tail(s, p, n, nl);
    case PK_KEEP_HEAD:
    case PK_KEEP_FAIL: {
        size_t total = n + (nl ? 1 : 0);
        if (s->sealed || (s->max_bytes != 0 && s->kept.len + total > s->max_bytes) ||
            (s->max_lines != 0 && s->kept_lines + 1 > s->max_lines)) {
            s->sealed = true;
            s->truncated = true;
            return 0;
        }
        s->kept_lines++;
        return buf_append(&s->kept, p, n, nl);
    }
    }
    return 0;
}

/* A line longer than max_line is not kept, nor is what came before it kept as if it were next to
 * what follows: a head is sealed (an exact prefix), a tail ring emptied (an exact suffix). */
static void drop_long_line(struct pk__stream *s)
{
    if (s->keep == PK_KEEP_NONE)
        return;
    s->truncated = true;
    if (s->keep == PK_KEEP_HEAD || s->keep == PK_KEEP_FAIL)
        s->sealed = true;
    if (s->keep == PK_KEEP_TAIL)
        ring_clear(s);
}

/* ---- UTF-8 --------------------------------------------------------------------------------- */

/* Length of the valid sequence at p (1..4), or 0 when invalid; *sub receives the length of the
 * maximal subpart that forms one U+FFFD (at least 1). */
static size_t utf8_seq(const unsigned char *p, size_t avail, size_t *sub)
{
    unsigned char c = p[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    *sub = 1;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlongs */
        if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    for (size_t k = 1; k < need; k++) {
        if (k >= avail)
            return 0;
        unsigned char b = p[k];
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF))
            return 0;
        *sub = k + 1;
    }
    return need;
}

static bool valid_utf8(const char *p, size_t n)
{
    const unsigned char *u = (const unsigned char *)p;
    size_t sub;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq(u + i, n - i, &sub);
        if (len == 0)
            return false;
        i += len;
    }
    return true;
}

/* Decodes [p, p+n) into s->scratch with U+FFFD replacements; returns the decoded length. */
static int decode_lossy(struct pk__stream *s, const char *p, size_t n, size_t *out_len)
{
    if (s->scratch_cap < n * 3 + 1) {
        size_t cap = n * 3 + 1;
        char *d = realloc(s->scratch, cap);
        if (d == NULL)
            return -ENOMEM;
        s->scratch = d;
        s->scratch_cap = cap;
    }
    const unsigned char *u = (const unsigned char *)p;
    char *w = s->scratch;
    for (size_t i = 0; i < n;) {
        size_t sub;
        size_t len = utf8_seq(u + i, n - i, &sub);
        if (len > 0) {
            memcpy(w, u + i, len);
            w += len;
            i += len;
        } else {
            memcpy(w, "\xEF\xBF\xBD", 3);
            w += 3;
            i += sub;
        }
    }
    *w = '\0';
    *out_len = (size_t)(w - s->scratch);
    return 0;
}

/* ---- the line path ------------------------------------------------------------------------- */

/* The rare end of pk__stream_emit (pump.h): a line outside the known-ASCII prefix is validated,
 * and only an invalid one copied. Out of line so that the emit, run once per line, stays small
 * enough to inline with a short prologue: in callgrind the inlined decoder made it save and
 * restore six registers per line, a fifth of the line path's instructions. */
int pk__stream_emit_checked(struct pk__stream *s, char *p, size_t n, pk_line *line)
{
    if (pk__ascii_prefix((const unsigned char *)p, n) < n && !valid_utf8(p, n)) {
        int rc = decode_lossy(s, p, n, &n);
        if (rc != 0)
            return rc;
        p = s->scratch;
    }
    line->data = p;
    line->len = n;
    return 1;
}

int pk__stream_emit_rest(struct pk__stream *s, char *p, size_t n, pk_line *line)
{
    return pk__stream_emit_counted(s, p, n, true, line);
}

/* Inside a line longer than max_line: discards up to its newline. Returns true when the next line
 * can be looked for, false when more bytes are needed. Out of line, as it is rare. */
static __attribute__((noinline)) bool skip_dropped(struct pk__stream *s)
{
    char *base = s->buf;
    char *nl = memchr(base + s->start, '\n', s->end - s->start);
    if (nl == NULL) {
        s->start = s->scan = s->end;
        if (s->eof) {
            s->dropping = false;
            s->total_lines++;
            s->dropped_lines++;
        }
        return false;
    }
    s->start = s->scan = (size_t)(nl - base) + 1;
    s->dropping = false;
    s->total_lines++;
    s->dropped_lines++;
    s->truncated = s->keep != PK_KEEP_NONE ? true : s->truncated;
    return true;
}

int pk__stream_next_line(struct pk__stream *s, pk_line *line)
{
    for (;;) {
        if (s->dropping) {
            if (!skip_dropped(s))
                return 0;
            continue;
        }
        char *base = s->buf;
        char *nl = s->end > s->scan ? memchr(base + s->scan, '\n', s->end - s->scan) : NULL;
        if (nl != NULL) {
            size_t at = s->start, n = (size_t)(nl - base) - at;
            s->start = s->scan = (size_t)(nl - base) + 1;
            if (n <= s->max_line)
                return pk__stream_emit(s, base + at, n, true, line);
            s->total_lines++;
            s->dropped_lines++;
            drop_long_line(s);
            continue;
        }
        s->scan = s->end;
        size_t pending = s->end - s->start;
        if (pending > s->max_line) {
            /* Too long to ever deliver: stop assembling, discard until the next newline. */
            s->dropping = true;
            drop_long_line(s);
            s->start = s->scan = s->end;
            continue;
        }
        if (s->eof && pending > 0) {
            size_t at = s->start;
            s->start = s->scan = s->end;
            return pk__stream_emit(s, base + at, pending, false, line);
        }
        return 0;
    }
}

/* Makes room for one read in the splitter buffer, after at most one compaction. */
static int lines_space(struct pk__stream *s)
{
    if (s->start == s->end) {
        s->start = s->end = s->scan = s->ascii_end = 0;
    } else if (s->start > 0 && s->cap - s->end < CHUNK + 1) {
        memmove(s->buf, s->buf + s->start, s->end - s->start);
        s->end -= s->start;
        s->scan -= s->start;
        s->ascii_end = s->ascii_end > s->start ? s->ascii_end - s->start : 0;
        s->start = 0;
    }
    if (s->buf == NULL)
        s->buf = take_cached(&s->cap);
    if (s->cap - s->end < CHUNK + 1) {
        /* Grow for a long unfinished line, never past max_line plus one chunk. */
        size_t cap = s->cap ? s->cap * 2 : CHUNK + 1;
        size_t limit = s->max_line + CHUNK + 1;
        if (cap > limit)
            cap = limit;
        if (cap < s->end + CHUNK + 1)
            cap = s->end + CHUNK + 1;
        char *b = realloc(s->buf, cap);
        if (b == NULL)
            return -ENOMEM;
        s->buf = b;
        s->cap = cap;
    }
    return 0;
}

/* Accounts n > 0 bytes read into the splitter buffer at s->end. */
static void lines_commit(struct pk__stream *s, size_t n)
{
    /* Extend the known-ASCII prefix while it reaches the new bytes. */
    if (!s->raw && s->ascii_end == s->end)
        s->ascii_end = s->end + pk__ascii_prefix((const unsigned char *)s->buf + s->end, n);
    s->end += n;
    s->total_bytes += (uint64_t)n;
}

/* One read into the splitter buffer, after at most one compaction. */
static int fill_lines(struct pk__stream *s)
{
    int rc = lines_space(s);
    if (rc != 0)
        return rc;
    ssize_t n;
    do
        n = read(s->fd, s->buf + s->end, s->cap - s->end - 1);
    while (n < 0 && errno == EINTR);
    if (n > 0) {
        lines_commit(s, (size_t)n);
        return 1;
    }
    if (n < 0 && errno == EAGAIN)
        return 0;
    s->eof = true;
    return n < 0 && errno != EPIPE ? -errno : 0;
}

/* Accounts n > 0 bytes read into the capture buffer at its end: the bulk path counts newlines. */
static void bulk_commit(struct pk__stream *s, size_t n)
{
    struct pk__buffer *b = &s->kept;
    const char *p = b->data + b->len, *end = p + n;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        s->total_lines++;
        p++;
    }
    b->len += n;
    s->total_bytes += (uint64_t)n;
}

/* The bulk path: read straight into the capture buffer, count newlines. */
static int fill_bulk(struct pk__stream *s)
{
    struct pk__buffer *b = &s->kept;
    ssize_t n;
    if (b->data == NULL) {
        /* First read on the stack: a stream that stays empty costs no allocation. */
        char first[16384];
        do
            n = read(s->fd, first, sizeof first);
        while (n < 0 && errno == EINTR);
        if (n > 0) {
            if (buf_reserve(b, (size_t)n * 2 > 65536 ? (size_t)n * 2 : 65536) != 0)
                return -ENOMEM;
            memcpy(b->data, first, (size_t)n);
        }
    } else {
        if (buf_reserve(b, 16384 + 1) != 0)
            return -ENOMEM;
        do
            n = read(s->fd, b->data + b->len, b->cap - b->len - 1);
        while (n < 0 && errno == EINTR);
    }
    if (n > 0) {
        bulk_commit(s, (size_t)n);
        return 1;
    }
    if (n < 0 && errno == EAGAIN)
        return 0;
    s->eof = true;
    return n < 0 && errno != EPIPE ? -errno : 0;
}

int pk__stream_space(struct pk__stream *s, char **p, size_t *n)
{
    if (s->lines) {
        int rc = lines_space(s);
        if (rc != 0)
            return rc;
        *p = s->buf + s->end;
        *n = s->cap - s->end - 1;
        return 0;
    }
    struct pk__buffer *b = &s->kept;
    if (buf_reserve(b, CHUNK + 1) != 0)
        return -ENOMEM;
    *p = b->data + b->len;
    *n = b->cap - b->len - 1;
    return 0;
}

void pk__stream_commit(struct pk__stream *s, size_t n)
{
    if (n == 0)
        s->eof = true;
    else if (s->lines)
        lines_commit(s, n);
    else
        bulk_commit(s, n);
}

int pk__stream_fill(struct pk__stream *s)
{
    if (s->fd < 0 || s->eof)
        return 0;
    return s->lines ? fill_lines(s) : fill_bulk(s);
}

bool pk__stream_done(const struct pk__stream *s)
{
    return s->fd < 0 || (s->eof && (!s->lines || (s->start == s->end && !s->dropping)));
}

static void reverse(char *p, size_t n)
{
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        char t = p[i];
        p[i] = p[j - 1];
        p[j - 1] = t;
    }
}

/* Moves the ring's bytes to [0, len), in time proportional to len rather than to the ring's
 * capacity (a 1 GiB cap holding one line must not touch 1 GiB): a memmove when they do not wrap;
 * when they wrap, a rotation by three reversals if they fill more than half the ring, else a
 * copy into a buffer of their size. */
static int ring_linearise(struct pk__ring *r)
{
    size_t first = r->cap - r->head; /* bytes up to the end of the buffer */
    if (first >= r->len) {
        memmove(r->data, r->data + r->head, r->len);
    } else if (r->len > r->cap / 2) {
        reverse(r->data, r->head); /* rotated left by head: [head, cap) comes first */
        reverse(r->data + r->head, r->cap - r->head);
        reverse(r->data, r->cap);
    } else {
        char *d = malloc(r->len + 1);
        if (d == NULL)
            return -ENOMEM;
        memcpy(d, r->data + r->head, first);
        memcpy(d + first, r->data, r->len - first);
        free(r->data);
        r->data = d;
        r->cap = r->len + 1;
    }
    r->head = 0;
    return 0;
}

int pk__stream_finish(struct pk__stream *s, pk_output *out)
{
    /* The bulk path counts newlines as they arrive; a final line without one is known only now,
     * since the end may not come through fill_bulk: after the child's exit the engine ends a
     * stream whose pipe a grandchild still holds as soon as it is empty. */
    if (!s->lines && s->kept.len > 0 && s->kept.data[s->kept.len - 1] != '\n')
        s->total_lines++;
    memset(out, 0, sizeof *out);
    out->total_bytes = s->total_bytes;
    out->total_lines = s->total_lines;
    out->dropped_lines = s->dropped_lines;
    out->truncated = s->truncated;
    /* An uncapped tail without a line consumer took the bulk path: its bytes are in kept. */
    if (s->keep == PK_KEEP_TAIL && s->lines) {
        struct pk__ring *r = &s->ring;
        if (r->len > 0) {
            /* Hand the ring's own buffer over, its kept bytes moved to the front and the rest
             * given back: no second buffer of up to max_bytes at the end. */
            if (ring_linearise(r) != 0)
                return -ENOMEM;
            char *d = realloc(r->data, r->len + 1);
            if (d == NULL)
                return -ENOMEM;
            d[r->len] = '\0';
            out->data = d;
            out->len = r->len;
            r->data = NULL;
            r->cap = r->head = r->len = 0;
        }
    } else if (s->kept.data != NULL && s->kept.len > 0) {
        if (buf_reserve(&s->kept, 1) != 0)
            return -ENOMEM;
        s->kept.data[s->kept.len] = '\0';
        out->data = s->kept.data;
        out->len = s->kept.len;
        s->kept = (struct pk__buffer){0};
    }
    return 0;
}

void pk__stream_release(struct pk__stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    give_cached(s->buf, s->cap);
    free(s->kept.data);
    free(s->scratch);
    free(s->ring.data);
    free(s->ring.lens);
    s->buf = s->scratch = NULL;
    s->kept = (struct pk__buffer){0};
    s->ring = (struct pk__ring){0};
}
