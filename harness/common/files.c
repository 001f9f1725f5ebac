/*
 * files — durable output and bounded input (files.h). The report stages its files in a private
 * directory and commits them with pkb_commit_file; results files are replaced with
 * pkb_write_json_atomic after every finished series, so an interrupted or crashed run keeps its
 * last complete state. What differs between platforms (symlinks, waiting on a FIFO) is in
 * files.posix.c and files.windows.c.
 */
#define _GNU_SOURCE
#include "common/files.h"

#include "common/parse.h"

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

int pkb_fifo_wait_ms(void)
{
    static int cached = -1;
    if (cached >= 0)
        return cached;
    cached = PKB_FIFO_WAIT_DEFAULT_S * 1000;
    const char *v = getenv("PKBENCH_FIFO_WAIT");
    double s;
    if (v != NULL && v[0] != '\0') {
        if (pkb_parse_number(v, false, &s) && s >= 0 && s <= 3600)
            cached = (int)(s * 1000 + 0.5);
        else
            fprintf(
                stderr,
                "pkbench: PKBENCH_FIFO_WAIT: '%s' is not seconds from 0 to 3600; waiting %d s\n", v,
                PKB_FIFO_WAIT_DEFAULT_S);
    }
    return cached;
}

/* A path that is not a regular file (a FIFO, /dev/stdout): written in place, as `>` would, but
 * never waited on for longer than pkb_fifo_wait_ms. */
static int write_in_place(const char *path, const char *text, size_t len)
{
    int fd;
    int rc = pkb__open_in_place(path, pkb_fifo_wait_ms(), &fd);
    if (rc != 0)
        return rc;
    rc = pkb__write_in_place(fd, text, len, pkb_fifo_wait_ms());
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* The directory part of path (or "."), into dir. */
static int dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = NULL;
    for (const char *p = path; *p != '\0'; p++)
        if (strchr(PKB_DIR_SEPARATORS, *p) != NULL)
            slash = p;
    int n = slash == NULL   ? snprintf(dir, cap, ".")
            : slash == path ? snprintf(dir, cap, "%.1s", path)
                            : snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    return n >= 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

int pkb_write_text_atomic(const char *path, const char *text, size_t len)
{
    /* Through a symlink, the target is what is replaced (in its own directory): renaming over
     * the link would turn it into a regular file and leave its target as it was. */
    char final[PATH_MAX], tmp[PATH_MAX];
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return S_ISDIR(st.st_mode) ? -EISDIR : write_in_place(path, text, len);
    int rc = pkb_final_path(path, final, sizeof final);
    if (rc != 0)
        return rc;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", final) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    rc = write_all(fd, text, len);
    /* mkostemp makes 0600; an output is as readable as any other file the user writes. */
    if (rc == 0 && fchmod(fd, 0644) != 0)
        rc = -errno;
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, final) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

int pkb_check_writable(const char *path)
{
    char final[PATH_MAX], dir[PATH_MAX];
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
    /* The temporary file goes next to the file replaced (a symlink's target, which a dangling
     * link's write creates). */
    int rc = pkb_final_path(path, final, sizeof final);
    if (rc == 0)
        rc = dir_of(final, dir, sizeof dir);
    if (rc != 0)
        return rc;
    return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
}

/* ---- reading --------------------------------------------------------------------------------- */

/* What a FIFO, a pipe or a terminal gave, by path: such an input can be read only once, and a
 * command may read its input more than once (report --print, check's baseline). */
struct once {
    struct once *next;
    char *path, *data;
    size_t len;
};
static struct once *read_once;

static int copy_of(const char *data, size_t len, char **out, size_t *out_len)
{
    *out = malloc(len + 1);
    if (*out == NULL)
        return -ENOMEM;
    memcpy(*out, data, len);
    (*out)[len] = '\0';
    *out_len = len;
    return 0;
}

const char *pkb_path_kind(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
        return NULL;
    return pkb__kind_of((unsigned)st.st_mode);
}

/* Opens `path` to read (*regular: a regular file; *size its size); a directory is -EISDIR. */
static int open_input(const char *path, int *fd, bool *regular, long long *size)
{
    *fd = pkb__open_read(path);
    if (*fd < 0)
        return *fd;
    struct stat st;
    int rc = fstat(*fd, &st) != 0 ? -errno : S_ISDIR(st.st_mode) ? -EISDIR : 0;
    if (rc != 0) {
        close(*fd);
        return rc;
    }
    *regular = S_ISREG(st.st_mode);
    *size = (long long)st.st_size;
    return 0;
}

/* Reads fd to its end into buf (capacity *cap, grown up to limit + 1 bytes). */
static int read_to_end(int fd, bool regular, size_t limit, char **buf, size_t *cap, size_t *n)
{
    for (;;) {
        if (*n == *cap) {
            if (*cap > limit)
                return -EFBIG;
            size_t bigger_cap = *cap * 2 > limit + 1 ? limit + 1 : *cap * 2;
            char *bigger = realloc(*buf, bigger_cap + 1);
            if (bigger == NULL)
                return -ENOMEM;
            *buf = bigger;
            *cap = bigger_cap;
        }
        long r = pkb__read_some(fd, regular, *buf + *n, *cap - *n, pkb_fifo_wait_ms());
        if (r < 0)
            return (int)r;
        if (r == 0)
            return *n > limit ? -EFBIG : 0;
        *n += (size_t)r;
    }
}

int pkb_read_file(const char *path, size_t limit, char **data, size_t *len)
{
    for (struct once *o = read_once; o != NULL; o = o->next)
        if (strcmp(o->path, path) == 0)
            return copy_of(o->data, o->len, data, len);
    int fd;
    bool regular;
    long long size;
    int rc = open_input(path, &fd, &regular, &size);
    if (rc != 0)
        return rc;
    if (regular && (unsigned long long)size > (unsigned long long)limit) {
        close(fd);
        return -EFBIG;
    }
    size_t cap = regular && size > 0 ? (size_t)size + 1 : 4096, n = 0;
    char *buf = malloc(cap + 1);
    rc = buf == NULL ? -ENOMEM : read_to_end(fd, regular, limit, &buf, &cap, &n);
    close(fd);
    struct once *o = rc == 0 && !regular ? calloc(1, sizeof *o) : NULL;
    if (o != NULL && (o->path = strdup(path)) != NULL && copy_of(buf, n, &o->data, &o->len) == 0) {
        o->next = read_once;
        read_once = o;
    } else if (o != NULL) {
        free(o->path);
        free(o);
    }
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
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
