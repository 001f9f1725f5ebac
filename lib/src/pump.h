/*
 * The stream pump's private interface (pump.c): line splitting, decoding and the capture policies
 * over the bytes a child writes to one captured pipe. Shared by every platform: the POSIX engines
 * read with pk__stream_fill; the Windows engine issues overlapped reads into the space
 * pk__stream_space hands out and reports them with pk__stream_commit.
 */
#ifndef PK_PUMP_H
#define PK_PUMP_H

#include "processkit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- the stream pump (pump.c) -------------------------------------------------------------- */

struct pk__buffer {
    char *data;
    size_t len, cap;
};

struct pk__ring {
    char *data;
    size_t cap, head, len;
    size_t *lens; /* circular queue of the kept lines' lengths */
    size_t lcap, lhead, nlines;
};

struct pk__stream {
    int fd;        /* the parent's read end, -1 when not captured */
    bool blocking; /* fd is still blocking: read only where poll said it is ready (pk_run) */
    int id;        /* 1 stdout, 2 stderr */
    /* configuration */
    pk_keep keep;
    size_t max_bytes, max_lines, max_line;
    bool raw;
    bool lines; /* line path (else bulk path) */
    /* the splitter buffer: [start, end) unconsumed, [start, scan) known to hold no newline */
    char *buf;
    size_t cap, start, scan, end;
    bool dropping;    /* inside a line longer than max_line */
    size_t ascii_end; /* [start, ascii_end) is known to be ASCII: lines there need no decoding */
    bool eof;
    /* accounting and capture */
    uint64_t total_bytes, total_lines, dropped_lines;
    struct pk__buffer kept; /* ALL / HEAD / FAIL, and the bulk path */
    size_t kept_lines;
    struct pk__ring ring; /* TAIL */
    bool sealed, truncated;
    char *scratch; /* U+FFFD replacement output */
    size_t scratch_cap;
};

void pk__stream_init(struct pk__stream *s, int id, const pk_stdio *cfg, bool lines);
/* Switches a stream that has not been read yet to the line path (the pull API). */
void pk__stream_want_lines(struct pk__stream *s);
/* One read(2). Returns 1 when bytes arrived, 0 at EOF or EAGAIN (s->eof tells), or -errno. */
int pk__stream_fill(struct pk__stream *s);
/* The next complete line from what was read: 1 with *line, 0 when more bytes are needed (or at
 * the end), or -errno. */
int pk__stream_next_line(struct pk__stream *s, pk_line *line);

/* The line path's per-line steps, inline below so that a caller taking one line per call (the
 * pull API) finds a buffered line without a call into pump.c. */
int pk__stream_keep_line(struct pk__stream *s, const char *p, size_t n, bool nl);
int pk__stream_emit_checked(struct pk__stream *s, char *p, size_t n, pk_line *line);

/* Prepares a complete line at [p, p+n) (nl: it had a newline), already counted in total_lines,
 * for delivery: 1, or -errno from the capture policy or the decoder. */
static inline int
pk__stream_emit_counted(struct pk__stream *s, char *p, size_t n, bool nl, pk_line *line)
{
    if (s->keep != PK_KEEP_NONE) {
        int rc = pk__stream_keep_line(s, p, n, nl);
        if (rc != 0)
            return rc;
    }
    p[n] = '\0'; /* overwrites the newline, or the spare byte after the final line */
    line->stream = s->id;
    line->number = s->total_lines;
    line->newline = nl;
    if (!s->raw) {
        if (n > 0 && p[n - 1] == '\r' && nl)
            p[--n] = '\0';
        /* Lines inside the prefix known to be ASCII (checked once per read chunk) need nothing. */
        if ((size_t)(p + n - s->buf) > s->ascii_end)
            return pk__stream_emit_checked(s, p, n, line);
    }
    line->data = p;
    line->len = n;
    return 1;
}

/* Accounts a complete line at [p, p+n) (nl: it had a newline) and prepares it for delivery: 1,
 * or -errno from the capture policy or the decoder. */
static inline int pk__stream_emit(struct pk__stream *s, char *p, size_t n, bool nl, pk_line *line)
{
    s->total_lines++;
    return pk__stream_emit_counted(s, p, n, nl, line);
}

/* The rest of an emit for a complete line at [p, p+n) whose newline the caller found and whose
 * line the caller counted already (total_lines): the capture policy, the CR of a CRLF, decoding.
 * Out of line, for pk__stream_take_line's uncommon lines. 1, or -errno. */
int pk__stream_emit_rest(struct pk__stream *s, char *p, size_t n, pk_line *line);

/* The pull API's per-line step, inline: 1 with *line when a complete line is buffered, 0 when
 * the full path must look (no newline yet, a line too long, a line being dropped), or -errno.
 * The common line (nothing to keep, no CR, inside the known-ASCII prefix) is handed out here;
 * anything else goes out of line, so that the caller keeps no more than the stream and the line
 * in registers across the memchr. In callgrind, pk_process_read_line's own work per line (memchr
 * aside) fell from 80 instructions, six registers saved and restored each time, to 62 (a
 * hand-written memchr loop: 9). */
static inline int pk__stream_take_line(struct pk__stream *s, pk_line *line)
{
    size_t scan = s->scan, end = s->end;
    if (s->dropping || end <= scan)
        return 0;
    const char *found = memchr(s->buf + scan, '\n', end - scan);
    if (found == NULL)
        return 0;
    char *base = s->buf;
    size_t at = s->start, stop = (size_t)(found - base), n = stop - at;
    if (n > s->max_line)
        return 0;
    s->start = s->scan = stop + 1;
    s->total_lines++;
    char *p = base + at;
    if (s->keep != PK_KEEP_NONE ||
        (!s->raw && (stop > s->ascii_end || (n > 0 && p[n - 1] == '\r'))))
        return pk__stream_emit_rest(s, p, n, line);
    p[n] = '\0'; /* overwrites the newline */
    line->stream = s->id;
    line->number = s->total_lines;
    line->newline = true;
    line->data = p;
    line->len = n;
    return 1;
}

/* True when the stream can produce nothing more. */
bool pk__stream_done(const struct pk__stream *s);
/* Moves the kept bytes and the totals into *out (which then owns the data). */
int pk__stream_finish(struct pk__stream *s, pk_output *out);
void pk__stream_release(struct pk__stream *s);
/* Frees this thread's cached splitter buffer (pk_cleanup). */
void pk__stream_cache_release(void);

/* The Windows path: where the next read may put its bytes (*p, up to *n), after at most one
 * compaction; the space stays valid until pk__stream_commit. Returns 0 or -ENOMEM. */
int pk__stream_space(struct pk__stream *s, char **p, size_t *n);
/* Accounts n bytes a read put into the space (n == 0: end of file). */
void pk__stream_commit(struct pk__stream *s, size_t n);

#endif /* PK_PUMP_H */
