/*
 * What pkrun writes besides the command's bytes: the --json outcome, and the one rule every file
 * it writes follows.
 *
 * The rule: a regular file (or a path that does not exist yet) is written to a temporary file in
 * the same directory, flushed, and renamed over it, so a reader sees the old outcome or the new
 * one, never half of one; when the path is a symlink, its target is what gets replaced. Anything
 * else a user can name as an output — a terminal, a FIFO, /dev/stderr, a shell's >(...) — is
 * opened and written in place, as the shell's `>` would: renaming over it would replace a device
 * node or a symlink with a regular file (as root, /dev/stderr itself) and leave a FIFO's reader
 * waiting forever. The path is checked before the command runs, so a typo costs nothing.
 */
#define _GNU_SOURCE
#include "pkrun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The directory part of path (or "."), into dir. */
static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(dir, cap, ".");
    else if (slash == path)
        snprintf(dir, cap, "/");
    else
        snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

int pkr_output_check(const char *path)
{
    if (strcmp(path, "-") == 0)
        return 0;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        if (access(path, W_OK) != 0)
            return -errno;
        if (!S_ISREG(st.st_mode))
            return 0;
        /* Replaced by a rename: its directory (the symlink target's) must take a new file. */
        char real[PATH_MAX], dir[PATH_MAX];
        if (realpath(path, real) == NULL)
            return -errno;
        dir_of(real, dir, sizeof dir);
        return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
    }
    if (errno != ENOENT)
        return -errno;
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    return access(dir, W_OK | X_OK) == 0 ? 0 : -errno;
}

static int write_in_place(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, data, len);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

static int write_atomic(const char *path, const char *data, size_t len)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return -ENAMETOOLONG;
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, data, len);
    /* mkostemp makes 0600; the outcome is as readable as any file the user's umask allows. */
    mode_t mask = umask(0);
    umask(mask);
    if (rc == 0 && fchmod(fd, 0666 & ~mask) != 0)
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

int pkr_output_write(const char *path, const char *data, size_t len)
{
    if (strcmp(path, "-") == 0)
        return write_all(1, data, len);
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT ? write_atomic(path, data, len) : -errno;
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    if (!S_ISREG(st.st_mode))
        return write_in_place(path, data, len);
    char real[PATH_MAX];
    if (realpath(path, real) == NULL)
        return -errno;
    return write_atomic(real, data, len);
}

/* ---- the JSON outcome ---------------------------------------------------------------------- */

/* A JSON string: escapes, and U+FFFD for bytes that are not valid UTF-8. */
static void json_string(FILE *f, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c), i++;
        } else if (c == '\n') {
            fputs("\\n", f), i++;
        } else if (c == '\t') {
            fputs("\\t", f), i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c), i++;
        } else if (c < 0x80) {
            fputc(c, f), i++;
        } else {
            size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                         : c >= 0xE0 && c <= 0xEF ? 3
                         : c >= 0xF0 && c <= 0xF4 ? 4
                                                  : 0;
            bool ok = len > 0 && i + len <= n;
            for (size_t k = 1; ok && k < len; k++)
                ok = (u[i + k] & 0xC0) == 0x80;
            /* overlongs, surrogates and values above U+10FFFF */
            if (ok && len == 3)
                ok = !(c == 0xE0 && u[i + 1] < 0xA0) && !(c == 0xED && u[i + 1] > 0x9F);
            if (ok && len == 4)
                ok = !(c == 0xF0 && u[i + 1] < 0x90) && !(c == 0xF4 && u[i + 1] > 0x8F);
            if (ok) {
                fwrite(u + i, 1, len, f);
                i += len;
            } else {
                fputs("\\ufffd", f);
                i++;
            }
        }
    }
    fputc('"', f);
}

/* What was kept: fail keeps a head. */
static const char *keep_name(pk_keep keep)
{
    return keep == PK_KEEP_TAIL ? "tail" : "head";
}

