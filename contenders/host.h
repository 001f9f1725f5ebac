/*
 * host — the C measuring worker (host.c): the C contenders of the registry, served over the
 * worker protocol (contenders/README.md) in a process of their own. `pkbench worker` runs it.
 */
#ifndef PKB_CONTENDERS_HOST_H
#define PKB_CONTENDERS_HOST_H

/* The worker's main: argv[0] is "worker", nothing follows. Returns the exit status. */
int pkb_host_main(int argc, char **argv);

#endif /* PKB_CONTENDERS_HOST_H */
