/*
 * The contenders pkbench knows, in report order: one line each. A contender's file defines
 * `const pkb_contender pkb_contender_<name>` (see harness/suites/scenarios/contender.h); its line
 * here is all the harness needs.
 */
#define PKB_CONTENDER_LIST(X)                                                                      \
    X(processkit)                                                                                  \
    X(processkit_resolved_program)                                                                 \
    X(processkit_discard_stdout)                                                                   \
    X(posix_spawn)                                                                                 \
    X(vfork_exec)                                                                                  \
    X(fork_exec)                                                                                   \
    X(libuv)                                                                                       \
    X(glib)
