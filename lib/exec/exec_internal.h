/* Communicators and requests, shared by lib/exec's files. */
#ifndef MC_EXEC_INTERNAL_H
#define MC_EXEC_INTERNAL_H

#include "bootstrap/bootstrap.h"
#include "exec/pool.h"
#include "exec/program.h"
#include "exec/strided.h"
#include "meshcast/comm.h"
#include "meshcast/reshard.h"
#include "transport/transport.h"

#define MC_ERROR_LEN 512

struct mc_comm {
    int rank, nranks;
    mc_transport_kind_t kind;
    mc_bootstrap_t *boot;
    mc_transport_t *tp; /* NULL with one rank: everything is a local copy */
    mc_pool_t *pool;    /* copies of a single-rank communicator */
    double timeout_s;
    unsigned seq;           /* sequence number of the next reshard (tags carry it) */
    mc_request_t *inflight; /* unfinished requests, most recent first */
    mc_status_t failed;     /* set once the transport failed: the comm is then unusable */
    char failure[MC_ERROR_LEN];
};

/* Runs transport completions (waiting up to wait_s when none is ready) and fails requests
 * whose peers have been silent for the timeout. Returns the comm's failure, if any. */
mc_status_t mc_comm_progress(mc_comm_t *comm, double wait_s);
/* Aborts the transport and fails every in-flight request with status and message. */
void mc_comm_fail(mc_comm_t *comm, mc_status_t status, const char *message);

/* Request internals used by comm.c. */
void mc_request_fail(mc_request_t *req, mc_status_t status, const char *message);
/* Message describing what req still waits for (for timeouts), into buf. */
void mc_request_describe_wait(const mc_request_t *req, char *buf, size_t len);
double mc_request_last_activity(const mc_request_t *req);
mc_request_t *mc_request_next(const mc_request_t *req);

#endif
