/*
 * The suites pkbench knows, in --help order: one line each. A suite's folder defines
 * `const pkb_suite pkb_suite_<name>` (see suite.h); its line here is all the harness needs.
 */
#define PKB_SUITE_LIST(X)                                                                          \
    X(scenarios)                                                                                   \
    X(phases)                                                                                      \
    X(forkathon)                                                                                   \
    X(observe)
