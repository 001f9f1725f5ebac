/*
 * files — every file the harness writes goes through here, so "nothing lost" holds in one place:
 * data is fsync'ed before it is renamed into place, a rename replaces only a regular file (never
 * a device, a FIFO or a symlink's target type), and a failure leaves the old file as it was.
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
 * renamed over it) when path does not exist or is a regular file; in place when it is something
 * else a user can name as an output (/dev/stdout, a FIFO, a terminal); -EISDIR for a directory. */
int pkb_write_text_atomic(const char *path, const char *text, size_t len);

/* Whether pkb_write_text_atomic could write `path` now, checked before any work is done: an
 * existing regular file (its directory must take the temporary file too), a new path in a writable
 * directory, or something else writable in place. 0, or -EISDIR, -ENOENT, -EACCES, ... */
int pkb_check_writable(const char *path);

/* `doc` as JSON text indented by `indent` (keys in insertion order, reals with 10 significant
 * digits), ending in a newline; NULL when out of memory. The caller frees it. */
char *pkb_json_text(const json_t *doc, int indent);

/* Writes `doc` as indented JSON (keys in insertion order, reals with 10 significant digits) to
 * `path`, followed by a newline, as pkb_write_text_atomic: a reader sees the old file or the new
 * one, never a mix. */
int pkb_write_json_atomic(const json_t *doc, const char *path);

#endif /* PKB_COMMON_FILES_H */
