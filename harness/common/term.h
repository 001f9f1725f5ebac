/*
 * term — what every terminal rendering shares (the suites' terminal views, the runner's
 * per-series lines): whether a stream wants colour, aligned plain-text tables, display widths and
 * durations.
 *
 * Colour is a handful of SGR sequences (bold, dim, green, red, yellow, reset) and nothing else:
 * no cursor movement, no terminal database. It is used only when pkb_term_wants_color says so,
 * and a table's alignment never depends on it (padding is computed on the text, outside the
 * sequences), so the plain and the coloured renderings hold the same characters.
 */
#ifndef PKB_COMMON_TERM_H
#define PKB_COMMON_TERM_H

#include "common/buf.h"

#include <stdbool.h>
#include <stddef.h>

/* Whether output on fd should be coloured: false when NO_COLOR is set to anything but the empty
 * string (no-color.org), when TERM is unset, empty or "dumb", or when fd is not a terminal. */
bool pkb_term_wants_color(int fd);

/* How a piece of text is shown when colour is on; PLAIN adds nothing. */
typedef enum pkb_tone {
    PKB_TONE_PLAIN = 0,
    PKB_TONE_BOLD, /* headers and titles */
    PKB_TONE_DIM,  /* notes */
    PKB_TONE_GOOD, /* green: faster, met, within */
    PKB_TONE_BAD,  /* red: slower, not met */
    PKB_TONE_WARN, /* yellow: flagged, noisy, incomplete */
} pkb_tone;

/* Appends s, wrapped in the tone's SGR sequence and a reset when `color` and tone != PLAIN. */
void pkb_term_puts(pkb_buf *b, bool color, pkb_tone tone, const char *s);

/* Appends one line, the formatted text in the tone (as pkb_term_puts) and a newline. */
void pkb_term_line(pkb_buf *b, bool color, pkb_tone tone, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Display width of UTF-8 text in columns: code points, not bytes ("µs" is two columns; every
 * character these renderings print is one column wide). */
size_t pkb_text_width(const char *s);

/* A duration for a person, rounded to the second: "0s" (exactly 0), "1s" (anything shorter),
 * "42s", "7m05s", "2h03m". Negative or non-finite: "?". */
void pkb_fmt_duration(char *out, size_t cap, double seconds);

/* ---- aligned tables ------------------------------------------------------------------------ */

/* A table of text cells: the first row is the header, cells fill rows left to right, columns are
 * padded to their widest cell and separated by two spaces, and no line ends in a space. */
typedef struct pkb_table pkb_table;

/* A new table; `align` has one character per column: 'l' left-aligned, 'r' right-aligned. NULL
 * when out of memory or when align is empty or holds another character. */
pkb_table *pkb_table_new(const char *align);

/* Appends the next cell. Newlines in the text become spaces (a cell is one line). An allocation
 * failure is latched and reported by pkb_table_render (as a failed buffer). */
void pkb_table_add(pkb_table *t, pkb_tone tone, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends the header cells, a list of names ended by NULL. */
void pkb_table_heads(pkb_table *t, ...) __attribute__((sentinel));

/* Completes the current row with empty cells, so the next cell starts a row. */
void pkb_table_end_row(pkb_table *t);

/* Rows added so far, the header included (a partial last row counts). */
size_t pkb_table_rows(const pkb_table *t);

/* Appends the table to out, every line starting with `indent`; the header is bold when `color`.
 * A table whose cells failed to allocate marks out failed. */
void pkb_table_render(const pkb_table *t, const char *indent, bool color, pkb_buf *out);

/* The end of a table section: the table indented by two spaces, a blank line; frees t. */
void pkb_table_finish(pkb_table *t, bool color, pkb_buf *out);

/* Appends `cell`'s text as the next cell and frees it; a cell that failed to build marks out
 * failed (and adds an empty cell). */
void pkb_table_take(pkb_table *t, pkb_tone tone, pkb_buf *cell, pkb_buf *out);

/* Accepts NULL. */
void pkb_table_free(pkb_table *t);

#endif /* PKB_COMMON_TERM_H */
