/*
 * The POSIX side of pkrun's command line (args.c holds the rest): signal names and numbers for
 * -s, the containments there are (cgroup, process group), the combination --foreground cannot
 * take, and the lines of --help that speak of signals, process groups and cgroups.
 */
#define _GNU_SOURCE
#include "args.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const int64_t pkr_kill_after_default_ns = 0; /* none, as timeout */

const struct pkr_choice pkr_containment_choices[] = {{"auto", PK_CONTAIN_AUTO},
                                                     {"cgroup", PK_CONTAIN_CGROUP},
                                                     {"pgroup", PK_CONTAIN_PGROUP},
                                                     {NULL, 0}};

const struct pkr_help pkr_help = {
    .options =
        "[-s SIG] [-k S] [--preserve-status] [--foreground] [-v] [--timeout S]\n"
        "         [--idle-timeout S] [--max-bytes N] [--max-lines N] [--keep head|tail|fail]\n"
        "         [--containment auto|cgroup|pgroup] [--json FILE|-] [--pdeathsig]\n",
    .about =
        "Runs COMMAND in a private group (a cgroup v2 leaf when the host delegates one, else a\n"
        "process group), so that nothing it starts outlives it, and ends the whole tree when\n"
        "DURATION passes. A drop-in for timeout(1): its command line, signals and exit statuses.\n"
        "COMMAND leads a process group of its own (unless --foreground), so its `kill 0` cannot\n"
        "reach pkrun's caller, and inherits every descriptor pkrun was given (3 and up too).\n"
        "Its bytes never pass through pkrun unless --idle-timeout, --keep fail, or --json with a\n"
        "capture option needs to see them; then pkrun relays them as they come, unchanged. When\n"
        "a limit or a signal has ended COMMAND, what a stalled reader has not taken is dropped\n"
        "(pkrun says how many bytes): pkrun exits on time, as timeout does.\n",
    .signal =
        "  -s, --signal SIG    the signal sent at the limit: a name (TERM, SIGINT, int) or a\n"
        "                      number; default TERM; 0 sends nothing\n",
    .kill_after =
        "  -k, --kill-after S  SIGKILL the tree S after the first signal, a limit's or one pkrun\n"
        "                      forwards (default: never; 0 too, as timeout). --grace is the same\n",
    .foreground =
        "  --foreground        COMMAND stays in pkrun's process group, as with timeout: it may\n"
        "                      read the terminal and gets its signals itself; without a cgroup,\n"
        "                      only COMMAND itself is then ended, not its children\n",
    .containment =
        "  --containment M     auto (default), cgroup (fail when unavailable), pgroup\n"
        "  --pdeathsig         SIGKILL the command if pkrun dies (always on; kept for old lines)\n",
    .verbose =
        "  -v, --verbose       say which mechanisms are in use, each signal sent, how it ended\n",
    .signals =
        "Signals: INT, TERM, HUP, QUIT, USR1, USR2, PIPE and the other terminating signals sent\n"
        "to pkrun go to the whole tree, then SIGKILL after -k; ALRM means the time is up now.\n"
        "INT, QUIT, HUP, TERM, ALRM and -s's signal are caught even when ignored at start, as\n"
        "timeout does (so COMMAND gets them at their default); any other signal ignored at start\n"
        "stays ignored. One from the terminal (Ctrl-C) that already reached COMMAND is not sent\n"
        "again. The limit runs on the clock of the start: stopping pkrun does not move it. As\n"
        "the first process of a PID namespace (a container's entrypoint), pkrun also reaps the\n"
        "orphans the kernel hands it.\n",
    .exit_status =
        "Exit status: COMMAND's own; 124 a limit ended it (137 when SIGKILL was needed;\n"
        "COMMAND's with --preserve-status); 125 pkrun failed, bad arguments, or the --json\n"
        "outcome or COMMAND's output could not be written; 126 COMMAND found but not\n"
        "executable; 127 not found. When COMMAND dies of a signal, pkrun ends by the same\n"
        "signal (a shell shows 128+N).\n",
};

/* Signal names glibc knows but abbreviates differently, and the name of 0. */
static const struct {
    const char *name;
    int signo;
} signal_aliases[] = {{"EXIT", 0}, {"IOT", SIGABRT}, {"CLD", SIGCHLD}, {"POLL", SIGIO}};

const char *pkr_signal_name(int signo, char buf[16])
{
    const char *abbrev = signo > 0 && signo < SIGRTMIN ? sigabbrev_np(signo) : NULL;
    if (signo == 0)
        snprintf(buf, 16, "EXIT");
    else if (abbrev != NULL)
        snprintf(buf, 16, "%s", abbrev);
    else if (signo >= SIGRTMIN && signo <= SIGRTMAX)
        snprintf(buf, 16, "RTMIN+%d", signo - SIGRTMIN);
    else
        snprintf(buf, 16, "%d", signo);
    return buf;
}

/* -s's value: a number, or a name in any case with or without "SIG" (RTMIN+N, RTMAX-N too).
 * Returns the signal, or -1. */
static int parse_signal(const char *v)
{
    if (v[0] >= '0' && v[0] <= '9') {
        char *end;
        long n = strtol(v, &end, 10);
        return *end == '\0' && n <= SIGRTMAX ? (int)n : -1;
    }
    if (strncasecmp(v, "SIG", 3) == 0)
        v += 3;
    for (size_t i = 0; i < sizeof signal_aliases / sizeof signal_aliases[0]; i++)
        if (strcasecmp(v, signal_aliases[i].name) == 0)
            return signal_aliases[i].signo;
    for (int s = 1; s < SIGRTMIN; s++) {
        const char *name = sigabbrev_np(s);
        if (name != NULL && strcasecmp(v, name) == 0)
            return s;
    }
    int base = strncasecmp(v, "RTMIN", 5) == 0   ? SIGRTMIN
               : strncasecmp(v, "RTMAX", 5) == 0 ? SIGRTMAX
                                                 : 0;
    if (base == 0)
        return -1;
    if (v[5] == '\0')
        return base;
    char *end;
    long off = strtol(v + 5, &end, 10);
    int s = (int)(base + off);
    bool sign_ok = (base == SIGRTMIN && v[5] == '+') || (base == SIGRTMAX && v[5] == '-');
    return sign_ok && *end == '\0' && s >= SIGRTMIN && s <= SIGRTMAX ? s : -1;
}

int pkr_signal_arg(const char *v)
{
    int signo = parse_signal(v);
    if (signo < 0)
        pkr_bad_arg("--signal: '%s' is not a signal (a name such as TERM, SIGINT or RTMIN+1, or "
                    "a number)",
                    v);
    return signo;
}

void pkr_check_options(const struct pkr_options *o)
{
    if (o->foreground && o->containment == PK_CONTAIN_PGROUP)
        pkr_bad_arg("--foreground keeps COMMAND in pkrun's process group: it cannot be combined "
                    "with --containment pgroup");
}
