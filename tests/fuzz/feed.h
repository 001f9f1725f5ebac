/*
 * feed — what fuzz_lines and fuzz_capture share: an input format that describes one captured
 * stream (its options, the bytes a child writes, and how those bytes are cut into reads), a
 * driver that pushes the bytes through the library's own stream pump (lib/src/pump.c) over a
 * real pipe, and the reference model the targets check the pump against (lines, the effective
 * max_line, UTF-8 decoding with U+FFFD replacement).
 *
 * Input layout (8 header bytes, then the payload):
 *
 *     [0] bit 0 raw, bit 1 a line consumer (else the bulk path when it applies), bit 2 the end
 *         comes as end-of-file on the pipe (else as the engine forces it after the child's exit:
 *         the pipe still open, nothing buffered), bits 3-4 the chunking style, bits 5-7 keep
 *     [1] max_line  [2] max_bytes  (0: unset; 1..191 bytes; 192..255: 1..64 KiB)
 *     [3] max_lines (0: unset, else 1..255)
 *     [4] 248..255: insert a run of 9..72 KiB of 'x' into the payload (lines longer than one
 *         64 KiB read, from short inputs)
 *     [5..7] seed of the chunk boundaries and of where lines are taken between reads
 */
#ifndef PK_FUZZ_FEED_H
#define PK_FUZZ_FEED_H

#include "fuzz.h"
#include "pump.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FEED_HEADER 8

struct feed_input {
    pk_stdio cfg; /* capture, raw, max_line as a command would give them */
    bool lines;   /* a line consumer is present (on_line or the pull API) */
    bool real_eof;
    unsigned chunking;
    uint32_t seed;
    unsigned char *data; /* the bytes the child writes (owned) */
    size_t len;
};

/* Decodes a fuzz input; false when it is too short to describe a stream. */
bool feed_parse(const uint8_t *d, size_t n, struct feed_input *in);
void feed_input_free(struct feed_input *in);

typedef void (*feed_line_fn)(void *user, const pk_line *line);

/* Pushes in->data through a pk__stream on a non-blocking pipe: cut into reads by in->seed when
 * `chunked` (else in reads as large as the pipe allows), lines taken after some reads and not
 * others, then the end of the stream; every line goes to fn. Fills *out (free out->data) and
 * *line_path (whether the stream took the line path). A chunked run starts without the thread's
 * cached splitter buffer; an unchunked run after it reuses the one it left. */
void feed_run(const struct feed_input *in,
              bool chunked,
              feed_line_fn fn,
              void *user,
              pk_output *out,
              bool *line_path);

/* ---- the reference model ------------------------------------------------------------------- */

struct ref_line {
    size_t off, len; /* in the input, without the newline */
    bool nl;         /* terminated by a newline */
    bool dropped;    /* longer than max_line: counted, never delivered nor kept */
};

/* The longest line a stream delivers, from processkit.h's pk_stdio.max_line: 0 means max_bytes
 * when a byte cap is set, else 16 MiB; a tail ring with a byte cap drops any line longer than
 * the cap. */
size_t ref_max_line(const pk_stdio *cfg);

/* Splits at every '\n'; a non-empty remainder is a final line without newline. Returns the count
 * and a malloc'd array in *lines. */
size_t ref_split(const unsigned char *p, size_t n, size_t max_line, struct ref_line **lines);

/* Decodes p[0..n) into out (room for 3n bytes): well-formed UTF-8 is copied, and each maximal
 * subpart of an ill-formed sequence becomes U+FFFD (Unicode's "substitution of maximal
 * subparts"). Returns the output length. */
size_t ref_decode(const unsigned char *p, size_t n, unsigned char *out);

/* True when p[0..n) is well-formed UTF-8. */
bool ref_valid_utf8(const unsigned char *p, size_t n);

#endif /* PK_FUZZ_FEED_H */
