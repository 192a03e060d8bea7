/* Data-parallel gradient reduction (data_parallel.h). */
#include "data_parallel.h"
#include "errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int *params, nparams;
    size_t len; /* packed elements */
    float *pack, *sum;
    mc_plan_t *plan;
    mc_request_t *req;
    mc_buffer_t *src, *dst; /* per mesh device; only this rank's entry is set */
} bucket_t;

struct tr_dp {
    int D, me, n; /* n: mesh devices */
    bucket_t *b;
    int nb;
};

static int make_plan(bucket_t *b, int D, const mc_topology_t *topo, const int64_t *devices, int T,
                     mc_strategy_t strategy, mc_sender_choice_t sender)
{
    const int64_t mshape[2] = {D, T}, shape[2] = {T, (int64_t)b->len};
    mc_mesh_t *mesh = NULL;
    mc_spec_t *ps = NULL, *rs = NULL;
    mc_layout_t *partial = NULL, *replicated = NULL;
    mc_plan_params_t pp = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER,
                           .strategy = strategy,
                           .sender = sender};
    mc_status_t s = mc_mesh_create(2, mshape, devices, NULL, &mesh);
    s = s ? s : mc_spec_parse("S1RP0", mesh, 2, &ps);
    s = s ? s : mc_spec_parse("S1R", mesh, 2, &rs);
    s = s ? s : mc_layout_create(2, shape, MC_DTYPE_F32, mesh, ps, &partial);
    s = s ? s : mc_layout_create(2, shape, MC_DTYPE_F32, mesh, rs, &replicated);
    s = s ? s : mc_plan_create(partial, replicated, topo, &pp, &b->plan);
    mc_layout_destroy(partial);
    mc_layout_destroy(replicated);
    mc_spec_destroy(ps);
    mc_spec_destroy(rs);
    mc_mesh_destroy(mesh);
    return s ? -1 : 0;
}

int tr_dp_create(const mc_topology_t *topo, const int64_t *devices, int D, int T, int me,
                 const tr_params *ps, const int *bucket_of, int nbuckets, mc_strategy_t strategy,
                 mc_sender_choice_t sender, tr_dp **out, char *err, size_t len)
{
    tr_dp *dp = calloc(1, sizeof(*dp));
    *out = dp;
    if (!dp || !(dp->b = calloc((size_t)nbuckets + 1, sizeof(*dp->b))))
        return tr_fail(err, len, "out of memory");
    dp->D = D;
    dp->me = me;
    dp->n = D * T;
    dp->nb = nbuckets;
    for (int k = 0; k < nbuckets; k++)
        if (!(dp->b[k].params = calloc((size_t)ps->count + 1, sizeof(int))))
            return tr_fail(err, len, "out of memory");
    for (int i = 0; i < ps->count; i++)
        if (bucket_of[i] >= 0) {
            bucket_t *b = &dp->b[bucket_of[i]];
            b->params[b->nparams++] = i;
            b->len += (size_t)ps->p[i].grad.size;
        }
    if (D == 1)
        return 0;
    for (int k = 0; k < nbuckets; k++) {
        bucket_t *b = &dp->b[k];
        if (!b->len) /* a bucket of layers without parameters: nothing to sum */
            continue;
        if (!(b->pack = tr_alloc(b->len)) || !(b->sum = tr_alloc(b->len)) ||
            !(b->src = calloc((size_t)dp->n, sizeof(*b->src))) ||
            !(b->dst = calloc((size_t)dp->n, sizeof(*b->dst))))
            return tr_fail(err, len, "out of memory");
        b->src[me] = (mc_buffer_t){.ptr = b->pack, .memory = MC_MEMORY_HOST};
        b->dst[me] = (mc_buffer_t){.ptr = b->sum, .memory = MC_MEMORY_HOST};
        if (make_plan(b, D, topo, devices, T, strategy, sender))
            return tr_fail(err, len, "data-parallel gradient plan: %s", mc_last_error());
    }
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tr_dp_start(tr_dp *dp, mc_comm_t *comm, const tr_params *ps, int k, char *err, size_t len)
{
    bucket_t *b = &dp->b[k];
    if (dp->D == 1 || !b->len)
        return 0;
    size_t off = 0;
    for (int i = 0; i < b->nparams; i++) {
        const tr_tensor *g = &ps->p[b->params[i]].grad;
        memcpy(b->pack + off, g->data, (size_t)g->size * sizeof(float));
        off += (size_t)g->size;
    }
    if (mc_reshard_start(comm, b->plan, b->src, b->dst, NULL, &b->req))
        return tr_fail(err, len, "data-parallel gradient reduction: %s", mc_last_error());
    return 0;
}

int tr_dp_wait(tr_dp *dp, tr_params *ps, int k, double *blocked, char *err, size_t len)
{
    bucket_t *b = &dp->b[k];
    *blocked = 0.0;
    if (!b->req)
        return 0;
    double t0 = now();
    mc_status_t s = mc_request_wait(b->req);
    *blocked = now() - t0;
    mc_request_free(b->req);
    b->req = NULL;
    if (s)
        return tr_fail(err, len, "data-parallel gradient reduction: %s", mc_last_error());
    size_t off = 0;
    for (int i = 0; i < b->nparams; i++) {
        const tr_tensor *g = &ps->p[b->params[i]].grad;
        memcpy(g->data, b->sum + off, (size_t)g->size * sizeof(float));
        off += (size_t)g->size;
    }
    return 0;
}

int tr_dp_reduce(tr_dp *dp, mc_comm_t *comm, tr_params *ps, double *seconds, char *err, size_t len)
{
    double t0 = now(), blocked;
    for (int k = 0; k < dp->nb; k++)
        if (tr_dp_start(dp, comm, ps, k, err, len) || tr_dp_wait(dp, ps, k, &blocked, err, len))
            return -1;
    *seconds = dp->D > 1 ? now() - t0 : 0.0;
    return 0;
}

void tr_dp_abort(tr_dp *dp)
{
    for (int k = 0; dp && k < dp->nb; k++) {
        mc_request_free(dp->b[k].req);
        dp->b[k].req = NULL;
    }
}

void tr_dp_free(tr_dp *dp)
{
    if (!dp)
        return;
    for (int k = 0; dp->b && k < dp->nb; k++) {
        mc_request_free(dp->b[k].req);
        mc_plan_destroy(dp->b[k].plan);
        free(dp->b[k].params);
        free(dp->b[k].pack);
        free(dp->b[k].sum);
        free(dp->b[k].src);
        free(dp->b[k].dst);
    }
    free(dp->b);
    free(dp);
}
