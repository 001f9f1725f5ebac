/*
 * cli — what `pkbench compare` (cli.c) and `pkbench check` (check.c) share on the command line:
 * the options of a comparison, which both take, and the warnings and the status line a
 * comparison is followed by on stderr. The helpers every pkbench command shares are
 * common/cli.h's.
 */
#ifndef PKB_REGRESS_CLI_H
#define PKB_REGRESS_CLI_H

#include "regress/compare.h"

#include <getopt.h>
#include <stddef.h>

/* Every option of both commands but those check passes on to its runs (common/cli.h's); each
 * command accepts the ones its table lists. */
enum {
    OPT_ALPHA = 1000,
    OPT_THRESHOLD,
    OPT_CV_LIMIT,
    OPT_FILTER,
    OPT_ENV_KEYS,
    OPT_FORMAT,
    OPT_STRICT_ENV,
    OPT_OUT,
    OPT_BASELINE_CONTENDER,
    OPT_BASELINE,
    OPT_NO_DRIFT,
    OPT_DRIFT_LIMIT,
    OPT_HELP = 'h',
};

/* The options of a comparison, first in both commands' tables. */
#define PKB_COMPARE_OPTIONS                                                                        \
    {"alpha", required_argument, NULL, OPT_ALPHA},                                                 \
        {"threshold", required_argument, NULL, OPT_THRESHOLD},                                     \
        {"cv-limit", required_argument, NULL, OPT_CV_LIMIT},                                       \
        {"filter", required_argument, NULL, OPT_FILTER},                                           \
        {"env-keys", required_argument, NULL, OPT_ENV_KEYS},                                       \
        {"format", required_argument, NULL, OPT_FORMAT},                                           \
        {"strict-env", no_argument, NULL, OPT_STRICT_ENV},                                         \
        {"out", required_argument, NULL, OPT_OUT},                                                 \
        {"no-drift-correction", no_argument, NULL, OPT_NO_DRIFT},                                  \
        {"drift-limit", required_argument, NULL, OPT_DRIFT_LIMIT},                                 \
    {                                                                                              \
        "help", no_argument, NULL, OPT_HELP                                                        \
    }

/* One option of a comparison into o, *format or *out (and compare's --baseline-contender, which
 * only its table lists). Returns 1 when `opt` was one of them, 0 when it was not, -1 after
 * printing a usage error (with `usage`; the error names no command, as three commands share it). */
int pkb__compare_option(int opt,
                        const char *v,
                        pkb_compare_options *o,
                        pkb_compare_format *format,
                        const char **out,
                        const char *usage);

/* On stderr, before the comparison is shown: the environment keys and run settings that differ,
 * and a base file without a noise floor (`how`: what else would tell a shift of the machine). */
void pkb__compare_warn(const pkb_compare *c, const char *how);

/* On stderr, after it: the comparison's summary line, when its status is not 0. */
void pkb__compare_say_status(const pkb_compare *c);

#endif /* PKB_REGRESS_CLI_H */
