/*
 * cell — one cell of the observe study (cell.linux.c): one observer watching one workload
 * (a rate, a hold) for one duration in a fresh network namespace, and what it saw set against
 * the workload's truth. The suite (suite.c) runs the grid of cells; the tests run single cells.
 */
#ifndef PKB_OBSERVE_CELL_H
#define PKB_OBSERVE_CELL_H

#include "suites/observe/observer.h"

#include <stdint.h>

typedef struct pkb_cell_config {
    const char *churn_path; /* the workload program (pk_churn) */
    double rate;            /* connections opened per second after T0; 0: none */
    int hold_ms;            /* how long each stays open; 0: closed at once */
    int duration_ms;        /* the churn window, T0 to the freeze */
    int long_lived;         /* connections opened before T0 and kept open */
    pkb_obs_options obs;    /* for the observer (the cell sets netns_inode) */
} pkb_cell_config;

typedef struct pkb_cell_result {
    /* the truth, from the workload */
    uint64_t churned;    /* connections opened (and counted) during the window */
    uint64_t failures;   /* connects that failed */
    uint64_t open_truth; /* connections the client held open at the freeze */
    uint64_t long_lived; /* of them, opened before T0 */
    uint64_t accepted;   /* connections the server accepted during the window */
    int client_pid, server_pid;
    int64_t late_max_us;               /* the client's worst lateness against its schedule */
    uint64_t late_1ms;                 /* connects more than 1 ms late */
    double client_cpu_s, server_cpu_s; /* each from T0 (client: to the freeze; server: to the
                                          end of the observer's last look) */
    /* the observer */
    double setup_cpu_s;   /* its thread's CPU in setup */
    double cpu_s;         /* its thread's CPU in run + final (CLOCK_THREAD_CPUTIME_ID) */
    double user_s, sys_s; /* the same split by getrusage(RUSAGE_THREAD) (tick-sampled) */
    double wall_s;        /* run + final */
    pkb_obs_view view;    /* its maps and counters (freed by pkb_cell_result_free) */
    /* the join of the two, by socket inode */
    uint64_t seen, attributed, misattributed; /* churned client sockets */
    uint64_t long_seen, long_attributed;      /* long-lived client sockets */
    uint64_t server_seen, server_attributed;  /* server sockets accepted in the window */
    uint64_t open_observed; /* sockets it believed open at the end, owned by the client */
    const char *netns;      /* how the cell got its namespace */
} pkb_cell_result;

/* Runs one cell. Returns 0, -EINTR when pkbench was interrupted (nothing recorded), or another
 * negative errno with a one-line reason (the workload failed, the observer failed in setup,
 * run or final). The result is filled on 0 and must be freed with pkb_cell_result_free then. */
int pkb_cell_run(
    const pkb_cell_config *c, const pkb_observer *ob, pkb_cell_result *res, char *why, size_t cap);

void pkb_cell_result_free(pkb_cell_result *res);

#endif /* PKB_OBSERVE_CELL_H */
