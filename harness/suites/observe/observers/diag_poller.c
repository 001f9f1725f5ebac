/*
 * diag_poller — the same once-a-second poller with the socket table from NETLINK_SOCK_DIAG
 * (inet_diag dumps, binary, this namespace only) instead of /proc/net/tcp; the owners still
 * come from the /proc/<pid>/fd walk (poll.c, tables.c).
 */
#include "suites/observe/observers/poll.h"

const pkb_observer pkb_observer_diag_poller = PKB_OBSERVER_OF(
    pkb__poller,
    "diag_poller",
    PKB_POLL_DIAG,
    "every second: a NETLINK_SOCK_DIAG dump, then the /proc/*/fd inode -> pid walk");
