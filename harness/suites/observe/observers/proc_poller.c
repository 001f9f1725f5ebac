/*
 * proc_poller — the seed's poller: once a second, the text of /proc/net/tcp and tcp6, then the
 * /proc/<pid>/fd walk that maps socket inodes to processes (poll.c, tables.c).
 */
#include "suites/observe/observers/poll.h"

const pkb_observer pkb_observer_proc_poller =
    PKB_OBSERVER_OF(pkb__poller,
                    "proc_poller",
                    0,
                    "every second: /proc/net/tcp{,6} text, then the /proc/*/fd inode -> pid walk");
