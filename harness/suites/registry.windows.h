/*
 * The suites the Windows build of pkbench knows, in --help order (the fork/vfork study needs
 * fork, which Windows does not have). See registry.h.
 */
#define PKB_SUITE_LIST(X)                                                                          \
    X(scenarios)                                                                                   \
    X(phases)
