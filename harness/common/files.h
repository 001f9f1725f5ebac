/*
 * files — every file the harness reads or writes goes through here, so "nothing lost" and
 * "nothing hangs" hold in one place: data is fsync'ed before it is renamed into place, a rename
 * replaces only a regular file (through a symlink, its target: the link stays a link), a failure
 * leaves the old file as it was, and a FIFO, a pipe or a terminal is never waited on for longer
 * than pkb_fifo_wait_ms (PKBENCH_FIFO_WAIT): no reader to open it, no writer, no byte for that
 * long is an error (-ETIMEDOUT), never a hang.
 *
 * Every function returns 0 or a negative errno.
 */
#ifndef PKB_COMMON_FILES_H
#define PKB_COMMON_FILES_H

/* The characters that end a directory in a path: '/' (the Windows build adds '\\', see
 * compat/include/pkb_compat.h). */
#ifndef PKB_DIR_SEPARATORS
#define PKB_DIR_SEPARATORS "/"
#endif

#include "common/buf.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Writes data[0..len) to dir/name (created mode 0644, truncated, fsync'ed). */
int pkb_write_file(const char *dir, const char *name, const char *data, size_t len);

/* Writes buffer b as dir/<stem><suffix>; -ENOMEM when b failed to build. */
int pkb_write_buf(const char *dir, const char *stem, const char *suffix, pkb_buf *b);

/* mkdir -p: every missing component of `dir`, mode 0755; -ENOTDIR when it is not a directory. */
int pkb_make_dirs(const char *dir);

/* Removes `path` and everything below it (no symlink is followed). */
int pkb_remove_tree(const char *path);

/* fsyncs stage/name and renames it to out_dir/name. */
int pkb_commit_file(const char *stage, const char *out_dir, const char *name);

/* fsyncs a directory, so the renames into it are durable (best effort: errors ignored). */
void pkb_sync_dir(const char *dir);

/* Writes text[0..len) to `path`: atomically (a temporary file in the same directory, fsync'ed,
 * renamed over it) when path does not exist or is a regular file, and through a symlink (even a
 * dangling one) onto its target, in the target's directory, so the link stays a link; in place
 * when it is something else a user can name as an output (/dev/stdout, a FIFO, a terminal), a
 * FIFO waited on for a reader and for each chunk at most pkb_fifo_wait_ms (-ETIMEDOUT), a reader
 * that goes away being -EPIPE, not a signal; -EISDIR for a directory. */
int pkb_write_text_atomic(const char *path, const char *text, size_t len);

/* Whether pkb_write_text_atomic could write `path` now, checked before any work is done: an
 * existing regular file (the directory of its final target must take the temporary file too), a
 * new path in a writable directory, or something else writable in place. 0, or -EISDIR, -ENOENT,
 * -EACCES, ... */
int pkb_check_writable(const char *path);

/* What `path` is, following symlinks, when it is neither a regular file nor missing: "a FIFO",
 * "a character device", "a socket", "a block device", "a directory"; NULL for a regular file or
 * a path that does not exist yet (what an atomic rename may replace). */
const char *pkb_path_kind(const char *path);

/* `path` with every symlink followed, into out: the file a write through it reaches, which need
 * not exist (a dangling link's target). -ELOOP past 40 links, -ENAMETOOLONG. */
int pkb_final_path(const char *path, char *out, size_t cap);

/* Reads all of `path` into a malloc'd buffer (*data, NUL-terminated, *len bytes), never more than
 * `limit` bytes: a regular file larger than that is refused from its size (-EFBIG) before
 * anything is read, anything else once a byte past the limit has arrived. A FIFO, a pipe or a
 * terminal is read without ever blocking: no writer and no byte for pkb_fifo_wait_ms is
 * -ETIMEDOUT. Such an input can be read only once, so what it gave is kept for the rest of the
 * process: a second read of the same path returns the same bytes. */
int pkb_read_file(const char *path, size_t limit, char **data, size_t *len);

/* How long a FIFO's other end is waited for, in milliseconds: PKBENCH_FIFO_WAIT seconds (0 to
 * 3600; a bad value is named once on stderr and ignored), by default PKB_FIFO_WAIT_DEFAULT_S. */
#define PKB_FIFO_WAIT_DEFAULT_S 10
int pkb_fifo_wait_ms(void);

/* `doc` as JSON text indented by `indent` (keys in insertion order, reals with 10 significant
 * digits), ending in a newline; NULL when out of memory. The caller frees it. */
char *pkb_json_text(const json_t *doc, int indent);

/* Writes `doc` as indented JSON (keys in insertion order, reals with 10 significant digits) to
 * `path`, followed by a newline, as pkb_write_text_atomic: a reader sees the old file or the new
 * one, never a mix. */
int pkb_write_json_atomic(const json_t *doc, const char *path);

/* ---- the platform's part (files.posix.c, files.windows.c), for files.c ------------------------
 */

/* What a file of this st_mode is that is not a regular file: "a directory", ... (pkb_path_kind). */
const char *pkb__kind_of(unsigned mode);
/* Opens `path` to read, without blocking on a FIFO: a descriptor, or a negative errno. */
int pkb__open_read(const char *path);
/* Reads up to cap bytes; for a non-regular input, waits at most wait_ms for a byte or the end. */
long pkb__read_some(int fd, bool regular, char *buf, size_t cap, int wait_ms);
/* Opens a path that is not a regular file to write in place, waiting at most wait_ms for a FIFO's
 * reader. */
int pkb__open_in_place(const char *path, int wait_ms, int *fd);
/* Writes all of data to an in-place output, at most wait_ms without progress. */
int pkb__write_in_place(int fd, const char *data, size_t len, int wait_ms);

#endif /* PKB_COMMON_FILES_H */
