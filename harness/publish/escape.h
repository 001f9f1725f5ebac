/*
 * escape — what every page of the site goes through: text escaped for HTML, and the rule for
 * where a link or an image may point (relative targets, #anchors, and for links only http:,
 * https: and mailto:; an image only relative, since the site loads nothing from elsewhere).
 */
#ifndef PKB_PUBLISH_ESCAPE_H
#define PKB_PUBLISH_ESCAPE_H

#include "common/buf.h"

#include <stdbool.h>
#include <stddef.h>

/* Appends s[0..n) with &, <, >, " and ' escaped: safe as element text and in a quoted
 * attribute. */
void pkb_html_text_n(pkb_buf *out, const char *s, size_t n);
/* The same for a NUL-terminated s. */
void pkb_html_text(pkb_buf *out, const char *s);

/* Appends fmt, markup written as it is, with each "%s" replaced by its argument escaped as
 * pkb_html_text does, each "%zu" by its count and "%%" by "%": a piece of a page read as one
 * template, its values never markup. No other conversion is taken (one is written as it is). */
__attribute__((format(printf, 2, 3))) void pkb_html_printf(pkb_buf *out, const char *fmt, ...);

/* Whether `href`[0..n) may be a link (image false) or an image's source (image true) on the
 * site, as above. */
bool pkb_html_safe_url(const char *href, size_t n, bool image);

#endif /* PKB_PUBLISH_ESCAPE_H */