/* One stream: how it reached pkrun's output, what was delivered, and (captured) what was kept. */
static void
json_stream(FILE *f, const char *name, const struct pkr_relay *relay, int id, pk_keep keep)
{
    fprintf(f, "    \"%s\": {", name);
    const struct pkr_stream *s = NULL;
    for (int i = 0; i < relay->nstreams; i++)
        if (relay->streams[i].id == id)
            s = &relay->streams[i];
    if (id == 2 && relay->merged) {
        fputs("\"forwarding\": \"merged into stdout\"}", f);
        return;
    }
    if (s == NULL) {
        fprintf(f, "\"forwarding\": \"%s\"}", relay->closed[id] ? "closed" : "inherited");
        return;
    }
    fprintf(f, "\"forwarding\": \"relayed\", \"bytes\": %llu, \"delivered_bytes\": %llu",
            (unsigned long long)s->bytes, (unsigned long long)s->out->bytes);
    if (s->out->gone)
        fputs(", \"reader_gone\": true", f);
    if (s->out->error != 0)
        fprintf(f, ", \"write_error\": \"%s\"", pk_errname(-s->out->error));
    if (s->capturing) {
        struct pkr_capture *c = (struct pkr_capture *)&s->cap;
        const char *text;
        size_t len;
        bool truncated;
        pkr_capture_kept(c, &text, &len, &truncated);
        fprintf(f, ", \"lines\": %llu, \"truncated\": %s, \"kept\": \"%s\", \"kept_bytes\": %zu",
                (unsigned long long)pkr_capture_lines(c), truncated ? "true" : "false",
                keep_name(keep), len);
        fputs(", \"text\": ", f);
        json_string(f, text, len);
    }
    fputs("}", f);
}

/* How the run ended: the outcome's kind and its details, pkrun's own exit status, the times. */
static void json_outcome(FILE *f, const struct pkr_report *rep)
{
    const pk_outcome *oc = &rep->res->outcome;
    fprintf(f, "  \"outcome\": \"%s\",\n", pk_outcome_kind_name(rep->kind));
    if (oc->kind == PK_OUTCOME_SPAWN_FAILED)
        fprintf(f, "  \"stage\": \"%s\",\n  \"error\": \"%s\",\n", pk_stage_name(oc->stage),
                pk_errname(oc->error));
    else if (oc->signo != 0)
        fprintf(f, "  \"signal\": %d,\n  \"core_dumped\": %s,\n", oc->signo,
                oc->core_dumped ? "true" : "false");
    else
        fprintf(f, "  \"exit_code\": %d,\n", oc->code);
    if (rep->run_rc != 0)
        fprintf(f, "  \"run_error\": \"%s\",\n", pk_errname(rep->run_rc));
    fprintf(f, "  \"pkrun_exit_status\": %d,\n", rep->status);
    fprintf(f, "  \"wall_ms\": %.3f,\n  \"user_ms\": %.3f,\n  \"sys_ms\": %.3f,\n",
            (double)oc->wall_ns / 1e6, (double)oc->user_us / 1e3, (double)oc->sys_us / 1e3);
}

int pkr_json(const struct pkr_report *rep, char **text, size_t *len)
{
    FILE *f = open_memstream(text, len);
    if (f == NULL)
        return -ENOMEM;
    const struct pkr_options *o = rep->o;
    const pk_result *r = rep->res;
    bool downgraded =
        r->containment != PK_CONTAIN_CGROUP && o->containment == PK_CONTAIN_AUTO && !o->foreground;
    fprintf(f, "{\n  \"schema\": \"pkrun\",\n  \"schema_version\": 2,\n  \"argv\": [");
    for (char **a = o->argv; *a != NULL; a++) {
        json_string(f, *a, strlen(*a));
        if (a[1] != NULL)
            fputs(", ", f);
    }
    fprintf(f, "],\n  \"spawn_mechanism\": \"%s\",\n", pk_mechanism_name(pk_spawn_mechanism()));
    fprintf(f, "  \"containment\": \"%s\",\n  \"containment_requested\": \"%s\",\n",
            pk_containment_name(r->containment), pk_containment_name(o->containment));
    fprintf(f, "  \"containment_downgraded\": %s,\n", downgraded ? "true" : "false");
    json_outcome(f, rep);
    fputs("  \"streams\": {\n", f);
    json_stream(f, "stdout", rep->relay, 1, o->keep);
    fputs(",\n", f);
    json_stream(f, "stderr", rep->relay, 2, o->keep);
    fputs("\n  }\n}\n", f);
    return fclose(f) == 0 ? 0 : -ENOMEM;
}
