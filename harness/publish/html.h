/*
 * html — the Markdown pkbench writes, as HTML. The site (publish.h) shows each report exactly as
 * its Markdown says it, so the numbers, tables and figure links have one source: the report. This
 * reads the subset pkbench's renderers write — ATX headings, paragraphs, pipe tables with their
 * alignment row, lists ("- ", "1. ", nested by indentation), block quotes, fenced code, thematic
 * breaks, footnotes ("[^id]" and "[^id]: text"), and inline code, **strong**, *emphasis*,
 * links, images and backslash escapes — and escapes everything else: text never becomes markup.
 *
 * pkbench's own convention is kept: a pipe inside a code span is written "\|" (common/md.h's
 * pkb_md_code), and shows as "|".
 *
 * Where a link may point: relative targets, #anchors, and http:, https: or mailto:; an image only
 * at a relative target (the site loads nothing from elsewhere). Anything else (javascript:, data:,
 * file:, "//host") is dropped and only the text kept, so no string of a results file can put a
 * script or a remote resource into a page. A paragraph that is one image becomes a <figure>
 * captioned with the image's text.
 */
#ifndef PKB_PUBLISH_HTML_H
#define PKB_PUBLISH_HTML_H

#include "common/buf.h"

#include <stdbool.h>
#include <stddef.h>

/* Appends the HTML of md[0..len) to out (a fragment: no <html> or <body>). Headings get ids made
 * from their text ("## How to read it" -> id="how-to-read-it", made unique with "-2", "-3");
 * footnotes are numbered in the order they are first referred to and listed at the end, with the
 * ones never referred to after them. An allocation failure is latched in out->failed. */
void pkb_md_to_html(const char *md, size_t len, pkb_buf *out);

#endif /* PKB_PUBLISH_HTML_H */
