/*
 * Program resolution and the child's environment on Windows.
 *
 * Resolution is ours, not CreateProcess's: CreateProcess looks in the application's directory,
 * the current directory and the system directories before PATH, and appends only ".exe", so it
 * can neither find a .cmd nor promise which file it will start. We resolve first and hand
 * CreateProcessW the absolute path, so pk_resolve_program reports exactly what a launch starts.
 * The rules, as cmd.exe applies them to a typed name:
 *  - a name holding '\', '/' or ':' is a path, used as is when it names a file; without an
 *    extension, each PATHEXT extension is tried after it;
 *  - a bare name is looked for in each PATH entry in order (quotes around an entry removed,
 *    empty entries skipped, a relative entry made absolute against our working directory); a name
 *    whose extension is in PATHEXT is tried as is, any other name with each PATHEXT extension
 *    appended in order (".COM;.EXE;.BAT;.CMD" when PATHEXT is unset); the first existing file
 *    that is not a directory wins. No implicit current directory: a file planted there is never
 *    picked up. Without PATH, the system directory and the Windows directory are searched.
 * PATH and PATHEXT are the child's: env->set wins over ours, env->unset and env->clear drop them,
 * and names compare case-insensitively, as Windows' environment does.
 *
 * The environment block is UTF-16, "NAME=VALUE\0" entries sorted by name without regard to case
 * and a final NUL. The hidden per-drive entries ("=C:=C:\dir") are inherited like the rest.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static const wchar_t default_pathext[] = L".COM;.EXE;.BAT;.CMD";

/* Length of the name of "NAME=VALUE" (a leading '=' belongs to the name), 0 when malformed. */
static size_t wname_len(const wchar_t *e)
{
    const wchar_t *eq = e[0] != L'\0' ? wcschr(e + 1, L'=') : NULL;
    return eq == NULL ? 0 : (size_t)(eq - e);
}

static size_t name_len(const char *e)
{
    const char *eq = strchr(e, '=');
    return eq == NULL || eq == e ? 0 : (size_t)(eq - e);
}

static bool same_name(const char *entry, const char *name, size_t len)
{
    return _strnicmp(entry, name, len) == 0 && (entry[len] == '=' || entry[len] == '\0');
}

/* The child's variable `name` as UTF-16 (malloc'd), or NULL in *out when the child will not have
 * it: env->unset and env->clear drop it, the last env->set entry wins, else ours (read in UTF-16,
 * never through the C runtime's code-page copy). */
static int child_var_w(const pk_env *env, const char *name, wchar_t **out)
{
    *out = NULL;
    size_t len = strlen(name);
    if (env != NULL) {
        for (const char *const *u = env->unset; u != NULL && *u != NULL; u++)
            if (strlen(*u) == len && _strnicmp(*u, name, len) == 0)
                return 0;
        const char *found = NULL;
        for (const char *const *e = env->set; e != NULL && *e != NULL; e++)
            if (name_len(*e) == len && same_name(*e, name, len))
                found = *e + len + 1;
        if (found != NULL)
            return pk__utf16(found, out);
        if (env->clear)
            return 0;
    }
    wchar_t *wname;
    int rc = pk__utf16(name, &wname);
    if (rc != 0)
        return rc;
    DWORD n = GetEnvironmentVariableW(wname, NULL, 0);
    if (n > 0) {
        *out = malloc(n * sizeof **out);
        if (*out == NULL)
            rc = -ENOMEM;
        else
            GetEnvironmentVariableW(wname, *out, n);
    }
    free(wname);
    return rc;
}

/* ---- resolution ---------------------------------------------------------------------------- */

