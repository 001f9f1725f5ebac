/*
 * bisect — `pkbench bisect` (bisect.h), on Windows: not there; it drives `pkbench ab`, which
 * builds and measures revisions on Linux only (bisect.c is the POSIX file).
 */
#include "regress/bisect.h"

#include <stdio.h>

int pkb_cmd_bisect(int argc, char **argv)
{
    (void)argc, (void)argv;
    fprintf(stderr, "pkbench: bisect drives pkbench ab, which runs on Linux only\n");
    return 1;
}
