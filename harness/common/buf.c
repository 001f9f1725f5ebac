/*
 * buf — the growable string and the one-line error message (buf.h). vsnprintf measures first and
 * the buffer doubles, so an append costs one formatting pass in the common case.
 */
#include "common/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pkb_buf_vprintf(pkb_buf *b, const char *fmt, va_list ap)
{
    if (b->failed)
        return;
    for (;;) {
        va_list aq;
        va_copy(aq, ap);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, aq);
        va_end(aq);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *bigger = realloc(b->data, cap);
        if (bigger == NULL) {
            b->failed = true;
            return;
        }
        b->data = bigger;
        b->cap = cap;
    }
}

void pkb_buf_printf(pkb_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pkb_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void pkb_buf_puts(pkb_buf *b, const char *s)
{
    pkb_buf_printf(b, "%s", s);
}

void pkb_buf_free(pkb_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void pkb_buf_sanitized(pkb_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
        pkb_buf_printf(b, "%c", keep ? c : '_');
    }
}

int pkb_fail(char *err, size_t err_len, int rc, const char *fmt, ...)
{
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
        /* One line, always: a JSON parser's message or a field name could carry a newline. */
        for (char *p = err; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
    }
    return rc;
}

void *pkb_grow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return items;
    size_t bigger = *cap ? *cap : first;
    while (bigger < need && bigger <= SIZE_MAX / 2)
        bigger *= 2;
    if (bigger < need || bigger > SIZE_MAX / size)
        return NULL;
    void *moved = realloc(items, bigger * size);
    if (moved != NULL)
        *cap = bigger;
    return moved;
}

void pkb_strings_free(char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}
