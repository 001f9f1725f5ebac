/*
 * cli — the command-line pieces pkbench's commands share (cli.h), written once so that every
 * command names a bad option, a missing value and an unwritable output the same way.
 */
#define _GNU_SOURCE
#include "common/cli.h"

#include "common/files.h"
#include "common/parse.h"

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

bool pkb_cli_settle(const char *v, double *seconds)
{
    return pkb_parse_number(v, false, seconds) && *seconds >= 0 && *seconds <= 60;
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