static bool is_file(const wchar_t *p)
{
    DWORD a = GetFileAttributesW(p);
    return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

/* The absolute, normalised form of p (malloc'd). */
static int full_path(const wchar_t *p, wchar_t **out)
{
    DWORD n = GetFullPathNameW(p, 0, NULL, NULL);
    if (n == 0)
        return pk__win_error(GetLastError());
    *out = malloc(n * sizeof **out);
    if (*out == NULL)
        return -ENOMEM;
    GetFullPathNameW(p, n, *out, NULL);
    return 0;
}

/* The extension of the last component of p (from its last '.'), or NULL. */
static const wchar_t *extension(const wchar_t *p)
{
    const wchar_t *dot = wcsrchr(p, L'.');
    if (dot == NULL || wcspbrk(dot, L"\\/:") != NULL)
        return NULL;
    return dot;
}

static bool in_list(const wchar_t *ext, const wchar_t *list)
{
    size_t n = wcslen(ext);
    for (const wchar_t *p = list; *p != L'\0';) {
        const wchar_t *end = wcschr(p, L';');
        size_t len = end != NULL ? (size_t)(end - p) : wcslen(p);
        if (len == n && _wcsnicmp(p, ext, n) == 0)
            return true;
        p += len + (end != NULL);
    }
    return false;
}

/* Tries base, then (when with_exts) base + each extension of pathext. *out: the full path. */
static int try_candidates(const wchar_t *base, const wchar_t *pathext, bool as_is, wchar_t **out)
{
    size_t blen = wcslen(base);
    if (as_is && is_file(base))
        return full_path(base, out);
    if (as_is)
        return PK_ENOTFOUND;
    for (const wchar_t *p = pathext; *p != L'\0';) {
        const wchar_t *end = wcschr(p, L';');
        size_t len = end != NULL ? (size_t)(end - p) : wcslen(p);
        if (len > 1 && p[0] == L'.') {
            wchar_t *cand = malloc((blen + len + 1) * sizeof *cand);
            if (cand == NULL)
                return -ENOMEM;
            memcpy(cand, base, blen * sizeof *cand);
            memcpy(cand + blen, p, len * sizeof *cand);
            cand[blen + len] = L'\0';
            int rc = is_file(cand) ? full_path(cand, out) : PK_ENOTFOUND;
            free(cand);
            if (rc != PK_ENOTFOUND)
                return rc;
        }
        p += len + (end != NULL);
    }
    return PK_ENOTFOUND;
}

/* dir + '\' + name, malloc'd; quotes around dir removed. */
static wchar_t *join(const wchar_t *dir, size_t dlen, const wchar_t *name)
{
    if (dlen >= 2 && dir[0] == L'"' && dir[dlen - 1] == L'"')
        dir++, dlen -= 2;
    size_t nlen = wcslen(name);
    wchar_t *p = malloc((dlen + nlen + 2) * sizeof *p);
    if (p == NULL)
        return NULL;
    memcpy(p, dir, dlen * sizeof *p);
    size_t at = dlen;
    if (at > 0 && p[at - 1] != L'\\' && p[at - 1] != L'/')
        p[at++] = L'\\';
    memcpy(p + at, name, (nlen + 1) * sizeof *p);
    return p;
}

static int
search_path(const wchar_t *name, const wchar_t *pathvar, const wchar_t *pathext, wchar_t **out)
{
    const wchar_t *ext = extension(name);
    bool as_is = ext != NULL && in_list(ext, pathext);
    for (const wchar_t *p = pathvar; *p != L'\0';) {
        const wchar_t *end = wcschr(p, L';');
        size_t len = end != NULL ? (size_t)(end - p) : wcslen(p);
        if (len > 0 && !(len == 2 && p[0] == L'"' && p[1] == L'"')) {
            wchar_t *base = join(p, len, name);
            if (base == NULL)
                return -ENOMEM;
            int rc = try_candidates(base, pathext, as_is, out);
            free(base);
            if (rc != PK_ENOTFOUND)
                return rc;
        }
        p += len + (end != NULL);
    }
    return PK_ENOTFOUND;
}

/* The system and Windows directories, ';'-separated: the search list when PATH is unset. */
static wchar_t *default_path(void)
{
    wchar_t sys[MAX_PATH], win[MAX_PATH];
    UINT a = GetSystemDirectoryW(sys, MAX_PATH), b = GetWindowsDirectoryW(win, MAX_PATH);
    wchar_t *p = malloc((a + b + 2) * sizeof *p);
    if (p != NULL)
        swprintf(p, a + b + 2, L"%ls;%ls", a ? sys : L"", b ? win : L"");
    return p;
}

int pk__resolve_w(const char *program, const pk_env *env, wchar_t **path)
{
    *path = NULL;
    if (program == NULL || program[0] == '\0')
        return -EINVAL;
    wchar_t *name, *pathvar = NULL, *pathext = NULL;
    int rc = pk__utf16(program, &name);
    if (rc != 0)
        return rc;
    if (rc == 0)
        rc = child_var_w(env, "PATHEXT", &pathext);
    const wchar_t *exts = pathext != NULL && pathext[0] != L'\0' ? pathext : default_pathext;
    if (rc != 0) {
        /* nothing */
    } else if (wcspbrk(name, L"\\/:") != NULL) {
        /* A path: as is when it exists, else with PATHEXT when it has no extension; a missing
         * file is left for CreateProcess to report (-ENOENT at the exec stage, as on POSIX). */
        rc = try_candidates(name, exts, true, path);
        if (rc == PK_ENOTFOUND && extension(name) == NULL)
            rc = try_candidates(name, exts, false, path);
        if (rc == PK_ENOTFOUND)
            rc = full_path(name, path);
    } else if (wcslen(name) > 255) {
        rc = -ENAMETOOLONG;
    } else {
        rc = child_var_w(env, "PATH", &pathvar);
        if (rc == 0 && pathvar == NULL && (pathvar = default_path()) == NULL)
            rc = -ENOMEM;
        if (rc == 0)
            rc = search_path(name, pathvar, exts, path);
    }
    free(name);
    free(pathvar);
    free(pathext);
    return rc;
}

int pk_resolve_program(const char *program, const pk_env *env, char **path, char **searched)
{
    if (path != NULL)
        *path = NULL;
    if (searched != NULL)
        *searched = NULL;
    if (path == NULL)
        return -EINVAL;
    wchar_t *w;
    int rc = pk__resolve_w(program, env, &w);
    if (rc == PK_ENOTFOUND && searched != NULL) {
        wchar_t *v = NULL;
        if (child_var_w(env, "PATH", &v) != 0 || (v == NULL && (v = default_path()) == NULL) ||
            pk__utf8(v, searched) != 0)
            rc = -ENOMEM;
        free(v);
    }
    if (rc != 0)
        return rc;
    rc = pk__utf8(w, path);
    free(w);
    return rc;
}

/* ---- the environment block ----------------------------------------------------------------- */

static int cmp_entries(const void *a, const void *b)
{
    const wchar_t *x = *(const wchar_t *const *)a, *y = *(const wchar_t *const *)b;
    size_t lx = wname_len(x), ly = wname_len(y);
    int c = _wcsnicmp(x, y, lx < ly ? lx : ly);
    return c != 0 ? c : (lx > ly) - (lx < ly);
}

static bool w_matches(const wchar_t *entry, const char *name, size_t len)
{
    /* Names are compared in UTF-16, case-insensitively. */
    wchar_t *w;
    if (pk__utf16(name, &w) != 0)
        return false;
    size_t wl = wcslen(w);
    bool same = wl <= len && wname_len(entry) == wl && _wcsnicmp(entry, w, wl) == 0;
    free(w);
    return same;
}

/* True when the inherited entry is replaced by env->set or removed by env->unset. */
static bool dropped(const pk_env *env, const wchar_t *entry)
{
    for (const char *const *e = env->set; e != NULL && *e != NULL; e++)
        if (w_matches(entry, *e, name_len(*e)))
            return true;
    for (const char *const *u = env->unset; u != NULL && *u != NULL; u++)
        if (w_matches(entry, *u, strlen(*u)))
            return true;
    return false;
}

static bool set_dropped(const pk_env *env, size_t i)
{
    const char *e = env->set[i];
    size_t len = name_len(e);
    for (const char *const *l = env->set + i + 1; *l != NULL; l++)
        if (name_len(*l) == len && _strnicmp(*l, e, len) == 0)
            return true; /* a later entry of the same name wins */
    for (const char *const *u = env->unset; u != NULL && *u != NULL; u++)
        if (strlen(*u) == len && _strnicmp(*u, e, len) == 0)
            return true;
    return false;
}

static int collect(const pk_env *env, const wchar_t *inherited, wchar_t ***list, size_t *count)
{
    size_t n = 0, cap = 16;
    wchar_t **l = malloc(cap * sizeof *l);
    int rc = l == NULL ? -ENOMEM : 0;
    for (const wchar_t *e = inherited; rc == 0 && e != NULL && *e != L'\0'; e += wcslen(e) + 1) {
        if (dropped(env, e))
            continue;
        wchar_t *copy = _wcsdup(e);
        if (n + 1 >= cap) {
            wchar_t **g = realloc(l, (cap *= 2) * sizeof *l);
            l = g != NULL ? g : l;
            rc = g == NULL ? -ENOMEM : 0;
        }
        if (copy == NULL)
            rc = -ENOMEM;
        if (rc == 0)
            l[n++] = copy;
        else
            free(copy);
    }
    for (size_t i = 0; rc == 0 && env->set != NULL && env->set[i] != NULL; i++) {
        if (set_dropped(env, i))
            continue;
        wchar_t *w;
        rc = pk__utf16(env->set[i], &w);
        if (rc == 0 && n + 1 >= cap) {
            wchar_t **g = realloc(l, (cap *= 2) * sizeof *l);
            if (g == NULL) {
                free(w);
                rc = -ENOMEM;
            } else {
                l = g;
            }
        }
        if (rc == 0)
            l[n++] = w;
    }
    *list = l;
    *count = n;
    return rc;
}

int pk__env_block(const pk_env *env, wchar_t **block)
{
    *block = NULL;
    if (env == NULL || (!env->clear && env->set == NULL && env->unset == NULL))
        return 0;
    for (const char *const *e = env->set; e != NULL && *e != NULL; e++)
        if (name_len(*e) == 0)
            return PK_EBADENV;
    for (const char *const *u = env->unset; u != NULL && *u != NULL; u++)
        if ((*u)[0] == '\0' || strchr(*u, '=') != NULL)
            return PK_EBADENV;

    wchar_t *inherited = env->clear ? NULL : GetEnvironmentStringsW();
    wchar_t **list = NULL;
    size_t n = 0;
    int rc = collect(env, inherited, &list, &n);
    if (inherited != NULL)
        FreeEnvironmentStringsW(inherited);
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += wcslen(list[i]) + 1;
    wchar_t *b = rc == 0 ? malloc((total + 1) * sizeof *b) : NULL;
    if (rc == 0 && b == NULL)
        rc = -ENOMEM;
    if (rc == 0) {
        qsort(list, n, sizeof *list, cmp_entries);
        wchar_t *w = b;
        for (size_t i = 0; i < n; i++) {
            size_t len = wcslen(list[i]) + 1;
            memcpy(w, list[i], len * sizeof *w);
            w += len;
        }
        *w++ = L'\0';
        if (n == 0)
            *w = L'\0'; /* an empty block is two NULs */
        *block = b;
    }
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
    return rc;
}
