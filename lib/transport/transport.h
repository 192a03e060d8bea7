/* Transports move contiguous byte messages between the ranks of a communicator. The
 * engine (lib/exec) posts sends and receives and drives progress; completions run as
 * callbacks inside progress(), on the thread that called it, never elsewhere. */
#ifndef MC_TRANSPORT_H
#define MC_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include "bootstrap/bootstrap.h"
#include "meshcast/status.h"

#define MC_TAG_BITS 40 /* tags are < 2^40; transports may use the bits above */
/* A failing rank's notes to its peers (lib/exec/ctrl.c; no reshard uses this tag): abort
 * lets sends with this tag reach live peers before it cuts the connections. */
#define MC_TAG_NOTE ((UINT64_C(1) << MC_TAG_BITS) - 1)

typedef struct mc_xfer mc_xfer_t;
struct mc_xfer {
    int peer;     /* the other rank */
    uint64_t tag; /* (peer, tag) is unique among one rank's posted sends, and receives */
    void *buf;
    size_t len; /* a receive's len equals the matching send's len */
    int cuda;   /* buf is CUDA device memory (transports that cannot carry it are refused) */
    /* Called once, inside progress(). On error status the transport has set mc_last_error
     * to a message naming the peer and the cause. */
    void (*on_done)(mc_xfer_t *x, mc_status_t status);
    void *owner;   /* the engine's */
    void *tp_data; /* the transport's */
    int tp_status; /* the transport's */
};

typedef struct mc_transport mc_transport_t;
typedef struct {
    const char *name;
    /* Post a transfer (buf stays valid until on_done). Errors here are immediate. */
    mc_status_t (*send)(mc_transport_t *tp, mc_xfer_t *x);
    mc_status_t (*recv)(mc_transport_t *tp, mc_xfer_t *x);
    /* Runs ready completions; when none is ready, sleeps (no spinning) up to wait_s for
     * one. Returns MC_OK, or an error when the transport failed as a whole. */
    mc_status_t (*progress)(mc_transport_t *tp, double wait_s);
    /* Stops every posted transfer: afterwards no buffer is touched and no callback runs.
     * Sends tagged MC_TAG_NOTE first get a moment to be taken by live peers. The transport then
     * refuses new transfers. */
    void (*abort)(mc_transport_t *tp);
    void (*destroy)(mc_transport_t *tp);
} mc_transport_ops_t;

struct mc_transport {
    const mc_transport_ops_t *ops;
    int rank, nranks;
};

/* Ranks as threads of one process sharing world (lib/transport/world.c). */
mc_status_t mc_transport_threads_create(mc_world_t *world, int rank, mc_transport_t **out);
/* UCX workers, addresses exchanged through boot; MC_ERR_UNSUPPORTED without UCX. */
mc_status_t mc_transport_ucx_create(mc_bootstrap_t *boot, double timeout_s, mc_transport_t **out);

#endif
