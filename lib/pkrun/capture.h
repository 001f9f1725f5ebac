/*
 * The bounded capture (capture.c): the head or the tail of one of the command's streams, kept
 * within --max-bytes and --max-lines for the JSON outcome and for --keep fail, with the stream's
 * totals.
 */
#ifndef PKRUN_CAPTURE_H
#define PKRUN_CAPTURE_H

#include "processkit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pkr_capture {
    pk_keep keep;
    size_t max_bytes, max_lines;
    char *buf;
    size_t cap, len, head; /* HEAD: buf[0, len); TAIL: a ring of cap bytes starting at head */
    uint64_t total_bytes, newlines;
    char last; /* the last byte seen */
};

void pkr_capture_init(struct pkr_capture *c, pk_keep keep, size_t max_bytes, size_t max_lines);
/* Counts and keeps (within the caps) the next bytes of the stream. -ENOMEM, else 0. */
int pkr_capture_feed(struct pkr_capture *c, const char *data, size_t len);
/* Where the next `want` bytes of the stream can be read straight into the kept text: up to
 * *room bytes at the pointer returned (fewer than want where the ring wraps), then
 * pkr_capture_commit with how many came. NULL (and *room 0) when no byte read now would be kept
 * (a sealed head, max_bytes 0), when the tail's ring is smaller than want, or when memory ran
 * out: read them elsewhere and pkr_capture_feed them, which counts them (and says -ENOMEM). */
char *pkr_capture_slot(struct pkr_capture *c, size_t want, size_t *room);
/* The len bytes just read into the slot: counted and kept. */
void pkr_capture_commit(struct pkr_capture *c, size_t len);
/* What was kept: whole lines only (a final unterminated line counts as one), the head or the
 * tail within both caps. *text points into the capture (valid until release); *truncated when
 * kept < total. */
void pkr_capture_kept(struct pkr_capture *c, const char **text, size_t *len, bool *truncated);
/* Lines seen: newlines, plus one for a final unterminated line. */
uint64_t pkr_capture_lines(const struct pkr_capture *c);
void pkr_capture_release(struct pkr_capture *c);
/* Newline bytes in data[0, len) (a word at a time). */
uint64_t pkr_count_newlines(const char *data, size_t len);

#endif /* PKRUN_CAPTURE_H */
