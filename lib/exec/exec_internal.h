/* Communicators and requests, shared by lib/exec's files. */
#ifndef MC_EXEC_INTERNAL_H
#define MC_EXEC_INTERNAL_H

#include <stdatomic.h>
#include "bootstrap/bootstrap.h"
#include "exec/pool.h"
#include "exec/program.h"
#include "exec/strided.h"
#include "meshcast/comm.h"
#include "meshcast/reshard.h"
#include "transport/transport.h"

#define MC_ERROR_LEN 512

/* Compiled programs a communicator keeps (program_cache.c). */
#define MC_PROGRAM_CACHE_SIZE 64

typedef struct {
    mc_program_t *prog; /* immutable once compiled */
    atomic_int refs;    /* the cache's (while listed) and one per request using it */
    uint64_t plan_id;   /* the key: plan->id and the chunk_bytes compiled with */
    int64_t chunk_bytes;
    uint64_t used; /* the cache's clock at the last lookup (least recently used goes) */
} mc_cached_program_t;

typedef struct {
    mc_cached_program_t *slot[MC_PROGRAM_CACHE_SIZE];
    int n;
    uint64_t clock;
} mc_program_cache_t;

typedef struct mc_ctrl mc_ctrl_t;
typedef struct mc_progress mc_progress_t;
/* What a failing rank blames on the rank it names (carried in its abort note). */
enum { MC_BLAME_LOST = 1, MC_BLAME_SILENT = 2 };

struct mc_comm {
    int rank, nranks;
    mc_transport_kind_t kind;
    mc_bootstrap_t *boot;
    mc_transport_t *tp; /* NULL with one rank: everything is a local copy */
    mc_pool_t *pool;    /* copies of a single-rank communicator */
    double timeout_s;
    /* pair_seq[p]: how many reshards (and allgathers) this rank started that rank p takes
     * part in too. Both ranks of a pair count the same ones, so each derives the same id
     * for a reshard's messages between them (tags carry its low 8 bits). */
    unsigned char *pair_seq;
    mc_request_t *inflight; /* unfinished requests, most recent first */
    mc_request_t *live;     /* every started request not yet freed (mc_request_detach_all) */
    mc_status_t failed;     /* set once the transport failed: the comm is then unusable */
    char failure[MC_ERROR_LEN];
    mc_ctrl_t *ctrl;         /* control messages between ranks (several ranks only) */
    mc_progress_t *progress; /* the progress thread (MESHCAST_PROGRESS=thread), or NULL */
    mc_program_cache_t programs;
    atomic_int_fast64_t programs_compiled; /* cache misses so far */
};

/* With the comm lock held: plan's program for this rank with chunk_bytes (0: the plan's
 * own), compiled only when the cache lacks it. The caller holds a reference to *out until
 * mc_program_cache_release (which needs no lock, and may come after mc_comm_destroy). */
mc_status_t mc_program_cache_get(mc_comm_t *comm, const mc_plan_t *plan, int64_t chunk_bytes,
                                 mc_cached_program_t **out);
void mc_program_cache_release(mc_cached_program_t *c);
/* Drops the cache's references (mc_comm_destroy). */
void mc_program_cache_clear(mc_program_cache_t *cache);

/* Runs transport completions (waiting up to wait_s when none is ready) and fails requests
 * whose peers have been silent for the timeout. Returns the comm's failure, if any. */
mc_status_t mc_comm_progress(mc_comm_t *comm, double wait_s);
/* Aborts the transport and fails every in-flight request with status and message. When
 * blame is a rank (not -1), the peers first get a note naming it and why (MC_BLAME_*). */
void mc_comm_fail(mc_comm_t *comm, mc_status_t status, const char *message, int blame, int why);
/* An allgather over the transport (collective; the communicator's timeout applies). */
mc_status_t mc_comm_gather(mc_comm_t *comm, const void *send, void *recv, size_t size);

/* The progress thread (progress.c). With one, every public call on the communicator holds
 * its lock (mc_comm_lock); without, the lock calls do nothing. */
mc_status_t mc_progress_start(mc_comm_t *comm);
void mc_progress_stop(mc_comm_t *comm); /* joins the thread */
void mc_comm_lock(mc_comm_t *comm);
void mc_comm_unlock(mc_comm_t *comm);
/* With the lock held: wakes the thread for a request just started; waits for its next
 * round of progress (only with a thread). */
void mc_progress_kick(mc_comm_t *comm);
void mc_progress_wait(mc_comm_t *comm);

/* Control messages (ctrl.c): liveness probes after a timeout, and the note a failing rank
 * leaves its peers naming the rank it blames. */
mc_status_t mc_ctrl_create(mc_comm_t *comm);
void mc_ctrl_destroy(mc_comm_t *comm);
/* After progress, with the message of a request that timed out (else NULL): starts a probe
 * of the peers this rank waits on, ends one whose time is up; may fail the communicator. */
void mc_ctrl_check(mc_comm_t *comm, const char *timeout);
/* Sends the abort note naming blame to every peer that may still listen. */
void mc_ctrl_leave(mc_comm_t *comm, int blame, int why);

/* Request internals used by comm.c. */
void mc_request_fail(mc_request_t *req, mc_status_t status, const char *message);
/* Message describing what req still waits for (for timeouts), into buf. */
void mc_request_describe_wait(const mc_request_t *req, char *buf, size_t len);
double mc_request_last_activity(const mc_request_t *req);
/* Sets waits[p] = 1 for every rank p that req has a transfer posted with. */
void mc_request_waits(const mc_request_t *req, unsigned char *waits);
mc_request_t *mc_request_next(const mc_request_t *req);
/* mc_comm_destroy, once no request is in flight: every request not yet freed forgets the
 * communicator, so that freeing (or testing) it later touches only the request itself. */
void mc_request_detach_all(mc_comm_t *comm);

#endif
