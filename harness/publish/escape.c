/*
 * escape — the site's two safety rules in one place (escape.h): text is escaped wherever it goes
 * into a page, and a link or an image may point only where the site allows.
 */
#define _GNU_SOURCE
#include "publish/escape.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>

void pkb_html_text_n(pkb_buf *out, const char *s, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep = s[i] == '&'    ? "&amp;"
                          : s[i] == '<'  ? "&lt;"
                          : s[i] == '>'  ? "&gt;"
                          : s[i] == '"'  ? "&quot;"
                          : s[i] == '\'' ? "&#39;"
                                         : NULL;
        if (rep == NULL)
            continue;
        pkb_buf_printf(out, "%.*s%s", (int)(i - from), s + from, rep);
        from = i + 1;
    }
    pkb_buf_printf(out, "%.*s", (int)(n - from), s + from);
}

void pkb_html_text(pkb_buf *out, const char *s)
{
    pkb_html_text_n(out, s, strlen(s));
}

void pkb_html_printf(pkb_buf *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    for (const char *at = fmt; *at != '\0';) {
        size_t plain = strcspn(at, "%");
        pkb_buf_printf(out, "%.*s", (int)plain, at);
        at += plain;
        if (strncmp(at, "%s", 2) == 0) {
            pkb_html_text(out, va_arg(ap, const char *));
            at += 2;
        } else if (strncmp(at, "%zu", 3) == 0) {
            pkb_buf_printf(out, "%zu", va_arg(ap, size_t));
            at += 3;
        } else if (*at == '%') {
            pkb_buf_puts(out, "%");
            at += at[1] == '%' ? 2 : 1;
        }
    }
    va_end(ap);
}

static bool starts_ci(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && strncasecmp(s, prefix, k) == 0;
}

bool pkb_html_safe_url(const char *href, size_t n, bool image)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) /* a control byte or a blank can hide a scheme */
        if ((unsigned char)href[i] <= ' ')
            return false;
    if (n >= 2 && (href[0] == '/' || href[0] == '\\') && (href[1] == '/' || href[1] == '\\'))
        return false; /* "//host/x": another site */
    size_t colon = strcspn(href, ":/?#");
    if (colon >= n || href[colon] != ':')
        return true; /* no scheme: relative, or an anchor */
    if (image)
        return false;
    return starts_ci(href, n, "http:") || starts_ci(href, n, "https:") ||
           starts_ci(href, n, "mailto:");
}
