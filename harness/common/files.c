/*
 * files — durable output (files.h). The report stages its files in a private directory and
 * commits them with pkb_commit_file; results files are replaced with pkb_write_json_atomic after
 * every finished series, so an interrupted or crashed run keeps its last complete state.
 */
#define _GNU_SOURCE
#include "common/files.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes everything, retrying short writes and EINTR. */
static int write_all(int fd, const char *data, size_t len)
{
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno != EINTR)
            return -errno;
        if (w > 0)
            done += (size_t)w;
    }
    return 0;
}

int pkb_write_file(const char *dir, const char *name, const char *data, size_t len)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return -ENAMETOOLONG;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, data, len);
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

int pkb_write_buf(const char *dir, const char *stem, const char *suffix, pkb_buf *b)
{
    if (b->failed)
        return -ENOMEM;
    char name[NAME_MAX + 1];
    if (snprintf(name, sizeof name, "%s%s", stem, suffix) >= (int)sizeof name)
        return -ENAMETOOLONG;
    return pkb_write_file(dir, name, b->data ? b->data : "", b->len);
}

int pkb_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return -ENAMETOOLONG;
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -errno;
        *p = saved;
        if (saved == '\0')
            break;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 ? 0 : -errno;
}

int pkb_remove_tree(const char *path)
{
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int pkb_commit_file(const char *stage, const char *out_dir, const char *name)
{
    char from[PATH_MAX], to[PATH_MAX];
    if (snprintf(from, sizeof from, "%s/%s", stage, name) >= (int)sizeof from ||
        snprintf(to, sizeof to, "%s/%s", out_dir, name) >= (int)sizeof to)
        return -ENAMETOOLONG;
    /* Files a plotting tool wrote were not synced by it. */
    int fd = open(from, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) == 0 ? 0 : -errno;
    close(fd);
    if (rc == 0 && rename(from, to) != 0)
        rc = -errno;
    return rc;
}

void pkb_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* A path that is not a regular file (a FIFO, /dev/stdout): written in place, as `>` would. */
static int write_in_place(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, text, len);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

int pkb_write_text_atomic(const char *path, const char *text, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return S_ISDIR(st.st_mode) ? -EISDIR : write_in_place(path, text, len);
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, text, len);
    /* mkostemp makes 0600; an output is as readable as any other file the user writes. */
    if (rc == 0 && fchmod(fd, 0644) != 0)
        rc = -errno;
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

int pkb_check_writable(const char *path)
{
    char dir[PATH_MAX];
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        if (access(path, W_OK) != 0)
            return -errno;
        if (!S_ISREG(st.st_mode))
            return 0; /* written in place */
    } else if (errno != ENOENT) {
        return -errno;
    }
    /* The temporary file goes next to it. */
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path) >=
             (int)sizeof dir)
        return -ENAMETOOLONG;
    return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
}

char *pkb_json_text(const json_t *doc, int indent)
{
    char *text =
        doc != NULL
            ? json_dumps(doc, JSON_INDENT(indent) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))
            : NULL;
    if (text == NULL)
        return NULL;
    size_t len = strlen(text);
    /* json_dumps leaves room for nothing: the newline a text file ends with is added here. */
    char *line = realloc(text, len + 2);
    if (line == NULL) {
        free(text);
        return NULL;
    }
    line[len] = '\n';
    line[len + 1] = '\0';
    return line;
}

int pkb_write_json_atomic(const json_t *doc, const char *path)
{
    char *text = pkb_json_text(doc, 1);
    if (text == NULL)
        return -ENOMEM;
    int rc = pkb_write_text_atomic(path, text, strlen(text));
    free(text);
    return rc;
}
