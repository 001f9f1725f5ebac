/*
 * The test framework's public face: TEST_IMPL, assertions that print both operands, skips that
 * say why, and the helper-program conventions. See runner.c for how tests are isolated.
 */
#ifndef PK_TEST_H
#define PK_TEST_H

#include "processkit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEST_IMPL(name)                                                                            \
    void pk_test_##name(void);                                                                     \
    void pk_test_##name(void)

/* Exit status of a test process that skipped (automake's convention). */
#define PK_TEST_SKIP_STATUS 77

/* Whether the tests run under AddressSanitizer: its shadow memory and interceptors change what a
 * few tests can measure or check (resident memory, system call counts, leaks). */
#if defined(__SANITIZE_ADDRESS__)
#define PK_TEST_UNDER_ASAN true
#else
#define PK_TEST_UNDER_ASAN false
#endif

_Noreturn void pk_test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether the machine is quiet now (gate "quiet"): the median number of processes running besides
 * this one, over half a second, below the online CPUs; that median in *others (may be NULL). */
bool pk_test_machine_quiet(double *others);
/* Ends the test as skipped because this machine or this build lacks what it needs. `gate` names
 * that thing, so that CI can tell an excuse from a fact:
 *
 *   "root"           euid 0
 *   "cgroup"         a cgroup v2 directory this process may create leaves in
 *   "btf"            the kernel's BTF (/sys/kernel/btf/vmlinux)
 *   "package:NAME"   the Debian package NAME (one ./x installs: see its PACKAGES)
 *   "quiet"          a machine running fewer other processes than it has CPUs, now
 *                    (pk_test_machine_quiet; for a test that demonstrates something on real
 *                    measurements, not on prepared data)
 *   "build"          a property of this build, not of the machine (an option left off, an
 *                    architecture without a helper, a sanitizer that is not there)
 *
 * With CI=true the runner checks the gate itself, independently of the test, and fails a test
 * that skipped although the machine satisfies its gate (a "build" gate is never the machine's).
 * The reason is printed and shown by the runner. */
_Noreturn void pk_test_skip_gate(const char *gate, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A skip that names no gate: shown as skipped, and with CI=true counted as a failure, since CI
 * cannot tell whether the machine lacks what the test needed. Prefer pk_test_skip_gate. */
_Noreturn void pk_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Absolute path of this test binary, which doubles as every helper program. */
const char *pk_test_self(void);
/* A fresh temporary directory for this test (removed by the runner's process group teardown is
 * not guaranteed; tests remove what they create). */
const char *pk_test_tmpdir(void);

/* argv for a helper: HELPER("emit-lines", "100") -> { self, "--helper", "emit-lines", "100" } */
#define HELPER(...) ((const char *const[]){pk_test_self(), "--helper", __VA_ARGS__, NULL})

#define ASSERT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            pk_test_fail(__FILE__, __LINE__, "assertion failed: %s", #cond);                       \
    } while (0)

#define PK__ASSERT_CMP(a, op, b)                                                                   \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (!(a_ op b_))                                                                           \
            pk_test_fail(__FILE__, __LINE__, "%s %s %s: %lld vs %lld", #a, #op, #b, a_, b_);       \
    } while (0)

#define ASSERT_EQ(a, b) PK__ASSERT_CMP(a, ==, b)
#define ASSERT_NE(a, b) PK__ASSERT_CMP(a, !=, b)
#define ASSERT_LT(a, b) PK__ASSERT_CMP(a, <, b)
#define ASSERT_LE(a, b) PK__ASSERT_CMP(a, <=, b)
#define ASSERT_GT(a, b) PK__ASSERT_CMP(a, >, b)
#define ASSERT_GE(a, b) PK__ASSERT_CMP(a, >=, b)

/* An expression returning 0 or a negative error; on error, prints its name. */
#define ASSERT_OK(expr)                                                                            \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0)                                                                              \
            pk_test_fail(__FILE__, __LINE__, "%s returned %d (%s: %s)", #expr, rc_,                \
                         pk_errname(rc_), pk_strerror(rc_));                                       \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                                                        \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                       \
            pk_test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" vs \"%s\"", #a, #b,                 \
                         a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                  \
    } while (0)

/* Asserts a finished run exited with `code`, printing its outcome and stderr otherwise. */
#define ASSERT_EXITED(res, code_)                                                                  \
    do {                                                                                           \
        const pk_result *r_ = &(res);                                                              \
        if (r_->outcome.kind != PK_OUTCOME_EXITED || r_->outcome.code != (code_))                  \
            pk_test_fail(__FILE__, __LINE__,                                                       \
                         "expected exit %d, got %s code=%d signo=%d "                              \
                         "stage=%s error=%s stderr=%.200s",                                        \
                         (code_), pk_outcome_kind_name(r_->outcome.kind), r_->outcome.code,        \
                         r_->outcome.signo, pk_stage_name(r_->outcome.stage),                      \
                         pk_errname(r_->outcome.error), r_->err.data ? r_->err.data : "");         \
    } while (0)

/* System views (util.c), independent of the library's own code. */
bool pk_test_pid_alive(int pid);
bool pk_test_wait_dead(int pid, int timeout_ms);
const char *pk_test_cgroup_dir(void);         /* this process's cgroup v2 directory, or NULL */
int pk_test_count_leaves(const char *prefix); /* entries in it starting with prefix, -1: none */
long pk_test_status_kib(const char *field);   /* "VmRSS", "VmHWM" from /proc/self/status */
void pk_test_need_cgroup(void);               /* skips the test, saying why, without cgroup v2 */
void pk_test_need_root(void);                 /* skips the test (gate "root") unless euid is 0 */
/* Skips the test (gate "package:python3-jsonschema") unless /usr/bin/python3 can import
 * jsonschema: called before a test measures anything, so a missing validator never drops the
 * checks that come after the measurement. */
void pk_test_need_jsonschema(void);
int64_t pk_test_now_ms(void);
/* A whole file, NUL-terminated, its length in *len (len may be NULL); fails the test, naming the
 * file, when it cannot be opened. The caller frees it. */
char *pk_test_read_file(const char *path, size_t *len);
/* Writes exactly len bytes to path (created or truncated); fails the test on any error. */
void pk_test_write_file(const char *path, const char *data, size_t len);
/* Runs argv to completion (60 s at most), its stdout and stderr merged into out (NULL: dropped);
 * its exit code, or -1 when it could not run or did not exit. */
int pk_test_run_merged(const char *const *argv, char *out, size_t cap);
/* Validates a pkbench results file against harness/results/schema.json (python3-jsonschema);
 * fails the test when it does not validate, or when the validator is missing (tests call
 * pk_test_need_jsonschema before they measure, so that a missing validator skips the test up
 * front instead of dropping the checks after it). Returns true. */
bool pk_test_validate_results(const char *path);

/* Asserts that `text` (an aligned plain-text table, as pkbench prints one) has a row whose first
 * cell is want[0] and whose cells — runs of text separated by two or more spaces — are exactly
 * want[0..] (NULL-terminated); fails with the row, or the text, otherwise. */
void pk_test_expect_row(const char *text, const char *const *want, const char *file, int line);
#define EXPECT_ROW(text, ...)                                                                      \
    pk_test_expect_row((text), (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)

/* Windows (runner.windows.c): the handles this process has open, counted by probing. */
size_t pk_test_handles(void);

/* Helper programs: `pk_tests --helper NAME ARGS...` runs one of these instead of a test. */
int pk_test_run_helper(int argc, char **argv);

#endif /* PK_TEST_H */
