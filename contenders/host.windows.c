/*
 * host.h on Windows: no measuring worker (the fan-out at scale, its only user, does not run
 * there).
 */
#include "contenders/host.h"

#include <stdio.h>

int pkb_host_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "pkbench: worker: the measuring worker is not built for Windows\n");
    return 1;
}
