/* Ranks as threads of one process: the shared world behind the "threads" bootstrap and the
 * in-process transport for several ranks. A send waits in the receiver's mailbox until the
 * receive is posted (or the other way round); the copy then runs outside the lock, on the
 * thread that made the match. Completions go to each rank's queue and run in its progress. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bootstrap/bootstrap.h"
#include "transport/transport.h"
#include "util/util.h"
#if MESHCAST_HAVE_CUDA
#include "gpu/gpu.h"
#endif

#define BUCKETS 1024

typedef struct {
    mc_xfer_t *head, *tail;
} queue_t;

typedef struct {
    queue_t sends[BUCKETS]; /* sends to this rank no receive has matched yet */
    queue_t recvs[BUCKETS]; /* receives posted by this rank, not matched yet */
    queue_t done;           /* completions waiting for this rank's progress */
    pthread_cond_t cond;    /* signalled when done gets an entry */
    int copying;            /* matched transfers of this rank being copied right now */
    int aborted, attached;
} mailbox_t;

struct mc_world {
    int nranks;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* allgather phases, copy completion */
    mailbox_t *boxes;
    /* allgather: ranks write their part, wait for all, read, then leave */
    char *gather;
    size_t gather_size;
    int arrived, leaving;
    uint64_t generation;
};

static void timeout_at(struct timespec *ts, double seconds)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    double s = (double)ts->tv_sec + ts->tv_nsec * 1e-9 + seconds;
    ts->tv_sec = (time_t)s;
    ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
}

static mc_status_t cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
    return rc ? mc_error(MC_ERR_NOMEM, "world: pthread_cond_init failed") : MC_OK;
}

mc_status_t mc_world_create(int nranks, mc_world_t **out)
{
    if (!out)
        return mc_error(MC_ERR_INVALID, "world: out must not be NULL");
    if (nranks < 1 || nranks > 4096)
        return mc_error(MC_ERR_INVALID, "world: nranks %d is not in [1, 4096]", nranks);
    mc_world_t *w = mc_calloc(1, sizeof *w);
    if (!w)
        return MC_ERR_NOMEM;
    w->nranks = nranks;
    w->boxes = mc_calloc((size_t)nranks, sizeof *w->boxes);
    if (!w->boxes) {
        free(w);
        return MC_ERR_NOMEM;
    }
    pthread_mutex_init(&w->lock, NULL);
    cond_init_monotonic(&w->cond);
    for (int r = 0; r < nranks; r++)
        cond_init_monotonic(&w->boxes[r].cond);
    *out = w;
    return MC_OK;
}

void mc_world_destroy(mc_world_t *w)
{
    if (!w)
        return;
    for (int r = 0; r < w->nranks; r++)
        pthread_cond_destroy(&w->boxes[r].cond);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w->boxes);
    free(w->gather);
    free(w);
}

/* ---- bootstrap ---- */

typedef struct {
    mc_bootstrap_t base;
    mc_world_t *world;
} threads_boot_t;

static mc_status_t threads_allgather(mc_bootstrap_t *b, const void *send, void *recv, size_t size,
                                     double timeout_s)
{
    mc_world_t *w = ((threads_boot_t *)b)->world;
    struct timespec deadline;
    timeout_at(&deadline, timeout_s);
    mc_status_t s = MC_OK;
    pthread_mutex_lock(&w->lock);
    while (w->leaving > 0) /* the previous allgather is still being read */
        if (pthread_cond_timedwait(&w->cond, &w->lock, &deadline) == ETIMEDOUT)
            goto timeout;
    if (w->arrived == 0) {
        char *g = realloc(w->gather, size * (size_t)w->nranks + 1);
        if (!g) {
            s = mc_error(MC_ERR_NOMEM, "world allgather: out of memory");
            goto out;
        }
        w->gather = g;
        w->gather_size = size;
    } else if (w->gather_size != size) {
        s = mc_error(MC_ERR_MISMATCH, "world allgather: rank %d gives %zu bytes, another rank %zu",
                     b->rank, size, w->gather_size);
        goto out;
    }
    memcpy(w->gather + size * (size_t)b->rank, send, size);
    uint64_t gen = w->generation;
    if (++w->arrived == w->nranks) {
        w->arrived = 0;
        w->leaving = w->nranks;
        w->generation++;
        pthread_cond_broadcast(&w->cond);
    }
    while (w->generation == gen)
        if (pthread_cond_timedwait(&w->cond, &w->lock, &deadline) == ETIMEDOUT)
            goto timeout;
    memcpy(recv, w->gather, size * (size_t)w->nranks);
    if (--w->leaving == 0)
        pthread_cond_broadcast(&w->cond);
out:
    pthread_mutex_unlock(&w->lock);
    return s;
timeout:
    pthread_mutex_unlock(&w->lock);
    return mc_error(MC_ERR_TIMEOUT,
                    "rank %d: threads allgather timed out after %g s (%d of %d "
                    "ranks arrived)",
                    b->rank, timeout_s, w->arrived, w->nranks);
}

