/*
 * feed — the stream driver and reference model behind fuzz_lines and fuzz_capture (feed.h).
 *
 * The driver uses a real non-blocking pipe and the pump's own entry points in the engine's order
 * (pk__stream_fill, then pk__stream_next_line until it has nothing, then pk__stream_finish), so
 * every path the library takes is the one a child's output takes: short reads, EAGAIN, the
 * compaction of an unfinished line, the buffer growing for a long one, the end-of-file, and the
 * engine's forced end after the child's exit (the pipe still open, nothing in it). A chunk is
 * one write of at most 64 KiB (an emptied pipe takes it whole), then reads until EAGAIN; a
 * longer chunk is written in such turns.
 *
 * The reference UTF-8 decoder does not walk the byte-range table the library uses: it decides
 * each prefix by the range of code points it could still complete to (overlong, surrogate and
 * beyond-U+10FFFF ranges excluded), which is how Unicode defines a maximal subpart. The validator
 * is the byte-range table of Unicode's Table 3-7.
 */
#define _GNU_SOURCE
#include "feed.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_UNIT   (9u << 10) /* a long run is 1..8 of these: up to 72 KiB, past one 64 KiB read */
#define PIPE_CHUNK 65536

/* ---- input --------------------------------------------------------------------------------- */

static size_t size_sel(uint8_t b)
{
    return b < 192 ? b : (size_t)(b - 191) * 1024;
}

bool feed_parse(const uint8_t *d, size_t n, struct feed_input *in)
{
    memset(in, 0, sizeof *in);
    if (n < FEED_HEADER)
        return false;
    static const pk_keep keeps[8] = {PK_KEEP_ALL,  PK_KEEP_NONE, PK_KEEP_TAIL, PK_KEEP_HEAD,
                                     PK_KEEP_FAIL, PK_KEEP_TAIL, PK_KEEP_HEAD, PK_KEEP_ALL};
    in->cfg.kind = PK_STDIO_CAPTURE;
    in->cfg.raw = d[0] & 1;
    in->lines = d[0] & 2;
    in->real_eof = d[0] & 4;
    in->chunking = (d[0] >> 3) & 3;
    in->cfg.capture.keep = keeps[d[0] >> 5];
    in->cfg.max_line = size_sel(d[1]);
    in->cfg.capture.max_bytes = size_sel(d[2]);
    in->cfg.capture.max_lines = d[3];
    size_t run = d[4] < 248 ? 0 : (size_t)(d[4] - 247) * RUN_UNIT;
    in->seed = (uint32_t)d[5] | (uint32_t)d[6] << 8 | (uint32_t)d[7] << 16;
    const uint8_t *payload = d + FEED_HEADER;
    size_t plen = n - FEED_HEADER;
    /* The run of 'x' goes in at an offset the seed picks: inside a line, between a CR and its
     * newline, or inside a UTF-8 sequence. ASCII keeps its bytes cheap for the decoder, so
     * long inputs cost little more than short ones. */
    size_t at = plen > 0 ? in->seed % (plen + 1) : 0;
    in->len = plen + run;
    in->data = malloc(in->len + 1);
    CHECK(in->data != NULL, "out of memory");
    memcpy(in->data, payload, at);
    memset(in->data + at, 'x', run);
    memcpy(in->data + at + run, payload + at, plen - at);
    return true;
}

void feed_input_free(struct feed_input *in)
{
    free(in->data);
    in->data = NULL;
}

/* ---- the driver ---------------------------------------------------------------------------- */

