/*
 * Program resolution: the spawn-free preflight and the launch share this code, so a launch
 * execs exactly the path pk_resolve_program reports.
 *
 * The rules follow execvp (musl's and glibc's): a name containing '/' is used as is; otherwise
 * each PATH entry is tried in order ("" means the current directory; an entry named twice is
 * tried once), a candidate longer than PATH_MAX is skipped, EACCES is remembered and kept over a
 * later not-found, and a default PATH applies when none is set. Unlike execvp we cannot ask execve
 * whether a candidate works, so a candidate is accepted when it is a regular file that access(X_OK)
 * accepts: stat() first (one syscall per miss), access() only on a hit. A relative PATH entry (""
 * or "bin") is made absolute against the parent's working directory, so a command with its own cwd
 * still execs the file the preflight named.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char default_path[] = "/usr/local/bin:/usr/bin:/bin";

const char *pk__child_path(const pk_env *env)
{
    if (env != NULL) {
        /* The last PATH= among the explicit entries wins, as it would in the built array. */
        const char *found = NULL;
        for (const char *const *e = env->set; e != NULL && *e != NULL; e++)
            if (strncmp(*e, "PATH=", 5) == 0)
                found = *e + 5;
        for (const char *const *u = env->unset; u != NULL && *u != NULL; u++)
            if (strcmp(*u, "PATH") == 0)
                return default_path;
        if (found != NULL)
            return found;
        if (env->clear)
            return default_path;
    }
    const char *p = getenv("PATH");
    return p != NULL ? p : default_path;
}

/* Whether the PATH entry [p, p+len) already came up earlier in pathvar: its answer is known, and
 * a second look would cost a system call for nothing (a PATH that names a directory twice is
 * common: shell profiles prepend without checking). */
static bool seen_before(const char *pathvar, const char *p, size_t len)
{
    for (const char *q = pathvar; q < p;) {
        const char *e = strchrnul(q, ':');
        if ((size_t)(e - q) == len && memcmp(q, p, len) == 0)
            return true;
        q = e + 1;
    }
    return false;
}

int pk__resolve(const char *program, const char *pathvar, char *buf, size_t cap)
{
    if (program == NULL || program[0] == '\0')
        return -EINVAL;
    size_t nlen = strlen(program);
    if (strchr(program, '/') != NULL) {
        if (nlen + 1 > cap)
            return -ENAMETOOLONG;
        memcpy(buf, program, nlen + 1);
        return 0;
    }
    if (nlen > NAME_MAX)
        return -ENAMETOOLONG;
    if (pathvar == NULL)
        pathvar = default_path;

    bool saw_eacces = false;
    const char *p = pathvar;
    for (;;) {
        const char *end = strchrnul(p, ':');
        size_t dlen = (size_t)(end - p);
        if (seen_before(pathvar, p, dlen))
            goto next;
        /* An empty entry means the current directory, as in execvp. */
        char *w = buf;
        if (dlen == 0 || p[0] != '/') {
            /* A relative entry is made absolute now, so the path stays right after the child
             * changes directory and the preflight reports exactly what is exec'd. */
            if (getcwd(buf, cap) == NULL)
                goto next;
            w = buf + strlen(buf);
            if (w > buf && w[-1] != '/')
                *w++ = '/';
        }
        size_t need = (size_t)(w - buf) + (dlen ? dlen + 1 : 0) + nlen + 1;
        if (need <= cap) {
            if (dlen) {
                memcpy(w, p, dlen);
                w += dlen;
                *w++ = '/';
            }
            memcpy(w, program, nlen + 1);
            struct stat st;
            if (stat(buf, &st) == 0) {
                if (S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
                    return 0;
                saw_eacces = true;
            } else if (errno == EACCES) {
                saw_eacces = true;
            }
        }
    next:
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return saw_eacces ? -EACCES : PK_ENOTFOUND;
}

int pk_resolve_program(const char *program, const pk_env *env, char **path, char **searched)
{
    if (path != NULL)
        *path = NULL;
    if (searched != NULL)
        *searched = NULL;
    if (path == NULL)
        return -EINVAL;
    char buf[PATH_MAX];
    const char *pathvar = pk__child_path(env);
    int rc = pk__resolve(program, pathvar, buf, sizeof buf);
    if (rc == PK_ENOTFOUND && searched != NULL) {
        *searched = strdup(pathvar);
        if (*searched == NULL)
            return -ENOMEM;
    }
    if (rc != 0)
        return rc;
    *path = strdup(buf);
    return *path != NULL ? 0 : -ENOMEM;
}