static void threads_boot_destroy(mc_bootstrap_t *b)
{
    free(b);
}

mc_status_t mc_bootstrap_threads(mc_world_t *world, int rank, mc_bootstrap_t **out)
{
    if (!world)
        return mc_error(MC_ERR_INVALID, "threads bootstrap: world must not be NULL");
    if (rank < 0 || rank >= world->nranks)
        return mc_error(MC_ERR_INVALID, "threads bootstrap: rank %d is not in [0, %d)", rank,
                        world->nranks);
    threads_boot_t *b = mc_calloc(1, sizeof *b);
    if (!b)
        return MC_ERR_NOMEM;
    b->base = (mc_bootstrap_t){.rank = rank,
                               .nranks = world->nranks,
                               .name = "threads",
                               .allgather = threads_allgather,
                               .destroy = threads_boot_destroy};
    b->world = world;
    *out = &b->base;
    return MC_OK;
}

/* ---- transport ---- */

typedef struct {
    mc_transport_t base;
    mc_world_t *world;
} threads_tp_t;

static unsigned bucket(int peer, uint64_t tag)
{
    uint64_t h = (tag ^ ((uint64_t)peer << 40)) * 0x9E3779B97F4A7C15ULL;
    return (unsigned)(h >> 54) % BUCKETS;
}

static void push(queue_t *q, mc_xfer_t *x)
{
    x->tp_data = NULL;
    if (q->tail)
        q->tail->tp_data = x;
    else
        q->head = x;
    q->tail = x;
}

/* Removes and returns the first entry from rank `from` with tag, or NULL. A queued receive
 * names its sender in peer; a queued send carries its sender in tp_status. */
static mc_xfer_t *take(queue_t *q, int from, uint64_t tag, int sends)
{
    mc_xfer_t *prev = NULL;
    for (mc_xfer_t *x = q->head; x; prev = x, x = x->tp_data) {
        if ((sends ? x->tp_status : x->peer) != from || x->tag != tag)
            continue;
        if (prev)
            prev->tp_data = x->tp_data;
        else
            q->head = x->tp_data;
        if (q->tail == x)
            q->tail = prev;
        return x;
    }
    return NULL;
}

/* Removes every entry that match() accepts. */
static void drop_if(queue_t *q, int (*match)(const mc_xfer_t *, int), int arg)
{
    mc_xfer_t *prev = NULL, *x = q->head;
    while (x) {
        mc_xfer_t *next = x->tp_data;
        if (match(x, arg)) {
            if (prev)
                prev->tp_data = next;
            else
                q->head = next;
            if (q->tail == x)
                q->tail = prev;
        } else {
            prev = x;
        }
        x = next;
    }
}

/* Copies a matched pair outside the lock, then queues both completions. */
static void complete_pair(mc_world_t *w, mc_xfer_t *send, int sender, mc_xfer_t *recv, int receiver)
{
    w->boxes[sender].copying++;
    w->boxes[receiver].copying++;
    pthread_mutex_unlock(&w->lock);
    int ok = send->len == recv->len;
    mc_status_t s = MC_OK;
#if MESHCAST_HAVE_CUDA
    if (ok && send->len && (send->cuda || recv->cuda))
        s = mc_gpu_memcpy(recv->buf, send->buf, send->len); /* peer copy where GPUs differ */
    else
#endif
        if (ok && send->len)
        memcpy(recv->buf, send->buf, send->len);
    pthread_mutex_lock(&w->lock);
    send->tp_status = recv->tp_status = !ok ? MC_ERR_MISMATCH : s;
    mailbox_t *sb = &w->boxes[sender], *rb = &w->boxes[receiver];
    sb->copying--;
    rb->copying--;
    if (!sb->aborted)
        push(&sb->done, send);
    if (!rb->aborted)
        push(&rb->done, recv);
    pthread_cond_signal(&sb->cond);
    pthread_cond_signal(&rb->cond);
    pthread_cond_broadcast(&w->cond); /* an abort may wait for copying == 0 */
}

static mc_status_t threads_send(mc_transport_t *tp, mc_xfer_t *x)
{
    mc_world_t *w = ((threads_tp_t *)tp)->world;
    int me = tp->rank;
    if (x->peer < 0 || x->peer >= w->nranks || x->peer == me)
        return mc_error(MC_ERR_INVALID, "rank %d: send to rank %d of %d", me, x->peer, w->nranks);
    pthread_mutex_lock(&w->lock);
    if (w->boxes[me].aborted) {
        pthread_mutex_unlock(&w->lock);
        return mc_error(MC_ERR_PEER, "rank %d: transport aborted", me);
    }
    mailbox_t *to = &w->boxes[x->peer];
    mc_xfer_t *r = take(&to->recvs[bucket(me, x->tag)], me, x->tag, 0);
    if (r)
        complete_pair(w, x, me, r, x->peer);
    else {
        x->tp_status = me; /* lets an abort find its sends in other mailboxes */
        push(&to->sends[bucket(me, x->tag)], x);
    }
    pthread_mutex_unlock(&w->lock);
    return MC_OK;
}

