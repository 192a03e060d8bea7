/* Communicators: the ranks that execute plans together, their transport and bootstrap. */
#ifndef MESHCAST_COMM_H
#define MESHCAST_COMM_H

#include <stddef.h>
#include <stdint.h>
#include "meshcast/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MC_TRANSPORT_LOCAL, /* in-process: one rank owns every device, or ranks are threads */
    MC_TRANSPORT_UCX    /* ranks are processes on one host or many (UCX) */
} mc_transport_kind_t;

typedef enum {
    MC_BOOTSTRAP_AUTO,    /* OOB if oob is set, THREADS if world is set, ENV if MESHCAST_RANK
                             is set, MPI under mpirun, else SINGLE */
    MC_BOOTSTRAP_SINGLE,  /* one rank */
    MC_BOOTSTRAP_THREADS, /* ranks are threads of this process sharing an mc_world_t */
    MC_BOOTSTRAP_MPI,     /* MPI_COMM_WORLD (initializes MPI when it is not yet) */
    MC_BOOTSTRAP_ENV,     /* MESHCAST_RANK, MESHCAST_NRANKS, MESHCAST_ROOT=host:port */
    MC_BOOTSTRAP_OOB      /* the user's out-of-band allgather (mc_oob_t) */
} mc_bootstrap_kind_t;

/* A non-blocking out-of-band allgather (UCC's ucc_oob_coll_t contract): every rank calls
 * allgather with size bytes; rank r's bytes land at recv + r * size on every rank. */
typedef struct {
    mc_status_t (*allgather)(const void *send, void *recv, size_t size, void *coll_info,
                             void **request);
    mc_status_t (*req_test)(void *request); /* MC_OK when done, MC_INPROGRESS, or an error */
    mc_status_t (*req_free)(void *request);
    void *coll_info;
    int rank;
    int nranks;
} mc_oob_t;

/* Ranks as threads of one process: each thread creates its communicator with the same
 * world and its own rank (MC_BOOTSTRAP_THREADS, transport LOCAL). */
typedef struct mc_world mc_world_t;
mc_status_t mc_world_create(int nranks, mc_world_t **out);
void mc_world_destroy(mc_world_t *world); /* after every communicator on it is destroyed */

typedef enum {
    MC_PROGRESS_CALLER, /* requests advance inside mc_request_test/wait (and other calls) */
    MC_PROGRESS_THREAD  /* a thread per communicator advances them while the caller computes */
} mc_progress_mode_t;

enum {
    MC_COMM_PARAM_TRANSPORT = 1u << 0,
    MC_COMM_PARAM_BOOTSTRAP = 1u << 1,
    MC_COMM_PARAM_OOB = 1u << 2,
    MC_COMM_PARAM_WORLD = 1u << 3, /* world and world_rank */
    MC_COMM_PARAM_THREADS = 1u << 4,
    MC_COMM_PARAM_TIMEOUT = 1u << 5,
    MC_COMM_PARAM_PROGRESS = 1u << 6
};

typedef struct {
    uint64_t field_mask;           /* MC_COMM_PARAM_* bits of the fields that are set */
    mc_transport_kind_t transport; /* default MC_TRANSPORT_LOCAL */
    mc_bootstrap_kind_t bootstrap; /* default MC_BOOTSTRAP_AUTO (OOB when oob is set) */
    mc_oob_t oob;                  /* for MC_BOOTSTRAP_OOB */
    mc_world_t *world;             /* for MC_BOOTSTRAP_THREADS */
    int world_rank;
    int threads;      /* worker threads for in-process copies; default MESHCAST_THREADS */
    double timeout_s; /* how long a rank waits for a peer; default MESHCAST_TIMEOUT */
    mc_progress_mode_t progress; /* default MESHCAST_PROGRESS (thread) */
} mc_comm_params_t;

typedef struct mc_comm mc_comm_t;

/* Collective over the bootstrap's ranks. params may be NULL (one in-process rank).
 * With MC_PROGRESS_THREAD, the calls on one communicator and its requests may come from
 * any threads, also at once (each waits for the others); mc_comm_destroy must come last. */
mc_status_t mc_comm_create(const mc_comm_params_t *params, mc_comm_t **out);
/* Local: no communication. Requests in flight fail (one rank: their copies finish first);
 * requests not yet freed stay valid: test, wait and free still work on them afterwards
 * (they report how they ended), and freeing one then frees only the request itself. */
void mc_comm_destroy(mc_comm_t *comm);
int mc_comm_rank(const mc_comm_t *comm);
int mc_comm_nranks(const mc_comm_t *comm);
const char *mc_comm_transport_name(const mc_comm_t *comm); /* "local", "ucx" */
/* Programs this rank compiled so far. A reshard compiles its plan for this rank unless the
 * communicator still caches the program of an earlier one with the same plan and chunk
 * size (it keeps the 64 most recently used), so this counts cache misses. */
int64_t mc_comm_programs_compiled(const mc_comm_t *comm);
/* Blocking allgather (for small control data: timings, error counts): size bytes from
 * every rank land at recv + r * size. Collective; size may be 0 (a barrier). With several
 * ranks it runs over the transport and fails like a reshard (after the comm's timeout, or
 * when a peer fails; the communicator then fails too). */
mc_status_t mc_comm_allgather(mc_comm_t *comm, const void *send, void *recv, size_t size);

#ifdef __cplusplus
}
#endif
#endif
