/*
 * The platform-neutral reading of a pk_command (command.h): validation, the effective kind of
 * each stream, how a failed start is recorded, and releasing a result. Kept apart so that both
 * starts (process.posix.c, spawn.windows.c) accept exactly the same commands.
 */
#include "command.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The largest signal number a pdeathsig may name: Linux's real-time signals end at 64. */
#define PK__MAX_SIGNO 64

static bool valid_stdio(const pk_stdio *s, int stream)
{
    switch (s->kind) {
    case PK_STDIO_DEFAULT:
    case PK_STDIO_NULL:
    case PK_STDIO_INHERIT:
        return true;
    case PK_STDIO_CAPTURE:
        return stream != 0;
    case PK_STDIO_BYTES:
        return stream == 0 && (s->data != NULL || s->len == 0);
    case PK_STDIO_FILE:
        return s->path != NULL && s->path[0] != '\0';
    case PK_STDIO_FD:
        return s->fd >= 0;
    case PK_STDIO_MERGE:
        return stream == 2;
    }
    return false;
}

const char *pk__command_program(const pk_command *cmd)
{
    if (cmd == NULL)
        return NULL;
    const char *program = cmd->program != NULL ? cmd->program : (cmd->argv ? cmd->argv[0] : NULL);
    if (program == NULL || program[0] == '\0' || !valid_stdio(&cmd->in, 0) ||
        !valid_stdio(&cmd->out, 1) || !valid_stdio(&cmd->err, 2) || cmd->timeout_ms < 0 ||
        cmd->idle_timeout_ms < 0 || cmd->grace_ms < 0 ||
        (unsigned)cmd->containment > PK_CONTAIN_JOB || cmd->pdeathsig < 0 ||
        cmd->pdeathsig > PK__MAX_SIGNO)
        return NULL;
    return program;
}

pk_stdio_kind pk__stdio_kind(const pk_stdio *s, int stream)
{
    pk_stdio_kind kind = s->kind;
    if (kind == PK_STDIO_DEFAULT)
        kind = stream == 0 ? PK_STDIO_NULL : PK_STDIO_CAPTURE;
    if (kind == PK_STDIO_BYTES && s->len == 0)
        kind = PK_STDIO_NULL;
    return kind;
}

void pk__set_failure(pk_result *failure, pk_stage stage, int err)
{
    if (failure == NULL)
        return;
    failure->outcome.kind = PK_OUTCOME_SPAWN_FAILED;
    failure->outcome.stage = stage;
    failure->outcome.error = err;
}

void pk_result_release(pk_result *res)
{
    if (res == NULL)
        return;
    free(res->out.data);
    free(res->err.data);
    free(res->searched);
    memset(res, 0, sizeof *res);
}
