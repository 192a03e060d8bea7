/* Tensor-parallel sums (tensor_parallel.h). */
#include "tensor_parallel.h"

#include "tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tr_tp {
    mc_comm_t *comm;
    mc_plan_t *plan;
    size_t n;      /* elements */
    float *addend; /* the reshard's source: a copy of the caller's buffer */
    mc_buffer_t *src, *dst;
    int me;
    double seconds;
    int failed;
    char err[256];
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tr_tp_create(mc_comm_t *comm, const mc_topology_t *topo, const int64_t *devices, int T, int me,
                 int64_t rows, int64_t cols, mc_strategy_t strategy, mc_sender_choice_t sender,
                 tr_tp **out, char *err, size_t len)
{
    const int64_t mshape[1] = {T}, shape[2] = {rows, cols};
    tr_tp *tp = calloc(1, sizeof(*tp));
    *out = tp;
    if (!tp || !(tp->addend = tr_alloc((size_t)rows * cols)) ||
        !(tp->src = calloc((size_t)T, sizeof(*tp->src))) ||
        !(tp->dst = calloc((size_t)T, sizeof(*tp->dst)))) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    tp->comm = comm;
    tp->n = (size_t)rows * cols;
    tp->me = me;
    tp->src[me] = (mc_buffer_t){.ptr = tp->addend, .memory = MC_MEMORY_HOST};
    mc_mesh_t *mesh = NULL;
    mc_spec_t *ps = NULL, *rs = NULL;
    mc_layout_t *partial = NULL, *replicated = NULL;
    mc_plan_params_t pp = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER,
                           .strategy = strategy,
                           .sender = sender};
    mc_status_t s = mc_mesh_create(1, mshape, devices, NULL, &mesh);
    s = s ? s : mc_spec_parse("RRP0", mesh, 2, &ps);
    s = s ? s : mc_spec_parse("RR", mesh, 2, &rs);
    s = s ? s : mc_layout_create(2, shape, MC_DTYPE_F32, mesh, ps, &partial);
    s = s ? s : mc_layout_create(2, shape, MC_DTYPE_F32, mesh, rs, &replicated);
    s = s ? s : mc_plan_create(partial, replicated, topo, &pp, &tp->plan);
    mc_layout_destroy(partial);
    mc_layout_destroy(replicated);
    mc_spec_destroy(ps);
    mc_spec_destroy(rs);
    mc_mesh_destroy(mesh);
    if (s) {
        snprintf(err, len, "tensor-parallel sum plan: %s", mc_last_error());
        return -1;
    }
    return 0;
}

void tr_tp_allreduce(tr_tp *tp, float *buf)
{
    if (tp->failed)
        return;
    double t0 = now();
    memcpy(tp->addend, buf, tp->n * sizeof(float));
    tp->dst[tp->me].ptr = buf;
    tp->dst[tp->me].memory = MC_MEMORY_HOST;
    if (mc_reshard(tp->comm, tp->plan, tp->src, tp->dst, NULL)) {
        tp->failed = 1;
        snprintf(tp->err, sizeof(tp->err), "tensor-parallel sum: %s", mc_last_error());
    }
    tp->seconds += now() - t0;
}

int tr_tp_check(const tr_tp *tp, char *err, size_t len)
{
    if (!tp || !tp->failed)
        return 0;
    snprintf(err, len, "%s", tp->err);
    return -1;
}

double tr_tp_take_seconds(tr_tp *tp)
{
    if (!tp)
        return 0.0;
    double s = tp->seconds;
    tp->seconds = 0.0;
    return s;
}

void tr_tp_free(tr_tp *tp)
{
    if (!tp)
        return;
    mc_plan_destroy(tp->plan);
    free(tp->addend);
    free(tp->src);
    free(tp->dst);
    free(tp);
}
