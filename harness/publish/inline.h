/*
 * inline — what the two layers of the Markdown conversion share (private to harness/publish/):
 * the conversion's state (footnotes, heading ids) and the inline pass over a span of text.
 */
#ifndef PKB_PUBLISH_INLINE_H
#define PKB_PUBLISH_INLINE_H

#include "common/buf.h"

#include <stdbool.h>
#include <stddef.h>

struct pkb__md_note {
    char *id, *text; /* the definition's id and text (inline Markdown) */
    int number;      /* its number once first referred to */
    bool referred;
};

struct pkb__md_ctx {
    struct pkb__md_note *notes;
    size_t nnotes, capnotes;
    int next_number;
    char **slugs; /* the heading ids given so far */
    size_t nslugs, capslugs;
    pkb_buf *failed_to; /* where an allocation failure is latched */
};

/* v with room for `need` items of `size` (doubling *cap), or NULL with the failure latched. */
void *pkb__md_grow(struct pkb__md_ctx *c, void *v, size_t *cap, size_t need, size_t size);
/* The note of id[0..n), added when `add` and missing; NULL when absent (or out of memory). */
struct pkb__md_note *pkb__md_note_find(struct pkb__md_ctx *c, const char *id, size_t n, bool add);

/* Appends the HTML of the span s[0..n). */
void pkb__md_inlines(struct pkb__md_ctx *c, const char *s, size_t n, pkb_buf *out);
/* s[0] == '[' (or s[0..1] == "![" with from 1): the index of the ']' that closes the text when a
 * "(target)" follows it, the ')' in *close; 0 when it is not a link's shape. */
size_t pkb__md_link_shape(const char *s, size_t n, size_t from, size_t *close);
/* The link or image at s, appended; the length it took, or 0 when it is neither. */
size_t pkb__md_link(struct pkb__md_ctx *c, const char *s, size_t n, pkb_buf *out);

#endif /* PKB_PUBLISH_INLINE_H */
