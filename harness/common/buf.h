/*
 * buf — a growable NUL-terminated string that every renderer writes into (Markdown, plot data and
 * scripts, terminal tables, comparisons), a growable array's growth, and the one-line error
 * message every room returns.
 *
 * An allocation failure is latched in `failed` (later appends do nothing), so a renderer checks
 * once at the end instead of after every append.
 */
#ifndef PKB_COMMON_BUF_H
#define PKB_COMMON_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct pkb_buf {
    char *data; /* NUL-terminated once anything was appended; NULL before */
    size_t len, cap;
    bool failed;
} pkb_buf;

void pkb_buf_printf(pkb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pkb_buf_vprintf(pkb_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void pkb_buf_puts(pkb_buf *b, const char *s);
void pkb_buf_free(pkb_buf *b);

/* Frees v[0..n) and v itself (v may be NULL): a list of malloc'd strings. */
void pkb_strings_free(char **v, size_t n);

/* Appends `s` as a file name: every byte outside [A-Za-z0-9_.-] becomes '_'. */
void pkb_buf_sanitized(pkb_buf *b, const char *s);

/* Room for `need` (≥ 1) items of `size` bytes in the array `items` of capacity *cap: `items`
 * itself when it has the room, else the array moved to a block twice as large (or more, from
 * `first` items) with *cap updated; NULL when out of memory, `items` and *cap as they were. The one
 * way every room grows an array. */
void *pkb_grow(void *items, size_t *cap, size_t need, size_t size, size_t first);

/* Writes a one-line message (newlines folded to spaces) into err[0..err_len) and returns rc.
 * err may be NULL when err_len is 0. */
int pkb_fail(char *err, size_t err_len, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* PKB_COMMON_BUF_H */
