/*
 * The drift study's injected slowdown (internal.posix.h, pk__inject_slowdown): compiled only into a
 * build configured with -DPK_INJECT_SLOWDOWN_PCT=N, never into the library anyone installs.
 *
 * tests/drift/study.sh needs a processkit that is really slower — every run, in its own code
 * path, by a known share — to check that `pkbench compare` still catches a regression after it
 * has corrected for the machine's drift. Spinning (rather than sleeping) keeps the delay on the
 * CPU the run already holds, as slower code would.
 *
 * How long: N% of the time this thread spent since the later of the run's start and the end of
 * its previous spin. One run alone is then N% slower whatever its workload; sixteen runs in one
 * pk_loop are N% slower together, not sixteen times N% (each reap pays only for the time since
 * the last one, and a spin never pays for another spin).
 */
#define _GNU_SOURCE
#include "internal.h"

static _Thread_local int64_t last_spin_end;

void pk__inject_slowdown(int64_t start_ns)
{
    int64_t now = pk__now_ns();
    int64_t since = start_ns > last_spin_end ? start_ns : last_spin_end;
    int64_t until = now + (now - since) * PK_INJECT_SLOWDOWN_PCT / 100;
    while (pk__now_ns() < until)
        ;
    last_spin_end = pk__now_ns();
}
