/*
 * Command lines. Windows passes a child one string, and the child splits it itself: every C
 * runtime (and CommandLineToArgvW) splits it by the same rules, which this file inverts.
 *
 * An argument is left bare unless it is empty or holds a space, tab, newline, vertical tab or
 * double quote; then it is wrapped in quotes, a quote inside becomes \" and the backslashes
 * before a quote (or before the closing quote) are doubled, since only there do backslashes
 * escape. argv[0] follows simpler rules (quotes toggle, backslashes are literal), so it is
 * quoted when it holds a space or tab and refused when it holds a quote.
 *
 * Batch files. CreateProcess runs a .bat/.cmd through cmd.exe, which re-parses the whole line
 * with its own rules: & | < > ^ split and redirect outside quotes, %NAME% expands even inside
 * them, a line feed ends the command. Quoting for a C runtime is therefore not quoting for cmd,
 * which is how a caller's argument could run a command (BatBadBut, CVE-2024-24576). We never let
 * CreateProcess pick cmd.exe's line: we start %SystemRoot%\System32\cmd.exe ourselves with
 * /d (no AutoRun) /e:ON /v:OFF (no delayed ! expansion) /c and a line in which every argument is
 * quoted (so the metacharacters are inert) and an inner quote is doubled (cmd's quote state
 * toggles twice over it, staying inside). What cmd.exe would still interpret inside quotes —
 * a % (variable expansion) or a line break, or a control character — cannot be passed safely at
 * all: such an argument is refused with PK_EUNSAFEARG and nothing runs.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Windows' limit for lpCommandLine, in UTF-16 units with the terminating NUL. */
#define CMDLINE_MAX 32767

struct text {
    char *p;
    size_t len, cap;
    bool oom;
};

static void put(struct text *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (t->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (p == NULL) {
            t->oom = true;
            return;
        }
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void put_c(struct text *t, char c, size_t times)
{
    while (times-- > 0)
        put(t, &c, 1);
}

/* One argument for a C runtime's splitter. */
static void put_arg(struct text *t, const char *a)
{
    if (a[0] != '\0' && strpbrk(a, " \t\n\v\"") == NULL) {
        put(t, a, strlen(a));
        return;
    }
    put_c(t, '"', 1);
    for (const char *p = a;; p++) {
        size_t slashes = 0;
        while (*p == '\\')
            p++, slashes++;
        if (*p == '\0') {
            put_c(t, '\\', slashes * 2); /* they precede the closing quote */
            break;
        }
        if (*p == '"') {
            put_c(t, '\\', slashes * 2 + 1);
        } else {
            put_c(t, '\\', slashes);
        }
        put(t, p, 1);
    }
    put_c(t, '"', 1);
}

static int finish(struct text *t, wchar_t **out)
{
    if (t->oom) {
        free(t->p);
        return -ENOMEM;
    }
    int rc = pk__utf16(t->p != NULL ? t->p : "", out);
    free(t->p);
    if (rc == 0 && wcslen(*out) >= CMDLINE_MAX) {
        free(*out);
        *out = NULL;
        return -E2BIG;
    }
    return rc;
}

int pk__cmdline(const char *const *argv, wchar_t **out)
{
    *out = NULL;
    struct text t = {0};
    const char *a0 = argv[0];
    if (strchr(a0, '"') != NULL)
        return -EINVAL;
    bool q = a0[0] == '\0' || strpbrk(a0, " \t") != NULL;
    put_c(&t, '"', q);
    put(&t, a0, strlen(a0));
    put_c(&t, '"', q);
    for (size_t i = 1; argv[i] != NULL; i++) {
        put_c(&t, ' ', 1);
        put_arg(&t, argv[i]);
    }
    return finish(&t, out);
}

bool pk__is_batch(const wchar_t *path)
{
    /* Windows drops trailing dots and spaces from a file name, so "x.bat. " runs x.bat. */
    size_t n = wcslen(path);
    while (n > 0 && (path[n - 1] == L'.' || path[n - 1] == L' '))
        n--;
    if (n < 4)
        return false;
    const wchar_t *ext = path + n - 4;
    return _wcsnicmp(ext, L".bat", 4) == 0 || _wcsnicmp(ext, L".cmd", 4) == 0;
}

/* True when cmd.exe would interpret something in s even inside double quotes. */
static bool unsafe_for_cmd(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        if (*p == '%' || (*p < 0x20 && *p != '\t') || *p == 0x7f)
            return true;
    return false;
}

static void put_cmd_quoted(struct text *t, const char *s)
{
    put_c(t, '"', 1);
    for (const char *p = s; *p != '\0'; p++)
        put_c(t, *p, *p == '"' ? 2 : 1);
    put_c(t, '"', 1);
}

int pk__cmdline_batch(const wchar_t *path, const char *const *argv, wchar_t **app, wchar_t **out)
{
    *app = *out = NULL;
    char *upath;
    int rc = pk__utf8(path, &upath);
    if (rc != 0)
        return rc;
    rc = unsafe_for_cmd(upath) ? PK_EUNSAFEARG : 0;
    for (size_t i = 1; rc == 0 && argv[i] != NULL; i++)
        if (unsafe_for_cmd(argv[i]))
            rc = PK_EUNSAFEARG;
    if (rc != 0) {
        free(upath);
        return rc;
    }
    wchar_t sys[MAX_PATH];
    UINT n = GetSystemDirectoryW(sys, MAX_PATH);
    if (n == 0 || n + sizeof "\\cmd.exe" > MAX_PATH) {
        free(upath);
        return -ENOENT;
    }
    wcscat(sys, L"\\cmd.exe");
    *app = _wcsdup(sys);

    /* cmd.exe strips the first and the last quote of what follows /c: hence the outer pair. */
    struct text t = {0};
    const char head[] = "cmd.exe /d /e:ON /v:OFF /c \"";
    put(&t, head, sizeof head - 1);
    put_cmd_quoted(&t, upath);
    for (size_t i = 1; argv[i] != NULL; i++) {
        put_c(&t, ' ', 1);
        put_cmd_quoted(&t, argv[i]);
    }
    put_c(&t, '"', 1);
    free(upath);
    rc = *app == NULL ? -ENOMEM : finish(&t, out);
    if (rc != 0) {
        free(*app);
        *app = NULL;
    }
    return rc;
}
