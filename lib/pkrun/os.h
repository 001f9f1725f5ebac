/*
 * What pkrun needs from the platform, one file each: os.posix.c (writev, sigaction, rename) and
 * os.windows.c (WriteFile, a console control handler, MoveFileEx).
 */
#ifndef PKRUN_OS_H
#define PKRUN_OS_H

#include "processkit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The signal number that means "kill" to the library on every platform. */
#define PKRUN_SIGKILL 9

/* Before anything else: binary standard streams where text mode would translate bytes. */
void pkrun_os_init(void);
/* Writes [p, p+n) and, when `newline`, a newline, to our stdout (stream 1) or stderr (2), all of
 * it; a write error drops the rest (the child keeps running; its output has nowhere to go). */
void pkrun_write(int stream, const char *p, size_t n, bool newline);
/* Routes pkrun's interrupt, terminate and hang-up signals (Windows: console Ctrl+C, Ctrl+Break,
 * close) to pk_cancel_trigger_signal(cancel, ...). 0 or a negative errno. */
int pkrun_forward_signals(pk_cancel *cancel);
/* A temporary file next to `path` for an atomic write: its name goes into tmp. */
FILE *pkrun_create_temp(const char *path, char *tmp, size_t cap);
/* Renames tmp over path (replacing it). 0 or -1 with errno set. */
int pkrun_replace(const char *tmp, const char *path);

#endif /* PKRUN_OS_H */
