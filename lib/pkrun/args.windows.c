/*
 * The Windows side of pkrun's command line (args.c holds the rest). Windows has no signals to
 * choose and no process group for COMMAND to share, so -s and --foreground are refused by name
 * (125) rather than ignored; --containment offers what Windows has, a Job Object; and the lines
 * of --help say what a limit and Ctrl+C do there.
 */
#include "args.h"

#include <stddef.h>

/* A limit's Ctrl+Break reaches only a command that shares pkrun's console: the job is terminated
 * 2 s later unless -k says otherwise. */
const int64_t pkr_kill_after_default_ns = 2000000000;

const struct pkr_choice pkr_containment_choices[] = {
    {"auto", PK_CONTAIN_AUTO}, {"job", PK_CONTAIN_JOB}, {NULL, 0}};

const struct pkr_help pkr_help = {
    .options = "[-k S] [--preserve-status] [-v] [--timeout S] [--idle-timeout S]\n"
               "         [--max-bytes N] [--max-lines N] [--keep head|tail|fail]\n"
               "         [--containment auto|job] [--json FILE|-] [--pdeathsig]\n",
    .about =
        "Runs COMMAND in a Job Object, so that nothing it starts outlives it, and ends the\n"
        "whole tree when DURATION passes: timeout(1)'s command line and exit statuses.\n"
        "COMMAND inherits pkrun's stdin, stdout and stderr (its bytes never pass through pkrun)\n"
        "unless --idle-timeout, --keep fail, or --json with a capture option needs to see them;\n"
        "then pkrun relays them line by line as they come, unchanged (a line longer than 16M\n"
        "is counted but not relayed).\n",
    .signal = "",
    .kill_after =
        "  -k, --kill-after S  at a limit or on Ctrl+C: Ctrl+Break to COMMAND, then end the\n"
        "                      tree S later (default 2; 0: at once). --grace is the same\n",
    .foreground = "",
    .containment =
        "  --containment M     auto (default) or job: a Job Object holding the whole tree\n"
        "  --pdeathsig         accepted: the Job Object dies with pkrun anyway\n",
    .verbose = "  -v, --verbose       say which mechanisms are in use and how the run ended\n",
    .signals = "Ctrl+C, Ctrl+Break and closing the console end the whole tree as a limit does:\n"
               "Ctrl+Break to COMMAND (it arrives only when COMMAND shares pkrun's console), then\n"
               "the Job Object is terminated after -k. -s and --foreground exist on POSIX only;\n"
               "here they are refused (125).\n",
    .exit_status =
        "Exit status: COMMAND's own; 124 a limit ended it (COMMAND's with\n"
        "--preserve-status); 125 pkrun failed or bad arguments; 126 COMMAND found but\n"
        "not executable; 127 not found; 137 the tree had to be terminated after Ctrl+C;\n"
        "a crash's NTSTATUS (0xC0000005 for an access violation).\n",
};

int pkr_signal_arg(const char *v)
{
    (void)v;
    pkr_bad_arg("--signal: not on Windows, which has no signals to choose (a limit sends "
                "Ctrl+Break, then ends the tree after --kill-after)");
}

void pkr_check_options(const struct pkr_options *o)
{
    if (o->foreground)
        pkr_bad_arg("--foreground: not on Windows (COMMAND always runs in a process group and a "
                    "Job Object of its own)");
}
