/*
 * What pkrun's test files share (test_pkrun_helpers.c): a byte pattern whose every byte is known
 * from its position (so a stream can be checked exactly, not by length), two helper programs,
 * running pkrun on a terminal of its own, and small process views.
 */
#ifndef PK_PKRUN_TEST_H
#define PK_PKRUN_TEST_H

#include "test.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Byte `pos` of the pattern with lines of `line_len` bytes (the last of each a newline), or with
 * no newline at all when line_len is 0. Never a newline otherwise. */
char pk_pattern_byte(uint64_t pos, uint64_t line_len);
/* Fills buf with the pattern from `pos` on. */
void pk_pattern_fill(char *buf, size_t len, uint64_t pos, uint64_t line_len);

/* Checks a stream against the pattern, chunk by chunk. */
struct pk_pattern_check {
    uint64_t line_len;
    uint64_t seen;     /* bytes checked */
    int64_t first_bad; /* offset of the first byte that differs, -1 while none */
};
void pk_pattern_check(struct pk_pattern_check *c, const char *data, size_t len);

/* Reads fd (non-blocking or not) to end-of-file into the check; returns bytes read. Fails the test
 * after timeout_ms without progress. */
uint64_t pk_pattern_read_all(int fd, struct pk_pattern_check *c, int timeout_ms);

/* Helpers for pk_tests --helper (called from helpers.c): -1 when `argv[0]` is not one of them.
 *   pattern BYTES LINE_LEN  the pattern, 64 KiB per write
 *   count-sigint MS         counts SIGINTs; says "ready", and MS after the first one "ints N" */
int pk_test_pkrun_helper(int argc, char **argv);

/* Starts argv in a new session whose controlling terminal is a fresh pty, with the pty as its
 * stdin, stdout and stderr; *master receives the other side. Returns the pid (a child of the
 * test: wait for it with waitpid). */
pid_t pk_run_on_pty(const char *const *argv, int *master);
/* Reads the pty until `want` appears or timeout_ms passes; returns whether it appeared. What was
 * read is kept in buf (NUL-terminated). */
bool pk_pty_wait_for(int master, const char *want, char *buf, size_t cap, int timeout_ms);

/* SIGKILL to every process of session `sid` (what a failed terminal test leaves behind: pkrun
 * and its command in groups of their own, no longer children of the test). */
void pk_kill_session(pid_t sid);

/* The SigIgn mask of a process, from /proc/<pid>/status; 0 when unreadable. */
uint64_t pk_sigign_of(int pid);

#endif /* PK_PKRUN_TEST_H */
