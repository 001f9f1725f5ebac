/*
 * What a pk_command asks for, checked and read one way on every platform (command.c): the
 * POSIX and Windows starts differ in how they make a child, not in which commands they accept or
 * what a stream's default means.
 */
#ifndef PK_COMMAND_H
#define PK_COMMAND_H

#include "processkit.h"

/* Rejects a malformed command before anything exists, so that this failure has nothing to undo.
 * Returns the program to start (cmd->program, else argv[0]), or NULL when the command is
 * invalid. */
const char *pk__command_program(const pk_command *cmd);

/* What a stream's kind means once the defaults are applied: DEFAULT is NULL for stdin and
 * CAPTURE for the outputs; BYTES with nothing to feed is NULL (the child sees EOF at once either
 * way). */
pk_stdio_kind pk__stdio_kind(const pk_stdio *s, int stream);

/* Records a failed start in *failure (when not NULL): spawn failed at `stage` with `err`. */
void pk__set_failure(pk_result *failure, pk_stage stage, int err);

#endif /* PK_COMMAND_H */