static mc_status_t threads_recv(mc_transport_t *tp, mc_xfer_t *x)
{
    mc_world_t *w = ((threads_tp_t *)tp)->world;
    int me = tp->rank;
    if (x->peer < 0 || x->peer >= w->nranks || x->peer == me)
        return mc_error(MC_ERR_INVALID, "rank %d: receive from rank %d of %d", me, x->peer,
                        w->nranks);
    pthread_mutex_lock(&w->lock);
    mailbox_t *box = &w->boxes[me];
    if (box->aborted) {
        pthread_mutex_unlock(&w->lock);
        return mc_error(MC_ERR_PEER, "rank %d: transport aborted", me);
    }
    mc_xfer_t *snd = take(&box->sends[bucket(x->peer, x->tag)], x->peer, x->tag, 1);
    if (snd)
        complete_pair(w, snd, x->peer, x, me);
    else
        push(&box->recvs[bucket(x->peer, x->tag)], x);
    pthread_mutex_unlock(&w->lock);
    return MC_OK;
}

static mc_status_t threads_progress(mc_transport_t *tp, double wait_s)
{
    mc_world_t *w = ((threads_tp_t *)tp)->world;
    mailbox_t *box = &w->boxes[tp->rank];
    pthread_mutex_lock(&w->lock);
    if (!box->done.head && wait_s > 0) {
        struct timespec deadline;
        timeout_at(&deadline, wait_s);
        while (!box->done.head && !box->aborted)
            if (pthread_cond_timedwait(&box->cond, &w->lock, &deadline) == ETIMEDOUT)
                break;
    }
    mc_xfer_t *x = box->done.head;
    box->done.head = box->done.tail = NULL;
    pthread_mutex_unlock(&w->lock);
    /* Callbacks may post new transfers, so they run without the lock. */
    while (x) {
        mc_xfer_t *next = x->tp_data;
        if (x->tp_status)
            mc_error(x->tp_status, "rank %d: message %llu with rank %d: %s", tp->rank,
                     (unsigned long long)x->tag, x->peer,
                     x->tp_status == MC_ERR_MISMATCH ? "sizes differ between sender and receiver"
                                                     : "the copy between GPU buffers failed");
        x->on_done(x, x->tp_status);
        x = next;
    }
    return MC_OK;
}

static int any(const mc_xfer_t *x, int rank)
{
    (void)x;
    (void)rank;
    return 1;
}

static int from_rank(const mc_xfer_t *x, int rank)
{
    return x->tp_status == rank;
}

static void threads_abort(mc_transport_t *tp)
{
    mc_world_t *w = ((threads_tp_t *)tp)->world;
    int me = tp->rank;
    pthread_mutex_lock(&w->lock);
    mailbox_t *box = &w->boxes[me];
    box->aborted = 1;
    for (int b = 0; b < BUCKETS; b++)
        drop_if(&box->recvs[b], any, me);
    /* Our sends waiting in other mailboxes: tp_status carries the sender while queued. */
    for (int r = 0; r < w->nranks; r++)
        for (int b = 0; b < BUCKETS; b++)
            drop_if(&w->boxes[r].sends[b], from_rank, me);
    while (box->copying > 0)
        pthread_cond_wait(&w->cond, &w->lock);
    box->done.head = box->done.tail = NULL;
    pthread_mutex_unlock(&w->lock);
}

static void threads_destroy(mc_transport_t *tp)
{
    if (!tp)
        return;
    threads_abort(tp);
    mc_world_t *w = ((threads_tp_t *)tp)->world;
    pthread_mutex_lock(&w->lock);
    memset(&w->boxes[tp->rank].sends, 0, sizeof w->boxes[tp->rank].sends);
    w->boxes[tp->rank].attached = 0;
    pthread_mutex_unlock(&w->lock);
    free(tp);
}

static const mc_transport_ops_t threads_ops = {.name = "local",
                                               .send = threads_send,
                                               .recv = threads_recv,
                                               .progress = threads_progress,
                                               .abort = threads_abort,
                                               .destroy = threads_destroy};

mc_status_t mc_transport_threads_create(mc_world_t *world, int rank, mc_transport_t **out)
{
    if (!world || rank < 0 || rank >= world->nranks)
        return mc_error(MC_ERR_INVALID, "threads transport: rank %d is not in the world", rank);
    threads_tp_t *t = mc_calloc(1, sizeof *t);
    if (!t)
        return MC_ERR_NOMEM;
    pthread_mutex_lock(&world->lock);
    mailbox_t *box = &world->boxes[rank];
    if (box->attached) {
        pthread_mutex_unlock(&world->lock);
        free(t);
        return mc_error(MC_ERR_INVALID,
                        "threads transport: rank %d already has a communicator "
                        "in this world",
                        rank);
    }
    box->attached = 1;
    box->aborted = 0;
    pthread_mutex_unlock(&world->lock);
    t->base = (mc_transport_t){.ops = &threads_ops, .rank = rank, .nranks = world->nranks};
    t->world = world;
    *out = &t->base;
    return MC_OK;
}
