/*
 * cli — the command-line pieces pkbench's commands share (cli.h), written once so that every
 * command names a bad option, a missing value and an unwritable output the same way.
 */
#define _GNU_SOURCE
#include "common/cli.h"

#include "common/files.h"
#include "common/parse.h"
#include "common/stats.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int pkb_cli_next_option(int argc, char **args, const struct option *options)
{
    opterr = 0;
    return getopt_long(argc, args, ":h", options, NULL);
}

int pkb_cli_usage_error(const char *usage, const char *fmt, ...)
{
    fputs("pkbench: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fputs(usage, stderr);
    return 1;
}

int pkb_cli_getopt_failed(const char *usage, const char *cmd, int opt, char **args)
{
    const char *arg = args[optind - 1];
    if (opt == ':')
        return pkb_cli_usage_error(usage, "%s: %s needs a value", cmd, arg);
    return pkb_cli_usage_error(usage, "%s: unknown option '%s'", cmd, arg);
}

int pkb_cli_run_option(int opt, const char *v, pkb_cli_run *o, const char *cmd, const char *usage)
{
    switch (opt) {
    case PKB_OPT_SUITE:
        if (v[0] == '\0')
            return -pkb_cli_usage_error(usage, "%s: --suite needs a value", cmd);
        o->suite = v;
        return 1;
    case PKB_OPT_PROFILE:
        if (strcmp(v, "quick") != 0 && strcmp(v, "full") != 0)
            return -pkb_cli_usage_error(usage, "%s: --profile needs full or quick, got '%s'", cmd,
                                        v);
        o->profile = v;
        return 1;
    case PKB_OPT_NO_PRIME:
        o->prime = false;
        return 1;
    case PKB_OPT_SEQUENTIAL:
        o->sequential = true;
        return 1;
    case PKB_OPT_SETTLE:
        if (!pkb_parse_number(v, false, &o->settle_s) || !(o->settle_s >= 0 && o->settle_s <= 60))
            return -pkb_cli_usage_error(usage, "%s: --settle needs seconds from 0 to 60, got '%s'",
                                        cmd, v);
        o->settle = v;
        return 1;
    case PKB_OPT_REPETITIONS:
        /* Fewer than the verdicts' minimum could decide nothing. */
        if (!pkb_parse_count(v, PKS_MIN_SAMPLES, PKB_MAX_REPETITIONS, &o->nrepetitions))
            return -pkb_cli_usage_error(usage,
                                        "%s: --repetitions needs a count from %d to %d (fewer "
                                        "than %d samples decide nothing), got '%s'",
                                        cmd, PKS_MIN_SAMPLES, PKB_MAX_REPETITIONS, PKS_MIN_SAMPLES,
                                        v);
        o->repetitions = v;
        return 1;
    }
    return 0;
}

int pkb_cli_results_path(const char *name, char *path, size_t cap)
{
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    if (mkdir("results", 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "pkbench: cannot create results/: %s\n", strerror(errno));
        return 1;
    }
    snprintf(path, cap, "results/%s-%s.json", name, stamp);
    return 0;
}

int pkb_cli_check_writable(const char *path)
{
    int rc = pkb_check_writable(path);
    if (rc != 0)
        fprintf(stderr, "pkbench: cannot write %s: %s\n", path, strerror(-rc));
    return rc != 0;
}

int pkb_cli_check_results_file(const char *cmd, const char *opt, const char *path)
{
    const char *kind = pkb_path_kind(path);
    if (kind != NULL && strcmp(kind, "a directory") != 0) {
        fprintf(stderr,
                "pkbench: %s: %s %s is %s: a results file is rewritten after every finished series "
                "and read back at the end, so it must be a regular file or a new path\n",
                cmd, opt, path, kind);
        return 1;
    }
    return pkb_cli_check_writable(path);
}

int pkb_cli_put_stdout(const pkb_buf *b)
{
    if (b->failed) {
        fprintf(stderr, "pkbench: out of memory\n");
        return 1;
    }
    if ((b->len > 0 && fwrite(b->data, 1, b->len, stdout) != b->len) || fflush(stdout) != 0) {
        fprintf(stderr, "pkbench: cannot write to stdout: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

int pkb_cli_failed(int rc, const char *err)
{
    fprintf(stderr, "pkbench: %s\n", err[0] ? err : strerror(-rc));
    return 1;
}

void pkb_cli_on_stop(void (*handler)(int), int flags)
{
    struct sigaction sa = {.sa_handler = handler, .sa_flags = flags};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
