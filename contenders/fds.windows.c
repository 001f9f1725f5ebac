/*
 * pkb_count_fds (contender.h) on Windows: handles are not descriptors, and the fan-out at scale
 * (the only caller) does not run there. 0: not measured.
 */
#include "contenders/contender.h"

uint32_t pkb_count_fds(void)
{
    return 0;
}
