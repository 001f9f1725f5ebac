/*
 * The registry: the contenders pkbench knows, in report order, one line each. A contender's file
 * defines `const pkb_contender pkb_contender_<name>` (contender.h); its line here is all the
 * harness needs. (The file of `processkit` is processkit_default.c: a file named processkit.c
 * would read as the library's header's.)
 *
 * The contenders in other languages are workers speaking the protocol of README.md ("The worker
 * protocol"), defined by their line alone (remote.h): W(name, program, script or NULL, the Debian
 * package that provides the program or its toolchain, description). PKB_WORKER_BUILT names a
 * program this tree builds (contenders/CMakeLists.txt), PKB_WORKER_SCRIPT a file in contenders/.
 */
#include "contenders/registry.h"

#include "contenders/remote.h"

#define PKB_CONTENDER_LIST(X)                                                                      \
    X(processkit)                                                                                  \
    X(processkit_resolved_program)                                                                 \
    X(processkit_discard_stdout)                                                                   \
    X(posix_spawn)                                                                                 \
    X(vfork_exec)                                                                                  \
    X(fork_exec)                                                                                   \
    X(libuv)                                                                                       \
    X(glib)

/* W(name, program, script or NULL, Debian package, description): none yet. */
#define PKB_WORKER_LIST(W)

#define PKB__DECLARE(name) extern const pkb_contender pkb_contender_##name;
PKB_CONTENDER_LIST(PKB__DECLARE)
#undef PKB__DECLARE

PKB_WORKER_LIST(PKB_REMOTE_CONTENDER)

const pkb_contender *const pkb_contenders[] = {
#define PKB__ENTRY(name)                                        &pkb_contender_##name,
#define PKB__WORKER_ENTRY(name, program, script, package, desc) &pkb_contender_##name,
    PKB_CONTENDER_LIST(PKB__ENTRY) PKB_WORKER_LIST(PKB__WORKER_ENTRY)
#undef PKB__ENTRY
#undef PKB__WORKER_ENTRY
};

const size_t pkb_contender_count = sizeof pkb_contenders / sizeof pkb_contenders[0];
