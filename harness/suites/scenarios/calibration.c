/*
 * The calibration series, `calibration/cpu_loop`: a fixed pure-CPU loop timed like any other
 * series of the scenarios suite, and marked a control (contender.h's `control`).
 *
 * Why it is here: `pkbench compare` tells "the machine got slower" from "the code got slower" by
 * the control series, whose code cannot change with the library (regress/drift.h). The raw
 * spawns (posix_spawn, vfork_exec, fork_exec) move with everything a start touches — the kernel's
 * process creation, the scheduler's cross-CPU wake-ups, the page cache; this loop moves only
 * with the CPU itself: its frequency, the hypervisor's steal, and the share other processes take
 * of it. A drift both kinds of control agree on is the machine's; a drift only the spawns show is
 * in process creation; the two disagreeing is itself worth knowing.
 *
 * The loop: PKB_CALIBRATION_STEPS steps of xorshift64, each step depending on the one before (no
 * instruction-level parallelism to find, nothing to vectorise), in registers: no memory traffic
 * beyond the stack, no system call, no child. The seed is read from a volatile and the result
 * written to one, so the compiler can neither fold the loop nor drop it. About 100 µs on the
 * reference VM: the order of the spawn series, so the runner's per-iteration bookkeeping weighs
 * the same on both.
 */
#include "suites/scenarios/scenario.h"

#include <stdint.h>

#define PKB_CALIBRATION_STEPS 65536

static volatile uint64_t calibration_seed = 0x9E3779B97F4A7C15u;
static volatile uint64_t calibration_sink;

int pkb__calibration_iterate(void *ctx, pkb_sample *out)
{
    (void)ctx;
    (void)out; /* no child, no output: nothing to report */
    uint64_t x = calibration_seed;
    for (int i = 0; i < PKB_CALIBRATION_STEPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    calibration_sink = x;
    return 0;
}
