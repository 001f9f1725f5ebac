/*
 * page — the frame every page of the site shares (private to harness/publish/): the head (title,
 * character set, the Content-Security-Policy that forbids scripts and anything from elsewhere,
 * the one stylesheet), the way back to the index, and the foot that says where the page came
 * from; writing a page and reading what a report wrote; and the stylesheet itself.
 */
#ifndef PKB_PUBLISH_PAGE_H
#define PKB_PUBLISH_PAGE_H

#include "common/buf.h"

/* The top of a page titled `title` (escaped here), whose way to the site's root is `root` ("" for
 * the index, "../../" for a study): everything up to and including <main>. A page other than the
 * index gets a line linking back to it. */
void pkb_page_head(pkb_buf *b, const char *title, const char *root);

/* The end of a page: </main>, then a footer with `note` (HTML, already escaped), then </html>. */
void pkb_page_foot(pkb_buf *b, const char *note);

/* Appends the whole file at path to b: 0, or a negative errno. */
int pkb_page_read(const char *path, pkb_buf *b);

/* Writes b as dir/name (fsync'ed); on failure a one-line message naming the file. */
int pkb_page_put(const char *dir, const char *name, pkb_buf *b, char *err, size_t err_len);

/* The site's stylesheet (style.css at the root). */
extern const char pkb_page_css[];

#endif /* PKB_PUBLISH_PAGE_H */
