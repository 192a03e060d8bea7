/* Requests: one execution of a program. With one rank, the worker pool copies every flow
 * (flows are independent; a flow's edges run parent first). With several ranks, an event
 * engine moves chunks: a chunk that reaches a device is unpacked where it is needed and
 * passed on to that device's children in the flow (local copies, or sends to other ranks).
 * Only the reshard's participants (participants.c) take part. Before any data moves, they
 * compare plan fingerprints (a dissemination allreduce of the minimum and maximum
 * fingerprint among them). An allgather (mc_comm_gather) is a request without a program
 * whose participants are every rank: the closing handshake's exchange with each, carrying
 * data. A message's tag is the request's id with that peer (comm->pair_seq) above its
 * message id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec/combine.h"
#include "exec/cuda_exec.h"
#include "exec/exec_internal.h"
#include "util/util.h"

#define FP_MSG_BASE 0xFFFFFF00ULL /* message ids of the fingerprint rounds */
#define BYE_MSG 0xFFFFFFF0ULL     /* message id of the closing handshake */
#define GATHER_MSG 0xFFFFFFF1ULL  /* message id of mc_comm_gather */
#define MAX_INFLIGHT 255          /* tags carry 8 bits of a pair's sequence number */

typedef struct {
    mc_xfer_t x;
    int64_t op, chunk;
    int busy;
} chunk_xfer_t;

/* Per op, what one execution changes (the regions' shapes are the program's). */
typedef struct {
    chunk_xfer_t *slots; /* SEND, RECV: chunk k uses slot k % nslots */
    int64_t nslots;
    char *bounce; /* nslots chunks when the box is strided, else NULL */
    int64_t next; /* next chunk to post */
    int64_t completed;
    unsigned char *avail; /* SEND: chunk k has reached the source */
    mc_strided_t *in;     /* COMBINE: the inputs, in addend order */
    int64_t *arrivals;    /* COMBINE: gathered addends of chunk k that arrived */
} op_state_t;

enum { PHASE_FINGERPRINT, PHASE_RUNNING, PHASE_CLOSING, PHASE_DONE, PHASE_FAILED };
#define BYE_OP (-2) /* chunk_xfer_t.op of the closing handshake; the fingerprint's is -1 */

struct mc_request {
    mc_comm_t *comm;    /* NULL once the communicator is destroyed (the request is then over) */
    mc_program_t *prog; /* cached->prog: shared, read only */
    mc_cached_program_t *cached; /* the reference this request holds */
    op_state_t *ops;             /* NULL on one rank without combines (nothing to keep) */
    void **src_tile, **dst_tile; /* the caller's tiles, per mesh index */
    char *staging;
    int64_t units_left;
    int phase;
    mc_status_t status;
    char error[MC_ERROR_LEN];
    double last_activity;
    unsigned char *pseq;        /* per rank: this request's id with it (its pair sequence number) */
    int *members, nmembers, me; /* the participants, ascending; me: this rank's index */
    /* fingerprint allreduce */
    int fp_round, fp_rounds, fp_pending;
    uint64_t fp_have[2], fp_out[2], fp_in[2];
    chunk_xfer_t fp_send, fp_recv;
    /* closing handshake: a "done" to and from every rank this one exchanged data with; an
     * allgather (prog NULL) is the same exchange with every rank, carrying data */
    int *peers, npeers, bye_pending;
    chunk_xfer_t *bye;  /* 2 per peer: send, receive */
    mc_cuda_exec_t gpu; /* CUDA buffers: the stream the bytes move on */
    /* single rank */
    mc_pool_job_t job;
    int linked; /* in comm->inflight */
    mc_request_t *prev, *next;
    int live; /* in comm->live */
    mc_request_t *live_prev, *live_next;
};

/* ---- in-flight list ---- */