/* xorshift32: the chunking and the drain points, reproducible from the input. */
static uint32_t next_rand(uint32_t *x)
{
    uint32_t v = *x;
    v ^= v << 13;
    v ^= v >> 17;
    v ^= v << 5;
    return *x = v;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Chunk ends (ascending, the last one is len) for a chunked run; returns their count. */
static size_t plan_chunks(const struct feed_input *in, uint32_t *rng, size_t *ends, size_t cap)
{
    size_t k = 0, len = in->len;
    switch (in->chunking) {
    case 0: /* a few cuts anywhere */
    case 1: /* many cuts anywhere */ {
        size_t cuts = next_rand(rng) % (in->chunking == 0 ? 4 : cap - 1);
        for (size_t i = 0; i < cuts && len > 0; i++)
            ends[k++] = next_rand(rng) % len;
        qsort(ends, k, sizeof *ends, cmp_size);
        break;
    }
    case 2: /* 1 to 4 bytes at a time at first (sequences and CRLFs split), then the rest */
        for (size_t at = 0; k < cap - 1 && at < len;) {
            at += 1 + next_rand(rng) % 4;
            ends[k++] = at < len ? at : len;
        }
        break;
    default: /* a fixed stride, from 1 byte up, so boundaries fall at every offset mod stride */ {
        size_t stride = 1 + next_rand(rng) % 97;
        if (len / stride > cap - 1)
            stride = len / (cap - 1) + 1;
        for (size_t at = stride; at < len; at += stride)
            ends[k++] = at;
        break;
    }
    }
    ends[k++] = len;
    return k;
}

/* Takes every complete line the stream has. */
static void take_lines(struct pk__stream *s, feed_line_fn fn, void *user)
{
    pk_line line;
    int r;
    while ((r = pk__stream_next_line(s, &line)) == 1) {
        CHECK(line.data != NULL && line.data[line.len] == '\0', "line %llu not NUL-terminated",
              (unsigned long long)line.number);
        CHECK(line.stream == 1, "line %llu says stream %d", (unsigned long long)line.number,
              line.stream);
        fn(user, &line);
    }
    CHECK(r == 0, "pk__stream_next_line returned %d", r);
}

/* Reads until `written` bytes have arrived in all, or (written == UINT64_MAX) until the pipe is
 * empty or ends, taking lines after each read or only sometimes (the pull API and the engine's
 * drain after the exit read several times before anyone takes a line). Stopping at `written`
 * spares the read that would only say EAGAIN: a third of the system calls. */
static void read_all(
    struct pk__stream *s, uint64_t written, uint32_t *rng, bool chunked, feed_line_fn fn, void *u)
{
    for (;;) {
        int r = pk__stream_fill(s);
        CHECK(r >= 0, "pk__stream_fill returned %d", r);
        if (s->lines && (!chunked || next_rand(rng) % 4 != 0))
            take_lines(s, fn, u);
        if (r == 0 || s->total_bytes == written)
            return;
    }
}

void feed_run(const struct feed_input *in,
              bool chunked,
              feed_line_fn fn,
              void *user,
              pk_output *out,
              bool *line_path)
{
    /* The pump keeps one splitter buffer per thread between runs, so what a run does could
     * depend on the inputs before it. The chunked run starts without one (a 64 KiB buffer:
     * the compaction runs at almost every read), the whole run after it takes the buffer the
     * chunked run left: both paths, reproducible from the input alone. */
    if (chunked)
        pk__stream_cache_release();
    int p[2];
    CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0, "pipe2: %s", strerror(errno));
    struct pk__stream s;
    pk__stream_init(&s, 1, &in->cfg, in->lines);
    s.fd = p[0];
    *line_path = s.lines;

    uint32_t rng = in->seed * 2654435761u + 0x9e3779b9u;
    if (rng == 0)
        rng = 1;
    size_t ends[25]; /* at most 24 chunks: each costs two system calls */
    size_t nchunks = 1;
    ends[0] = in->len;
    if (chunked)
        nchunks = plan_chunks(in, &rng, ends, sizeof ends / sizeof ends[0]);
    size_t at = 0;
    for (size_t c = 0; c < nchunks; c++) {
        while (at < ends[c]) {
            size_t want = ends[c] - at < PIPE_CHUNK ? ends[c] - at : PIPE_CHUNK;
            ssize_t w = write(p[1], in->data + at, want);
            CHECK(w > 0 || (w < 0 && errno == EAGAIN), "write: %s", strerror(errno));
            at += w > 0 ? (size_t)w : 0;
            read_all(&s, at, &rng, chunked, fn, user);
        }
    }
    if (in->real_eof) {
        close(p[1]);
        read_all(&s, UINT64_MAX, &rng, chunked, fn, user);
        /* The pipe ends when the last reference to its write end goes, which is not always at
         * our close: another task holding one for a moment (one reading /proc/<pid>/fdinfo,
         * say) delays it. Seen once in 2 million runs on a shared machine: the end came late. */
        for (int i = 0; !s.eof && i < 1000; i++) {
            (void)poll(&(struct pollfd){.fd = s.fd, .events = POLLIN}, 1, 10);
            read_all(&s, UINT64_MAX, &rng, chunked, fn, user);
        }
        CHECK(s.eof, "no end-of-file 10 s after the writer closed");
    } else {
        /* The engine after the child's exit: nothing buffered is the end (engine.linux.c). */
        read_all(&s, UINT64_MAX, &rng, chunked, fn, user);
        s.eof = true;
        close(s.fd);
        s.fd = -1;
        close(p[1]);
    }
    if (s.lines)
        take_lines(&s, fn, user);
    CHECK(pk__stream_done(&s), "the stream is not done after its end");
    CHECK(s.total_bytes == in->len, "total_bytes %llu, wrote %zu",
          (unsigned long long)s.total_bytes, in->len);
    int rc = pk__stream_finish(&s, out);
    CHECK(rc == 0, "pk__stream_finish returned %d", rc);
    pk__stream_release(&s);
}

