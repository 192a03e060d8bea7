/* Data-parallel gradient reduction (data_parallel.h). */
#include "data_parallel.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tr_dp {
    int D, me, n; /* n: mesh devices */
    int *params, nparams;
    size_t len; /* packed elements */
    float *pack, *sum;
    mc_plan_t *plan;
    mc_buffer_t *src, *dst; /* per mesh device; only this rank's entry is set */
};

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int make_plan(tr_dp *dp, const mc_topology_t *topo, const int64_t *devices, int T,
                     mc_strategy_t strategy, mc_sender_choice_t sender)
{
    const int64_t mshape[2] = {dp->D, T}, shape[2] = {T, (int64_t)dp->len};
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
    s = s ? s : mc_plan_create(partial, replicated, topo, &pp, &dp->plan);
    mc_layout_destroy(partial);
    mc_layout_destroy(replicated);
    mc_spec_destroy(ps);
    mc_spec_destroy(rs);
    mc_mesh_destroy(mesh);
    return s ? -1 : 0;
}

int tr_dp_create(const mc_topology_t *topo, const int64_t *devices, int D, int T, int me,
                 const tr_params *ps, const unsigned char *owned, mc_strategy_t strategy,
                 mc_sender_choice_t sender, tr_dp **out, char *err, size_t len)
{
    tr_dp *dp = calloc(1, sizeof(*dp));
    *out = dp;
    if (!dp || !(dp->params = calloc((size_t)ps->count + 1, sizeof(int))))
        return fail(err, len, "out of memory");
    dp->D = D;
    dp->me = me;
    dp->n = D * T;
    for (int i = 0; i < ps->count; i++)
        if (owned[i]) {
            dp->params[dp->nparams++] = i;
            dp->len += (size_t)ps->p[i].grad.size;
        }
    if (D == 1)
        return 0;
    dp->pack = tr_alloc(dp->len);
    dp->sum = tr_alloc(dp->len);
    dp->src = calloc((size_t)dp->n, sizeof(*dp->src));
    dp->dst = calloc((size_t)dp->n, sizeof(*dp->dst));
    if (!dp->pack || !dp->sum || !dp->src || !dp->dst)
        return fail(err, len, "out of memory");
    dp->src[me] = (mc_buffer_t){.ptr = dp->pack, .memory = MC_MEMORY_HOST};
    dp->dst[me] = (mc_buffer_t){.ptr = dp->sum, .memory = MC_MEMORY_HOST};
    if (make_plan(dp, topo, devices, T, strategy, sender))
        return fail(err, len, "data-parallel gradient plan: %s", mc_last_error());
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tr_dp_reduce(tr_dp *dp, mc_comm_t *comm, tr_params *ps, double *seconds, char *err, size_t len)
{
    *seconds = 0.0;
    if (dp->D == 1)
        return 0;
    double t0 = now();
    size_t off = 0;
    for (int k = 0; k < dp->nparams; k++) {
        const tr_tensor *g = &ps->p[dp->params[k]].grad;
        memcpy(dp->pack + off, g->data, (size_t)g->size * sizeof(float));
        off += (size_t)g->size;
    }
    if (mc_reshard(comm, dp->plan, dp->src, dp->dst, NULL))
        return fail(err, len, "data-parallel gradient reduction: %s", mc_last_error());
    off = 0;
    for (int k = 0; k < dp->nparams; k++) {
        const tr_tensor *g = &ps->p[dp->params[k]].grad;
        memcpy(g->data, dp->sum + off, (size_t)g->size * sizeof(float));
        off += (size_t)g->size;
    }
    *seconds = now() - t0;
    return 0;
}

void tr_dp_free(tr_dp *dp)
{
    if (!dp)
        return;
    mc_plan_destroy(dp->plan);
    free(dp->params);
    free(dp->pack);
    free(dp->sum);
    free(dp->src);
    free(dp->dst);
    free(dp);
}
