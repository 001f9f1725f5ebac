/*
 * The contenders of the Windows build, in report order (see registry.h): processkit three ways
 * and the baseline, CreateProcessW as a standard library uses it.
 */
#define PKB_CONTENDER_LIST(X)                                                                      \
    X(processkit)                                                                                  \
    X(processkit_resolved_program)                                                                 \
    X(processkit_discard_stdout)                                                                   \
    X(createprocess)