static void unlink_request(mc_request_t *r)
{
    if (!r->linked)
        return;
    r->linked = 0;
    if (r->prev)
        r->prev->next = r->next;
    else if (r->comm->inflight == r)
        r->comm->inflight = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static void link_request(mc_request_t *r)
{
    mc_comm_t *comm = r->comm;
    r->last_activity = mc_now();
    r->next = comm->inflight;
    r->linked = 1;
    if (comm->inflight)
        comm->inflight->prev = r;
    comm->inflight = r;
    mc_progress_kick(comm);
}

/* ---- requests not yet freed ---- */

static void live_link(mc_request_t *r)
{
    mc_comm_t *comm = r->comm;
    r->live = 1;
    r->live_next = comm->live;
    if (comm->live)
        comm->live->live_prev = r;
    comm->live = r;
}

static void live_unlink(mc_request_t *r)
{
    if (!r->live)
        return;
    r->live = 0;
    if (r->live_prev)
        r->live_prev->live_next = r->live_next;
    else
        r->comm->live = r->live_next;
    if (r->live_next)
        r->live_next->live_prev = r->live_prev;
}

void mc_request_detach_all(mc_comm_t *comm)
{
    while (comm->live) {
        mc_request_t *r = comm->live;
        live_unlink(r);
        r->comm = NULL;
    }
}

mc_request_t *mc_request_next(const mc_request_t *r)
{
    return r->next;
}

double mc_request_last_activity(const mc_request_t *r)
{
    return r->last_activity;
}

void mc_request_fail(mc_request_t *r, mc_status_t status, const char *message)
{
    if (r->phase != PHASE_DONE && r->phase != PHASE_FAILED) {
        r->phase = PHASE_FAILED;
        r->status = status;
        snprintf(r->error, sizeof r->error, "%s", message);
    }
    unlink_request(r);
}

static void finish(mc_request_t *r)
{
    mc_status_t s = mc_cuda_exec_end(&r->gpu);
    if (s) {
        mc_request_fail(r, s, mc_last_error());
        return;
    }
    r->phase = PHASE_DONE;
    r->status = MC_OK;
    unlink_request(r);
}

/* A transfer with peer failed with s: a lost peer is blamed (the note tells the others). */
static void fail_from_last_error(mc_request_t *r, mc_status_t s, int peer)
{
    char msg[MC_ERROR_LEN];
    snprintf(msg, sizeof msg, "%s", mc_last_error());
    int lost = s == MC_ERR_PEER && peer >= 0;
    mc_comm_fail(r->comm, s, msg, lost ? peer : -1, lost ? MC_BLAME_LOST : 0);
}

void mc_request_waits(const mc_request_t *r, unsigned char *waits)
{
    if (r->phase == PHASE_FINGERPRINT) {
        waits[r->fp_send.x.peer] |= (unsigned char)r->fp_send.busy;
        waits[r->fp_recv.x.peer] |= (unsigned char)r->fp_recv.busy;
    }
    for (int64_t i = 0; r->prog && r->phase == PHASE_RUNNING && i < r->prog->nops; i++)
        for (int64_t k = 0; k < r->ops[i].nslots; k++)
            if (r->ops[i].slots[k].busy)
                waits[r->prog->ops[i].peer] = 1;
    for (int i = 0; r->phase == PHASE_CLOSING && i < 2 * r->npeers; i++)
        if (r->bye[i].busy)
            waits[r->peers[i / 2]] = 1;
}

void mc_request_describe_wait(const mc_request_t *r, char *buf, size_t len)
{
    const mc_program_t *p = r->prog;
    for (int i = 0; !p && i < 2 * r->npeers; i++)
        if (r->bye[i].busy) {
            snprintf(buf, len,
                     i % 2 ? "waiting for rank %d's part of an allgather"
                           : "waiting for rank %d to take this rank's part of an allgather",
                     r->peers[i / 2]);
            return;
        }
    if (!p) {
        snprintf(buf, len, "with nothing left to wait for");
        return;
    }
    if (r->phase == PHASE_FINGERPRINT) {
        if (r->fp_recv.busy)
            snprintf(buf, len, "waiting for rank %d's plan fingerprint (reshard start)",
                     r->fp_recv.x.peer);
        else
            snprintf(buf, len,
                     "waiting for rank %d to take this rank's plan fingerprint "
                     "(reshard start)",
                     r->fp_send.x.peer);
        return;
    }
    for (int64_t i = 0; i < p->nops; i++) {
        const mc_op_t *op = &p->ops[i];
        const op_state_t *st = &r->ops[i];
        if (op->kind == MC_OP_RECV && st->completed < op->nchunks) {
            snprintf(buf, len,
                     "waiting for chunk %lld of %lld of flow %lld (device %lld to "
                     "%lld) from rank %d",
                     (long long)st->completed, (long long)op->nchunks, (long long)op->flow,
                     (long long)op->from_dev, (long long)op->to_dev, op->peer);
            return;
        }
    }
    for (int64_t i = 0; i < p->nops; i++) {
        const mc_op_t *op = &p->ops[i];
        const op_state_t *st = &r->ops[i];
        if (op->kind == MC_OP_SEND && st->completed < op->nchunks) {
            snprintf(buf, len,
                     "waiting for rank %d to take chunk %lld of %lld of flow %lld "
                     "(device %lld to %lld)",
                     op->peer, (long long)st->completed, (long long)op->nchunks,
                     (long long)op->flow, (long long)op->from_dev, (long long)op->to_dev);
            return;
        }
    }
    for (int i = 0; r->phase == PHASE_CLOSING && i < 2 * r->npeers; i++)
        if (r->bye[i].busy) {
            snprintf(buf, len,
                     i % 2 ? "waiting for rank %d to say it is done (reshard end)"
                           : "waiting for rank %d to take this rank's done (reshard end)",
                     r->peers[i / 2]);
            return;
        }
    snprintf(buf, len, "with nothing left to wait for");
}

/* ---- the event engine (several ranks) ---- */

/* Region g of this execution: its shape on the caller's tile or the staging buffer. */
static mc_strided_t view(const mc_request_t *r, const mc_region_t *g)
{
    void *base = g->at == MC_AT_SRC   ? r->src_tile[g->index]
                 : g->at == MC_AT_DST ? r->dst_tile[g->index]
                                      : r->staging + r->prog->staging_off[g->index];
    return mc_strided_bind(&g->shape, base);
}

static void chunk_range(const mc_op_t *op, int64_t k, int64_t *off, int64_t *len)
{
    *off = k * op->chunk_bytes;
    *len = op->bytes - *off < op->chunk_bytes ? op->bytes - *off : op->chunk_bytes;
}

static void on_xfer(mc_xfer_t *x, mc_status_t status);

static uint64_t tag_of(const mc_request_t *r, int peer, uint64_t msg)
{
    return (uint64_t)r->pseq[peer] << 32 | msg;
}

/* Sends send (size bytes, tag) to every peer and receives each peer's into recv + its
 * rank * size; the request finishes when all are done (PHASE_CLOSING). */
static void exchange(mc_request_t *r, uint64_t msg, void *send, char *recv, size_t size)
{
    r->phase = PHASE_CLOSING;
    r->bye_pending = 2 * r->npeers;
    if (r->npeers == 0) {
        finish(r);
        return;
    }
    mc_transport_t *tp = r->comm->tp;
    for (int i = 0; i < 2 * r->npeers && !r->comm->failed && r->phase == PHASE_CLOSING; i++) {
        chunk_xfer_t *cx = &r->bye[i];
        cx->op = BYE_OP;
        cx->busy = 1;
        cx->x = (mc_xfer_t){.peer = r->peers[i / 2],
                            .tag = tag_of(r, r->peers[i / 2], msg),
                            .buf = i % 2 ? recv + (size_t)r->peers[i / 2] * size : send,
                            .len = size,
                            .on_done = on_xfer,
                            .owner = r};
        mc_status_t s = i % 2 ? tp->ops->recv(tp, &cx->x) : tp->ops->send(tp, &cx->x);
        if (s) {
            fail_from_last_error(r, s, cx->x.peer);
            return;
        }
    }
}

/* Every op is done here: trade a "done" with every peer before finishing. A transport may
 * complete a send while its tail still needs this rank's progress (UCX over TCP) or the
 * peer's (a synchronous send's acknowledgement); a rank that returned at once and sat in
 * the application's barrier stranded those, and its peer waited forever. Once every peer
 * said done, all data between us has arrived. */
static void start_closing(mc_request_t *r)
{
    /* no bytes: any valid address */
    exchange(r, BYE_MSG, r->bye, (char *)r->bye, 0);
}

static void unit_done(mc_request_t *r)
{
    r->last_activity = mc_now();
    if (--r->units_left == 0)
        start_closing(r);
}

static void try_send(mc_request_t *r, int64_t opi);

static void arrived(mc_request_t *r, int64_t opi, int64_t k);

/* Chunk k of every addend is at the reducer: combine it, then pass it on. */
static void combine_chunk(mc_request_t *r, int64_t opi, int64_t k)
{
    const mc_op_t *op = &r->prog->ops[opi];
    op_state_t *st = &r->ops[opi];
    int64_t off, len;
    chunk_range(op, k, &off, &len);
    mc_strided_t dst = view(r, &op->dst);
    mc_status_t s = mc_cuda_exec_combine(&r->gpu, r->prog->dtype, r->prog->reduce, (int)op->nin,
                                         st->in, &dst, off, len);
    if (s) {
        fail_from_last_error(r, s, -1);
        return;
    }
    st->completed++;
    arrived(r, opi, k);
    unit_done(r);
}

static void fill_chunk(mc_request_t *r, int64_t opi, int64_t k)
{
    const mc_op_t *op = &r->prog->ops[opi];
    int64_t off, len;
    chunk_range(op, k, &off, &len);
    mc_strided_t dst = view(r, &op->dst);
    mc_combine_fill(r->prog->dtype, r->prog->dst_reduce, &dst, off, len);
    r->ops[opi].completed++;
    unit_done(r);
}

static void local_copy(mc_request_t *r, int64_t opi, int64_t k)
{
    const mc_op_t *op = &r->prog->ops[opi];
    op_state_t *st = &r->ops[opi];
    int64_t off, len;
    chunk_range(op, k, &off, &len);
    mc_strided_t dst = view(r, &op->dst), src = view(r, &op->src);
    mc_status_t s = mc_cuda_exec_copy(&r->gpu, &dst, &src, off, len);
    if (s) {
        fail_from_last_error(r, s, -1);
        return;
    }
    st->completed++;
    arrived(r, opi, k);
    unit_done(r);
}

/* Chunk k of op's flow is now where op delivers it: hand it to the children. */
static void arrived(mc_request_t *r, int64_t opi, int64_t k)
{
    const mc_program_t *p = r->prog;
    const mc_op_t *op = &p->ops[opi];
    for (int64_t c = 0; c < op->nchildren && !r->comm->failed; c++) {
        int64_t child = p->children[op->child0 + c];
        if (p->ops[child].kind == MC_OP_LOCAL_COPY) {
            local_copy(r, child, k);
        } else if (p->ops[child].kind == MC_OP_COMBINE) {
            if (++r->ops[child].arrivals[k] == p->ops[child].nwait)
                combine_chunk(r, child, k);
        } else {
            r->ops[child].avail[k] = 1;
            try_send(r, child);
        }
    }
}

static mc_status_t post(mc_request_t *r, int64_t opi, int64_t k, int send)
{
    const mc_op_t *op = &r->prog->ops[opi];
    op_state_t *st = &r->ops[opi];
    chunk_xfer_t *cx = &st->slots[k % st->nslots];
    int64_t off, len;
    chunk_range(op, k, &off, &len);
    mc_strided_t box = view(r, send ? &op->src : &op->dst);
    void *buf = mc_strided_range(&box, off, len);
    if (!buf) {
        buf = st->bounce + (k % st->nslots) * op->chunk_bytes;
        mc_status_t s = send ? mc_cuda_exec_pack(&r->gpu, &box, off, len, buf) : MC_OK;
        if (s)
            return s;
    }
    cx->busy = 1;
    cx->op = opi;
    cx->chunk = k;
    cx->x = (mc_xfer_t){.peer = op->peer,
                        .tag = tag_of(r, op->peer, (uint64_t)(op->msg0 + k)),
                        .buf = buf,
                        .len = (size_t)len,
                        .on_done = on_xfer,
                        .owner = r,
                        .cuda = r->gpu.on};
    mc_transport_t *tp = r->comm->tp;
    return send ? tp->ops->send(tp, &cx->x) : tp->ops->recv(tp, &cx->x);
}

static void try_send(mc_request_t *r, int64_t opi)
{
    const mc_op_t *op = &r->prog->ops[opi];
    op_state_t *st = &r->ops[opi];
    while (st->next < op->nchunks && st->avail[st->next] &&
           !st->slots[st->next % st->nslots].busy && !r->comm->failed) {
        mc_status_t s = post(r, opi, st->next, 1);
        if (s) {
            fail_from_last_error(r, s, op->peer);
            return;
        }
        st->next++;
    }
}

static void post_recvs(mc_request_t *r, int64_t opi)
{
    const mc_op_t *op = &r->prog->ops[opi];
    op_state_t *st = &r->ops[opi];
    while (st->next < op->nchunks && !st->slots[st->next % st->nslots].busy && !r->comm->failed) {
        mc_status_t s = post(r, opi, st->next, 0);
        if (s) {
            fail_from_last_error(r, s, op->peer);
            return;
        }
        st->next++;
    }
}

static void on_data(mc_request_t *r, chunk_xfer_t *cx)
{
    const mc_op_t *op = &r->prog->ops[cx->op];
    op_state_t *st = &r->ops[cx->op];
    int64_t opi = cx->op, k = cx->chunk;
    if (op->kind == MC_OP_RECV && st->bounce &&
        cx->x.buf == st->bounce + (k % st->nslots) * op->chunk_bytes) {
        mc_strided_t dst = view(r, &op->dst);
        mc_status_t s =
            mc_cuda_exec_unpack(&r->gpu, &dst, k * op->chunk_bytes, (int64_t)cx->x.len, cx->x.buf);
        if (s) {
            fail_from_last_error(r, s, -1);
            return;
        }
    }
    cx->busy = 0;
    st->completed++;
    if (op->kind == MC_OP_RECV) {
        arrived(r, opi, k);
        post_recvs(r, opi);
    } else {
        try_send(r, opi);
    }
    if (r->phase == PHASE_RUNNING)
        unit_done(r);
}

static void launch(mc_request_t *r)
{
    const mc_program_t *p = r->prog;
    r->phase = PHASE_RUNNING;
    r->last_activity = mc_now();
    if (r->units_left == 0) {
        start_closing(r);
        return;
    }
    for (int64_t i = 0; i < p->nops && !r->comm->failed; i++)
        if (p->ops[i].kind == MC_OP_RECV)
            post_recvs(r, i);
    for (int64_t j = 0; j < p->nroots && !r->comm->failed; j++) {
        int64_t i = p->roots[j];
        const mc_op_t *op = &p->ops[i];
        if (op->kind == MC_OP_SEND) {
            memset(r->ops[i].avail, 1, (size_t)op->nchunks);
            try_send(r, i);
        } else {
            for (int64_t k = 0; k < op->nchunks && !r->comm->failed && r->phase == PHASE_RUNNING;
                 k++)
                (op->kind == MC_OP_COMBINE ? combine_chunk
                 : op->kind == MC_OP_FILL  ? fill_chunk
                                           : local_copy)(r, i, k);
        }
    }
}

/* ---- plan fingerprint: dissemination allreduce of (min, max) ---- */

/* Posts the next round; on an error fails the communicator (blaming a lost peer). */
static mc_status_t fp_post_round(mc_request_t *r)
{
    int n = r->nmembers, me = r->me, dist = 1 << r->fp_round;
    int to = r->members[(me + dist) % n], from = r->members[((me - dist) % n + n) % n];
    uint64_t msg = FP_MSG_BASE + (uint64_t)r->fp_round;
    r->fp_out[0] = r->fp_have[0];
    r->fp_out[1] = r->fp_have[1];
    r->fp_send.x = (mc_xfer_t){.peer = to,
                               .tag = tag_of(r, to, msg),
                               .buf = r->fp_out,
                               .len = sizeof r->fp_out,
                               .on_done = on_xfer,
                               .owner = r};
    r->fp_recv.x = (mc_xfer_t){.peer = from,
                               .tag = tag_of(r, from, msg),
                               .buf = r->fp_in,
                               .len = sizeof r->fp_in,
                               .on_done = on_xfer,
                               .owner = r};
    r->fp_send.op = r->fp_recv.op = -1;
    r->fp_send.busy = r->fp_recv.busy = 1;
    r->fp_pending = 2;
    mc_transport_t *tp = r->comm->tp;
    mc_status_t s = tp->ops->recv(tp, &r->fp_recv.x);
    chunk_xfer_t *cx = s ? &r->fp_recv : &r->fp_send;
    if (!s)
        s = tp->ops->send(tp, &r->fp_send.x);
    if (s)
        fail_from_last_error(r, s, cx->x.peer);
    return s;
}

static void on_fingerprint(mc_request_t *r, chunk_xfer_t *cx)
{
    cx->busy = 0;
    if (cx == &r->fp_recv) {
        if (r->fp_in[0] < r->fp_have[0])
            r->fp_have[0] = r->fp_in[0];
        if (r->fp_in[1] > r->fp_have[1])
            r->fp_have[1] = r->fp_in[1];
    }
    r->last_activity = mc_now();
    if (--r->fp_pending > 0)
        return;
    if (++r->fp_round < r->fp_rounds) {
        fp_post_round(r);
        return;
    }
    if (r->fp_have[0] != r->fp_have[1]) {
        char msg[MC_ERROR_LEN];
        snprintf(msg, sizeof msg,
                 "rank %d: plans differ between ranks (plan fingerprints range "
                 "from %016llx to %016llx; this rank's is %016llx): every participant must "
                 "pass the same plan (layouts, topology, strategy, chunk size) in the same "
                 "order",
                 r->comm->rank, (unsigned long long)r->fp_have[0],
                 (unsigned long long)r->fp_have[1], (unsigned long long)r->prog->fingerprint);
        mc_request_fail(r, MC_ERR_MISMATCH, msg);
        return;
    }
    launch(r);
}

static void on_xfer(mc_xfer_t *x, mc_status_t status)
{
    chunk_xfer_t *cx = (chunk_xfer_t *)x;
    mc_request_t *r = x->owner;
    if (r->comm->failed || r->phase == PHASE_FAILED)
        return;
    if (status) {
        fail_from_last_error(r, status, x->peer);
        return;
    }
    if (cx->op == BYE_OP) {
        cx->busy = 0;
        r->last_activity = mc_now();
        if (--r->bye_pending == 0)
            finish(r);
    } else if (cx->op < 0) {
        on_fingerprint(r, cx);
    } else {
        on_data(r, cx);
    }
}

/* ---- the single-rank path: worker pool ---- */

static void run_task(mc_pool_job_t *job, int64_t t)
{
    mc_request_t *r = (mc_request_t *)((char *)job - offsetof(mc_request_t, job));
    const mc_task_t *task = &r->prog->tasks[t];
    for (int64_t i = task->op_begin; i < task->op_end; i++) {
        const mc_op_t *op = &r->prog->ops[i];
        int64_t len = task->len < 0 ? op->bytes : task->len, off = task->len < 0 ? 0 : task->off;
        mc_strided_t dst = view(r, &op->dst);
        if (op->kind == MC_OP_COMBINE) {
            mc_combine_boxes(r->prog->dtype, r->prog->reduce, (int)op->nin, r->ops[i].in, &dst, off,
                             len);
        } else if (op->kind == MC_OP_FILL) {
            mc_combine_fill(r->prog->dtype, r->prog->dst_reduce, &dst, off, len);
        } else {
            mc_strided_t src = view(r, &op->src);
            mc_strided_copy(&dst, &src, off, len);
        }
    }
}

/* ---- the single-rank path with CUDA buffers: every op queued on the request's stream ---- */

static mc_status_t run_on_gpu(mc_request_t *r)
{
    const mc_program_t *p = r->prog;
    mc_status_t s = MC_OK;
    for (int64_t i = 0; i < p->nops && !s; i++) {
        const mc_op_t *op = &p->ops[i];
        mc_strided_t dst = view(r, &op->dst);
        if (op->kind == MC_OP_COMBINE) {
            s = mc_cuda_exec_combine(&r->gpu, p->dtype, p->reduce, (int)op->nin, r->ops[i].in, &dst,
                                     0, op->bytes);
        } else {
            mc_strided_t src = view(r, &op->src);
            s = mc_cuda_exec_copy(&r->gpu, &dst, &src, 0, op->bytes);
        }
    }
    return s ? s : mc_cuda_exec_end(&r->gpu);
}

/* Finishes (or fails) r once its stream got through; wait: block until then. */
static void gpu_check(mc_request_t *r, int wait)
{
    mc_status_t s = mc_cuda_exec_test(&r->gpu, wait);
    if (s == MC_OK)
        finish(r);
    else if (s != MC_INPROGRESS)
        mc_request_fail(r, s, mc_last_error());
}

/* ---- start, test, wait ---- */

/* The caller's tiles of one side, checked where this rank's ops use them. */
static mc_status_t take_tiles(const mc_buffer_t *buf, const unsigned char *used, int64_t n,
                              const char *side, void ***out)
{
    void **tiles = mc_calloc((size_t)n + 1, sizeof *tiles);
    if (!tiles)
        return MC_ERR_NOMEM;
    *out = tiles;
    for (int64_t i = 0; i < n; i++) {
        if (!used[i])
            continue;
        if (!buf)
            return mc_error(MC_ERR_INVALID, "%s buffers must not be NULL", side);
        if (!buf[i].ptr)
            return mc_error(MC_ERR_INVALID,
                            "%s buffer of mesh index %lld is NULL (this rank owns "
                            "that device)",
                            side, (long long)i);
        tiles[i] = buf[i].ptr; /* its memory kind: mc_cuda_exec_begin */
    }
    return MC_OK;
}

/* The ranks this one sends to or receives from, each once, and the handshake's xfers. */
static mc_status_t find_peers(mc_request_t *r)
{
    const mc_program_t *p = r->prog;
    char *seen = mc_calloc((size_t)p->nranks, 1);
    r->peers = mc_calloc((size_t)p->nranks, sizeof *r->peers);
    r->bye = mc_calloc(2 * (size_t)p->nranks, sizeof *r->bye);
    if (!seen || !r->peers || !r->bye) {
        free(seen);
        return MC_ERR_NOMEM;
    }
    for (int64_t i = 0; i < p->nops; i++) {
        const mc_op_t *op = &p->ops[i];
        if ((op->kind == MC_OP_SEND || op->kind == MC_OP_RECV) && !seen[op->peer]) {
            seen[op->peer] = 1;
            r->peers[r->npeers++] = op->peer;
        }
    }
    free(seen);
    return MC_OK;
}

static mc_status_t prepare_combine(mc_request_t *r, const mc_op_t *op, op_state_t *st)
{
    st->in = mc_calloc((size_t)op->nin, sizeof *st->in);
    st->arrivals = mc_calloc((size_t)op->nchunks + 1, sizeof *st->arrivals);
    if (!st->in || !st->arrivals)
        return MC_ERR_NOMEM;
    for (int64_t j = 0; j < op->nin; j++)
        st->in[j] = view(r, &r->prog->inputs[op->in0 + j]);
    return MC_OK;
}

/* The transfer state of a SEND or RECV: chunk slots, and pack buffers when strided. */
static mc_status_t prepare_xfer(mc_request_t *r, const mc_op_t *op, op_state_t *st)
{
    const mc_strided_t *box = op->kind == MC_OP_SEND ? &op->src.shape : &op->dst.shape;
    int contiguous = box->run_bytes == box->bytes;
    st->nslots = contiguous ? op->nchunks : (op->nchunks < 2 ? op->nchunks : 2);
    st->slots = mc_calloc((size_t)st->nslots, sizeof *st->slots);
    if (!st->slots)
        return MC_ERR_NOMEM;
    void *bounce = NULL;
    mc_status_t s =
        contiguous ? MC_OK
                   : mc_cuda_exec_alloc(&r->gpu, (size_t)(st->nslots * op->chunk_bytes), &bounce);
    st->bounce = bounce;
    if (s)
        return mc_error_context(s, "pack buffers");
    if (op->kind == MC_OP_SEND && !(st->avail = mc_calloc((size_t)op->nchunks, 1)))
        return MC_ERR_NOMEM;
    return MC_OK;
}

/* Binds the program to this execution's buffers. Only the per-op state of transfers and
 * combines is allocated: the regions' shapes come from the program, so a start of a cached
 * program costs O(mesh size) on one rank. */
static mc_status_t prepare(mc_request_t *r, const mc_buffer_t *src, const mc_buffer_t *dst)
{
    const mc_program_t *p = r->prog;
    mc_status_t s;
    if ((s = take_tiles(src, p->src_used, p->src_mesh_size, "src", &r->src_tile)) ||
        (s = take_tiles(dst, p->dst_used, p->dst_mesh_size, "dst", &r->dst_tile)))
        return s;
    int64_t staging = p->staging_off[p->nstaging];
    void *stage = NULL;
    if (staging && (s = mc_cuda_exec_alloc(&r->gpu, (size_t)staging, &stage)))
        return mc_error_context(s, "%lld staging bytes", (long long)staging);
    r->staging = stage;
    if (!r->comm->tp && p->ninputs == 0)
        return MC_OK;
    if (!(r->ops = mc_calloc((size_t)p->nops, sizeof *r->ops)))
        return MC_ERR_NOMEM;
    for (int64_t i = 0; i < p->nops; i++) {
        const mc_op_t *op = &p->ops[i];
        if (op->kind == MC_OP_COMBINE && (s = prepare_combine(r, op, &r->ops[i])))
            return s;
        if (r->comm->tp && (op->kind == MC_OP_SEND || op->kind == MC_OP_RECV) &&
            (s = prepare_xfer(r, op, &r->ops[i])))
            return s;
    }
    return r->comm->tp ? find_peers(r) : MC_OK;
}

/* The participants (member[r] set) and this request's id with each of them. */
static mc_status_t assign_ids(mc_request_t *r, const unsigned char *member)
{
    mc_comm_t *c = r->comm;
    r->pseq = mc_calloc((size_t)c->nranks, 1);
    r->members = mc_calloc((size_t)c->nranks, sizeof *r->members);
    if (!r->pseq || !r->members)
        return MC_ERR_NOMEM;
    for (int p = 0; p < c->nranks; p++) {
        if (!member[p])
            continue;
        if (p == c->rank)
            r->me = r->nmembers;
        r->members[r->nmembers++] = p;
        if (p != c->rank)
            r->pseq[p] = c->pair_seq[p]++;
    }
    return MC_OK;
}

static void request_release(mc_request_t *r)
{
    live_unlink(r);
    if (r->ops)
        for (int64_t i = 0; i < r->prog->nops; i++) {
            free(r->ops[i].slots);
            mc_cuda_exec_release(&r->gpu, r->ops[i].bounce);
            free(r->ops[i].avail);
            free(r->ops[i].in);
            free(r->ops[i].arrivals);
        }
    free(r->ops);
    free(r->peers);
    free(r->bye);
    free(r->pseq);
    free(r->members);
    mc_cuda_exec_release(&r->gpu, r->staging);
    mc_cuda_exec_free(&r->gpu);
    free(r->src_tile);
    free(r->dst_tile);
    mc_program_cache_release(r->cached);
    free(r);
}

static mc_status_t start_locked(mc_comm_t *comm, const mc_plan_t *plan, const mc_buffer_t *src,
                                const mc_buffer_t *dst, const mc_reshard_params_t *params,
                                mc_request_t **out)
{
    if (comm->failed)
        return mc_error(comm->failed, "reshard: the communicator failed earlier: %s",
                        comm->failure);
    int64_t chunk = 0;
    if (params && (params->field_mask & MC_RESHARD_PARAM_CHUNK_BYTES)) {
        if (params->chunk_bytes <= 0)
            return mc_error(MC_ERR_INVALID, "reshard: chunk_bytes %lld must be positive",
                            (long long)params->chunk_bytes);
        chunk = params->chunk_bytes;
    }
    int inflight = 0;
    for (mc_request_t *q = comm->inflight; q; q = q->next)
        inflight++;
    if (inflight >= MAX_INFLIGHT)
        return mc_error(MC_ERR_UNSUPPORTED,
                        "reshard: %d reshards already in flight on this "
                        "communicator (at most %d)",
                        inflight, MAX_INFLIGHT);
    mc_request_t *r = mc_calloc(1, sizeof *r);
    if (!r)
        return MC_ERR_NOMEM;
    r->comm = comm;
    live_link(r);
    /* every rank compiles (once): the program knows the participants too */
    mc_status_t s = mc_program_cache_get(comm, plan, chunk, &r->cached);
    if (s)
        goto err;
    r->prog = r->cached->prog;
    if (!r->prog->member[comm->rank]) { /* nothing to do here: done at once, no id used up */
        r->phase = PHASE_DONE;
        *out = r;
        return MC_OK;
    }
    if ((comm->tp && (s = assign_ids(r, r->prog->member))) ||
        (s = mc_cuda_exec_begin(&r->gpu, r->prog, src, dst, comm->nranks, comm->kind)))
        goto err;
    if (r->gpu.on && r->prog->dst_reduce != MC_REDUCE_NONE) {
        s = mc_error(MC_ERR_UNSUPPORTED, "reshard: a Partial destination with CUDA buffers is not "
                                         "supported yet (no fill kernel)");
        goto err;
    }
    if ((s = prepare(r, src, dst)) || (s = mc_cuda_exec_ready(&r->gpu)))
        goto err;
    r->units_left = r->prog->units;
    link_request(r);
    if (!comm->tp && r->gpu.on) {
        if ((s = run_on_gpu(r)))
            goto err_unlink;
        r->phase = PHASE_RUNNING;
    } else if (!comm->tp) {
        r->job.run = run_task;
        r->job.ntasks = r->prog->ntasks;
        r->phase = PHASE_RUNNING;
        mc_pool_submit(comm->pool, &r->job);
    } else if (r->nmembers > 1) {
        r->phase = PHASE_FINGERPRINT;
        r->fp_have[0] = r->fp_have[1] = r->prog->fingerprint;
        while ((1 << r->fp_rounds) < r->nmembers)
            r->fp_rounds++;
        if ((s = fp_post_round(r)))
            goto err_unlink; /* the communicator failed */
    } else {
        launch(r);
    }
    *out = r;
    return MC_OK;
err_unlink:
    unlink_request(r);
err:
    request_release(r);
    return s;
}

mc_status_t mc_reshard_start(mc_comm_t *comm, const mc_plan_t *plan, const mc_buffer_t *src,
                             const mc_buffer_t *dst, const mc_reshard_params_t *params,
                             mc_request_t **out)
{
    if (!comm || !plan || !out)
        return mc_error(MC_ERR_INVALID, "reshard: comm, plan and out must not be NULL");
    mc_comm_lock(comm);
    mc_status_t s = start_locked(comm, plan, src, dst, params, out);
    mc_comm_unlock(comm);
    return s;
}

/* The request's outcome so far (raising its error in the caller's thread). */
static mc_status_t outcome(const mc_request_t *r)
{
    if (r->phase == PHASE_FAILED)
        return mc_error(r->status, "%s", r->error);
    return r->phase == PHASE_DONE ? MC_OK : MC_INPROGRESS;
}

mc_status_t mc_request_test(mc_request_t *r)
{
    if (!r)
        return mc_error(MC_ERR_INVALID, "request must not be NULL");
    if (!r->comm) /* over since its communicator was destroyed */
        return outcome(r);
    mc_comm_lock(r->comm);
    if (r->gpu.on && !r->comm->tp) {
        if (r->phase == PHASE_RUNNING)
            gpu_check(r, 0);
    } else if (r->job.run) {
        if (r->phase == PHASE_RUNNING && mc_pool_finished(r->comm->pool, &r->job))
            finish(r);
    } else if (r->phase < PHASE_DONE && !r->comm->progress) {
        mc_comm_progress(r->comm, 0);
    }
    mc_status_t s = outcome(r);
    mc_comm_unlock(r->comm);
    return s;
}

static mc_status_t wait_locked(mc_request_t *r)
{
    if (r->gpu.on && !r->comm->tp) {
        if (r->phase == PHASE_RUNNING)
            gpu_check(r, 1);
    } else if (r->comm->progress) {
        while (r->phase < PHASE_DONE)
            mc_progress_wait(r->comm);
    } else if (r->job.run) {
        if (r->phase == PHASE_RUNNING) {
            mc_pool_wait(r->comm->pool, &r->job);
            finish(r);
        }
    } else {
        while (r->phase < PHASE_DONE) {
            double idle = mc_now() - r->last_activity;
            double left = r->comm->timeout_s - idle;
            /* past the timeout, the probe of the peers decides (ctrl.c) */
            mc_comm_progress(r->comm, left > 0.5 ? 0.5 : left > 0.001 ? left : 0.02);
        }
    }
    return outcome(r);
}

mc_status_t mc_request_wait(mc_request_t *r)
{
    if (!r)
        return mc_error(MC_ERR_INVALID, "request must not be NULL");
    if (!r->comm)
        return outcome(r);
    mc_comm_lock(r->comm);
    mc_status_t s = wait_locked(r);
    mc_comm_unlock(r->comm);
    return s;
}

void mc_request_free(mc_request_t *r)
{
    if (!r)
        return;
    mc_comm_t *c = r->comm;
    if (!c) {
        request_release(r);
        return;
    }
    mc_comm_lock(c);
    if (r->phase < PHASE_DONE)
        wait_locked(r);
    unlink_request(r);
    request_release(r);
    mc_comm_unlock(c);
}

mc_status_t mc_reshard(mc_comm_t *comm, const mc_plan_t *plan, const mc_buffer_t *src,
                       const mc_buffer_t *dst, const mc_reshard_params_t *params)
{
    mc_request_t *r;
    mc_status_t s = mc_reshard_start(comm, plan, src, dst, params, &r);
    if (s)
        return s;
    s = mc_request_wait(r);
    char msg[MC_ERROR_LEN];
    snprintf(msg, sizeof msg, "%s", mc_last_error());
    mc_request_free(r);
    if (s)
        mc_error(s, "%s", msg);
    return s;
}

mc_status_t mc_comm_gather(mc_comm_t *comm, const void *send, void *recv, size_t size)
{
    if (comm->failed)
        return mc_error(comm->failed, "allgather: the communicator failed earlier: %s",
                        comm->failure);
    char none = 0; /* a barrier's zero bytes still need valid addresses */
    if (!size)
        send = recv = &none;
    mc_request_t *r = mc_calloc(1, sizeof *r);
    if (!r)
        return MC_ERR_NOMEM;
    r->comm = comm;
    unsigned char *all = mc_calloc((size_t)comm->nranks, 1);
    r->peers = mc_calloc((size_t)comm->nranks, sizeof *r->peers);
    r->bye = mc_calloc(2 * (size_t)comm->nranks, sizeof *r->bye);
    if (all)
        memset(all, 1, (size_t)comm->nranks);
    mc_status_t s = all && r->peers && r->bye ? assign_ids(r, all) : MC_ERR_NOMEM;
    free(all);
    if (s) {
        request_release(r);
        return s;
    }
    for (int p = 0; p < comm->nranks; p++)
        if (p != comm->rank)
            r->peers[r->npeers++] = p;
    memmove((char *)recv + (size_t)comm->rank * size, send, size);
    link_request(r);
    exchange(r, GATHER_MSG, (void *)send, recv, size);
    s = wait_locked(r);
    char msg[MC_ERROR_LEN];
    snprintf(msg, sizeof msg, "%s", mc_last_error());
    unlink_request(r);
    request_release(r);
    if (s)
        mc_error(s, "%s", msg);
    return s;
}
