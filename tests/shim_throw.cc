/*
 * Benchmark functions written in C++ that throw, for tests/test_shim.c: a pkb_fn may be C++
 * (a contender wrapping a C++ library), and the shim must turn its exception into an error run
 * instead of letting it unwind through Google Benchmark or into C.
 */
#include "run/shim/pkb_shim.h"

#include <stdexcept>

extern "C" void pk_test_shim_throw_std(pkb_state *st, void *user);
extern "C" void pk_test_shim_throw_int(pkb_state *st, void *user);

/* Throws a std::runtime_error inside the loop, while the timer runs. */
void pk_test_shim_throw_std(pkb_state *st, void *user)
{
    (void)user;
    while (pkb_keep_running(st))
        throw std::runtime_error("boom");
}

/* Throws something that is not a std::exception, before the loop. */
void pk_test_shim_throw_int(pkb_state *st, void *user)
{
    (void)st;
    (void)user;
    throw 42;
}
