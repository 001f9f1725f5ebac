/*
 * The registry: the contenders pkbench knows, in report order, one line each. A contender's file
 * defines `const pkb_contender pkb_contender_<name>` (contender.h); its line here is all the
 * harness needs. (The file of `processkit` is processkit_default.c: a file named processkit.c
 * would read as the library's header's.)
 *
 * The contenders in other languages are workers speaking the protocol of README.md ("The worker
 * protocol"), defined by their line alone (remote.h): W(name, program, script or NULL, the Debian
 * package that provides the program or its toolchain, scenarios, description): the scenarios are
 * PKB_REMOTE_AT_SCALE for a worker whose fan-out is its runtime's (the fan-out at scale too),
 * PKB_REMOTE_SCENARIOS for one whose fan-out is a thread per child. PKB_WORKER_BUILT names a
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

#define PKB_WORKER_BUILT(file)  PKB_WORKERS_DIR "/" file
#define PKB_WORKER_SCRIPT(file) PKB_CONTENDERS_DIR "/" file

#define PKB_WORKER_LIST(W)                                                                         \
    W(rust_std, PKB_WORKER_BUILT("rust_std"), NULL, "cargo", PKB_REMOTE_SCENARIOS,                 \
      "Rust std::process::Command (Debian's rustc): output() captures, BufRead::lines streams, "   \
      "a thread per child")                                                                        \
    W(rust_tokio, PKB_WORKER_BUILT("rust_tokio"), NULL, "librust-tokio-dev", PKB_REMOTE_AT_SCALE,  \
      "Rust tokio::process (Debian's tokio 1.24, multi-threaded runtime): output(), an async "     \
      "line reader, a task per child")                                                             \
    W(go_exec, PKB_WORKER_BUILT("go_exec"), NULL, "golang-go", PKB_REMOTE_AT_SCALE,                \
      "Go os/exec (Debian's go): Output(), a bufio.Scanner over StdoutPipe, a goroutine per "      \
      "child")                                                                                     \
    W(python_subprocess, "/usr/bin/python3", PKB_WORKER_SCRIPT("python_subprocess/worker.py"),     \
      "python3", PKB_REMOTE_SCENARIOS,                                                             \
      "Python subprocess (Debian's python3): run() captures, Popen's stdout iterated for lines, "  \
      "a thread per child")                                                                        \
    W(python_asyncio, "/usr/bin/python3", PKB_WORKER_SCRIPT("python_asyncio/worker.py"),           \
      "python3", PKB_REMOTE_AT_SCALE,                                                              \
      "Python asyncio.create_subprocess_exec: communicate() captures, readline() streams, "        \
      "gather() fans out")                                                                         \
    W(node_child_process, "node", PKB_WORKER_SCRIPT("node_child_process/worker.js"), "nodejs",     \
      PKB_REMOTE_AT_SCALE,                                                                         \
      "Node child_process.spawn: 'data' events capture, readline streams, Promise.all fans out")

#define PKB__DECLARE(name) extern const pkb_contender pkb_contender_##name;
PKB_CONTENDER_LIST(PKB__DECLARE)
#undef PKB__DECLARE

PKB_WORKER_LIST(PKB_REMOTE_CONTENDER)

const pkb_contender *const pkb_contenders[] = {
#define PKB__ENTRY(name)                                                   &pkb_contender_##name,
#define PKB__WORKER_ENTRY(name, program, script, package, scenarios, desc) &pkb_contender_##name,
    PKB_CONTENDER_LIST(PKB__ENTRY) PKB_WORKER_LIST(PKB__WORKER_ENTRY)
#undef PKB__ENTRY
#undef PKB__WORKER_ENTRY
};

const size_t pkb_contender_count = sizeof pkb_contenders / sizeof pkb_contenders[0];