/* ---- the reference model ------------------------------------------------------------------- */

size_t ref_max_line(const pk_stdio *cfg)
{
    size_t m = cfg->max_line;
    size_t cap = cfg->capture.max_bytes;
    if (m == 0)
        m = cap != 0 ? cap : (size_t)16 << 20;
    if (cfg->capture.keep == PK_KEEP_TAIL && cap != 0 && m > cap)
        m = cap;
    return m;
}

size_t ref_split(const unsigned char *p, size_t n, size_t max_line, struct ref_line **lines)
{
    size_t count = 0;
    for (const unsigned char *q = p; (q = memchr(q, '\n', n - (size_t)(q - p))) != NULL; q++)
        count++;
    struct ref_line *v = malloc((count + 1) * sizeof *v);
    CHECK(v != NULL, "out of memory");
    size_t k = 0;
    for (size_t start = 0; start < n; k++) {
        const unsigned char *nl = memchr(p + start, '\n', n - start);
        size_t end = nl != NULL ? (size_t)(nl - p) : n;
        v[k] = (struct ref_line){.off = start, .len = end - start, .nl = nl != NULL};
        v[k].dropped = v[k].len > max_line;
        start = end + 1;
    }
    *lines = v;
    return k;
}

/* Whether a sequence of `len` bytes whose first bits are `prefix`, with `rest` bits still to
 * come, can still encode a scalar value that needs exactly `len` bytes. */
static bool completable(uint32_t prefix, unsigned rest, unsigned len)
{
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    uint32_t lo = prefix << rest, hi = lo | ((1u << rest) - 1);
    if (lo < least[len])
        lo = least[len];
    if (hi > 0x10FFFF)
        hi = 0x10FFFF;
    if (lo > hi)
        return false;
    return !(lo >= 0xD800 && hi <= 0xDFFF); /* not only surrogates */
}

size_t ref_decode(const unsigned char *p, size_t n, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        unsigned char b = p[i];
        unsigned len = b < 0x80             ? 1
                       : (b & 0xE0) == 0xC0 ? 2
                       : (b & 0xF0) == 0xE0 ? 3
                       : (b & 0xF8) == 0xF0 ? 4
                                            : 0;
        size_t k = 1;
        if (len == 1) {
            out[o++] = b;
            i++;
            continue;
        }
        uint32_t cp = len ? b & (0x7Fu >> len) : 0;
        if (len != 0 && completable(cp, 6 * (len - 1), len)) {
            while (k < len && i + k < n && (p[i + k] & 0xC0) == 0x80 &&
                   completable(cp << 6 | (p[i + k] & 0x3Fu), 6 * (len - 1 - (unsigned)k), len)) {
                cp = cp << 6 | (p[i + k] & 0x3Fu);
                k++;
            }
        }
        if (len != 0 && k == len && completable(cp, 0, len)) {
            memcpy(out + o, p + i, len);
            o += len;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
        }
        i += k;
    }
    return o;
}

bool ref_valid_utf8(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char b = p[i];
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (b <= 0x7F)
            need = 1;
        else if (b >= 0xC2 && b <= 0xDF)
            need = 2;
        else if (b == 0xE0)
            need = 3, lo = 0xA0;
        else if (b == 0xED)
            need = 3, hi = 0x9F;
        else if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF)
            need = 3;
        else if (b == 0xF0)
            need = 4, lo = 0x90;
        else if (b >= 0xF1 && b <= 0xF3)
            need = 4;
        else if (b == 0xF4)
            need = 4, hi = 0x8F;
        else
            return false;
        if (n - i < need)
            return false;
        for (size_t k = 1; k < need; k++) {
            unsigned char c = p[i + k];
            if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF))
                return false;
        }
        i += need;
    }
    return true;
}
