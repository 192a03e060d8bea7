/* The trainer's step simulator (simulate.h). */
#include "simulate.h"
#include "model_utransformer.h"
#include "errmsg.h"

#include <stdlib.h>
#include <string.h>

enum { SE_COMPUTE, SE_WAIT, SE_RESHARD, SE_DP_SUM, SE_OPTIM, SE_DP_WAIT };
typedef struct {
    double t0, t1;
    int kind, rank, index; /* rank: pipeline rank; index: instruction, transfer or bucket */
} sim_event;

struct tr_sim {
    tr_sim_config cfg;
    int D, M, nworld, *tp, *base;
    mc_schedule_t *sched;
    mc_sched_action_t *solo;
    stage_t *stages;
    int nstages;
    const mc_sched_action_t **acts;
    size_t *nacts;
    int *skip_from, *skip_to, nskips;
    double *weight; /* per layer: parameters on its rank (millions) */
    tr_program g;
    double *pair_s;                /* per ordered pipeline-rank pair: one boundary reshard */
    double *pair_fixed_s;          /* ... the part of it that does not hold the links */
    unsigned char *pair_nic;       /* ... whether it crosses hosts (moves NIC bytes) */
    double credit_s;               /* a NIC's burst in seconds of its rate (0: no bucket) */
    double **bucket_s;             /* per rank and bucket: its sum */
    double *tp_s, *dp_s, *mparams; /* per pipeline rank: a tp sum, the dp sum, parameters */
    sim_event *ev;
    int nev, cap;
};

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* A [rows, cols] f32 layout with `spec` on the mesh of `shape` over ids. */
static mc_status_t make_layout(int mdim, const int64_t *mshape, const int64_t *ids,
                               const char *spec, int64_t rows, int64_t cols, mc_layout_t **out)
{
    const int64_t shape[2] = {rows, cols};
    mc_mesh_t *mesh = NULL;
    mc_spec_t *sp = NULL;
    mc_status_t s = mc_mesh_create(mdim, mshape, ids, NULL, &mesh);
    s = s ? s : mc_spec_parse(spec, mesh, 2, &sp);
    s = s ? s : mc_layout_create(2, shape, MC_DTYPE_F32, mesh, sp, out);
    mc_spec_destroy(sp);
    mc_mesh_destroy(mesh);
    return s;
}

/* The planner's estimate of moving a [rows, cols] f32 from one layout to another (and its
 * NIC bytes, when nic is not NULL). */
static int estimate(const tr_sim *s, int sums, const mc_topology_t *topo, int sdim,
                    const int64_t *sshape, const int64_t *sids, const char *sspec, int ddim,
                    const int64_t *dshape, const int64_t *dids, const char *dspec, int64_t rows,
                    int64_t cols, double *out, int64_t *nic)
{
    mc_layout_t *a = NULL, *b = NULL;
    mc_plan_t *plan = NULL;
    mc_plan_stats_t st;
    mc_plan_params_t pp = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER,
                           .strategy = s->cfg.strategy,
                           .sender = s->cfg.sender};
    if (sums && s->cfg.sums_strategy >= 0) {
        pp.strategy = (mc_strategy_t)s->cfg.sums_strategy;
        pp.sender = s->cfg.sums_sender;
    }
    mc_status_t rc = make_layout(sdim, sshape, sids, sspec, rows, cols, &a);
    rc = rc ? rc : make_layout(ddim, dshape, dids, dspec, rows, cols, &b);
    rc = rc ? rc : mc_plan_create(a, b, topo, &pp, &plan);
    rc = rc ? rc : mc_plan_query(plan, &st);
    if (!rc)
        *out = st.estimate_s;
    if (!rc && nic)
        *nic = st.nic_bytes;
    mc_plan_destroy(plan);
    mc_layout_destroy(a);
    mc_layout_destroy(b);
    return rc ? -1 : 0;
}

/* Device ids of pipeline rank r's world ranks, row-major over replicas x tp. */
static void rank_devices(const tr_sim *s, int r, int64_t per_rank, int64_t *ids)
{
    for (int k = 0; k < s->D * s->tp[r]; k++)
        ids[k] = (int64_t)(s->base[r] + k) * per_rank;
}

/* Every estimate the step needs: one boundary reshard per ordered pair of pipeline ranks
 * that exchange tensors, a tp sum and the dp sum per pipeline rank. */
static int plan_all(tr_sim *s, char *err, size_t len)
{
    const char *name = s->cfg.topology ? s->cfg.topology : "cpu-testbed";
    mc_topology_t *topo = NULL;
    if (mc_topology_load(name, &topo))
        return tr_fail(err, len, "--topology %s: %s", name, mc_last_error());
    const int64_t dph = mc_topology_devices_per_host(topo);
    /* the executor's placement: one host per rank (its first device); else one rank a device */
    const int64_t per_rank = s->cfg.topology ? 1 : dph,
                  hosts = s->cfg.topology ? (s->nworld + dph - 1) / dph : s->nworld;
    int rc = -1;
    int64_t *ids = calloc((size_t)s->nworld, sizeof(int64_t)),
            *ids2 = calloc((size_t)s->nworld, sizeof(int64_t));
    if (!ids || !ids2 || mc_topology_set_hosts(topo, hosts)) {
        tr_fail(err, len, "--topology %s: %s", name,
                ids && ids2 ? mc_last_error() : "out of memory");
        goto out;
    }
    const int n = s->cfg.ranks;
    s->credit_s = mc_topology_nic_burst(topo) / mc_topology_link(topo, MC_LINK_NIC).bandwidth;
    const int64_t rows = (int64_t)s->D * s->cfg.micro_batch * s->cfg.model.seq,
                  C = s->cfg.model.dmodel;
    for (int i = 0; i < s->g.nx; i++) {
        const xfer_t *x = &s->g.x[i];
        double *t = &s->pair_s[x->src * n + x->dst];
        if (*t >= 0)
            continue;
        const int64_t a[2] = {s->D, s->tp[x->src]}, b[2] = {s->D, s->tp[x->dst]};
        rank_devices(s, x->src, per_rank, ids);
        rank_devices(s, x->dst, per_rank, ids2);
        /* the latencies: the same plan for one element per device (the bytes' part is
         * what holds the links) */
        int64_t nic = 0;
        double *fixed = &s->pair_fixed_s[x->src * n + x->dst];
        if (estimate(s, 0, topo, 2, a, ids, "S0R", 2, b, ids2, "S0R", rows, C, t, &nic) ||
            estimate(s, 0, topo, 2, a, ids, "S0R", 2, b, ids2, "S0R", s->D, 1, fixed, NULL)) {
            tr_fail(err, len, "plan %d->%d: %s", x->src, x->dst, mc_last_error());
            goto out;
        }
        *fixed = *fixed < *t ? *fixed : *t;
        s->pair_nic[x->src * n + x->dst] = nic > 0;
    }
    for (int r = 0; r < n; r++) {
        const int T = s->tp[r];
        const int64_t mesh[2] = {s->D, T}, tmesh[1] = {T};
        rank_devices(s, r, per_rank, ids);
        for (int st = 0; st < s->nstages; st++)
            if (s->stages[st].rank == r)
                s->mparams[r] +=
                    tr_sim_mparams(&s->cfg.model, s->stages[st].first, s->stages[st].last, T);
        const int64_t packed = (int64_t)(s->mparams[r] * 1e6 + 0.5);
        if (T > 1 &&
            estimate(s, 1, topo, 1, tmesh, ids, "RRP0", 1, tmesh, ids, "RR",
                     (int64_t)s->cfg.micro_batch * s->cfg.model.seq, C, &s->tp_s[r], NULL)) {
            tr_fail(err, len, "tensor-parallel sum of rank %d: %s", r, mc_last_error());
            goto out;
        }
        if (s->D > 1 && packed > 0 &&
            estimate(s, 1, topo, 2, mesh, ids, "S1RP0", 2, mesh, ids, "S1R", T, packed, &s->dp_s[r],
                     NULL)) {
            tr_fail(err, len, "data-parallel sum of rank %d: %s", r, mc_last_error());
            goto out;
        }
        for (int b = 0; s->D > 1 && b < s->g.nbuckets[r]; b++) {
            const tr_bucket *k = &s->g.buckets[r][b];
            const int64_t nb =
                (int64_t)(tr_sim_mparams(&s->cfg.model, k->first, k->last, T) * 1e6 + 0.5);
            if (nb > 0 && estimate(s, 1, topo, 2, mesh, ids, "S1RP0", 2, mesh, ids, "S1R", T, nb,
                                   &s->bucket_s[r][b], NULL)) {
                tr_fail(err, len, "data-parallel sum of rank %d: %s", r, mc_last_error());
                goto out;
            }
        }
    }
    rc = 0;
out:
    free(ids);
    free(ids2);
    mc_topology_destroy(topo);
    return rc;
}

static int place(tr_sim *s, char *err, size_t len)
{
    const int n = s->cfg.ranks;
    s->D = s->cfg.dp > 0 ? s->cfg.dp : 1;
    if (n < 1 || s->cfg.micro_batch < 1)
        return tr_fail(err, len, "no pipeline ranks or an empty microbatch");
    if (s->cfg.microbatches % s->D)
        return tr_fail(err, len, "%d microbatches do not split over %d replicas",
                       s->cfg.microbatches, s->D);
    s->M = s->cfg.microbatches / s->D;
    s->tp = calloc((size_t)n, sizeof(int));
    s->base = calloc((size_t)n + 1, sizeof(int));
    if (!s->tp || !s->base)
        return tr_fail(err, len, "out of memory");
    for (int r = 0; r < n; r++) {
        s->tp[r] = s->cfg.tp ? s->cfg.tp[r] : 1;
        if (s->tp[r] < 1 || s->cfg.model.heads % s->tp[r])
            return tr_fail(err, len, "tensor parallelism %d does not divide the %d heads", s->tp[r],
                           s->cfg.model.heads);
        s->base[r + 1] = s->base[r] + s->D * s->tp[r];
    }
    s->nworld = s->base[n];
    s->cfg.tp = NULL; /* the caller's array need not outlive create */
    return 0;
}

int tr_sim_create(const tr_sim_config *cfg, tr_sim **out, char *err, size_t len)
{
    err[0] = '\0';
    tr_sim *s = *out = calloc(1, sizeof(*s));
    if (!s)
        return tr_fail(err, len, "out of memory");
    s->cfg = *cfg;
    if (place(s, err, len))
        return -1;
    const int n = cfg->ranks, nlayers = cfg->model.blocks + 2;
    if (cfg->model.arch == TR_ARCH_UTRANSFORMER) {
        s->nskips = cfg->model.blocks / 2;
        s->skip_from = calloc((size_t)s->nskips + 1, sizeof(int));
        s->skip_to = calloc((size_t)s->nskips + 1, sizeof(int));
        if (!s->skip_from || !s->skip_to)
            return tr_fail(err, len, "out of memory");
        for (int e = 0; e < s->nskips; e++)
            tr_utransformer_skip(cfg->model.blocks, e, &s->skip_from[e], &s->skip_to[e]);
    }
    s->acts = calloc((size_t)n, sizeof(*s->acts));
    s->nacts = calloc((size_t)n, sizeof(*s->nacts));
    s->pair_s = malloc((size_t)n * n * sizeof(double));
    s->pair_fixed_s = calloc((size_t)n * n, sizeof(double));
    s->pair_nic = calloc((size_t)n * n, 1);
    s->tp_s = calloc((size_t)n, sizeof(double));
    s->dp_s = calloc((size_t)n, sizeof(double));
    s->mparams = calloc((size_t)n, sizeof(double));
    if (!s->acts || !s->nacts || !s->pair_s || !s->pair_fixed_s || !s->pair_nic || !s->tp_s ||
        !s->dp_s || !s->mparams)
        return tr_fail(err, len, "out of memory");
    for (int i = 0; i < n * n; i++)
        s->pair_s[i] = -1.0;
    if (n == 1) {
        s->nstages = 1;
        if (tr_program_solo(s->M, nlayers, &s->solo, &s->stages))
            return tr_fail(err, len, "out of memory");
        s->acts[0] = s->solo;
        s->nacts[0] = 2 * (size_t)s->M;
    } else {
        if (tr_program_schedule(cfg->kind, n, s->M, nlayers, s->nskips, s->skip_from, s->skip_to,
                                &s->sched, &s->stages, &s->nstages, err, len))
            return -1;
        for (int r = 0; r < n; r++)
            mc_schedule_actions(s->sched, r, &s->acts[r], &s->nacts[r]);
    }
    /* the buckets' weights: each layer's parameters on its rank, as the executor counts */
    if (!(s->weight = malloc((size_t)nlayers * sizeof(double))))
        return tr_fail(err, len, "out of memory");
    for (int l = 0; l < nlayers; l++)
        s->weight[l] = tr_sim_mparams(
            &cfg->model, l, l + 1,
            s->tp[s->stages[tr_program_stage_of_layer(s->stages, s->nstages, l)].rank]);
    tr_program_spec spec = {.nranks = n,
                            .nstages = s->nstages,
                            .M = s->M,
                            .stages = s->stages,
                            .nskips = s->nskips,
                            .skip_from = s->skip_from,
                            .skip_to = s->skip_to,
                            .acts = s->acts,
                            .nacts = s->nacts,
                            .replicas = s->D,
                            .dp_buckets = cfg->dp_buckets > 0 ? cfg->dp_buckets : 2,
                            .layer_weight = s->weight};
    if (tr_program_build(&spec, &s->g, err, len))
        return -1;
    if (!(s->bucket_s = calloc((size_t)n, sizeof(*s->bucket_s))))
        return tr_fail(err, len, "out of memory");
    for (int r = 0; r < n; r++)
        if (!(s->bucket_s[r] = calloc((size_t)s->g.nbuckets[r] + 1, sizeof(double))))
            return tr_fail(err, len, "out of memory");
    return plan_all(s, err, len);
}

static void record(tr_sim *s, int kind, int rank, int index, double t0, double t1)
{
    if (s->nev == s->cap) {
        int cap = s->cap ? 2 * s->cap : 256;
        sim_event *v = realloc(s->ev, (size_t)cap * sizeof(*v));
        if (!v)
            return; /* the trace loses events; the result does not */
        s->ev = v;
        s->cap = cap;
    }
    s->ev[s->nev++] = (sim_event){t0, t1, kind, rank, index};
}

/* A compute op's time on pipeline rank r: its kind's cost for the stage, and its tp sums. */
static double op_time(const tr_sim *s, int r, const mc_sched_action_t *a, const instr_t *in,
                      double *tp_part)
{
    const stage_t *whole = &s->stages[a->stage];
    /* a part of the op: its layers' share of the FLOPs, the fixed time with the top part */
    const stage_t part = {in->first, in->last, whole->rank},
                  *st = in->first < in->last ? &part : whole;
    const int top = st->last == whole->last;
    const tr_sim_costs *c = &s->cfg.costs;
    const double speed = s->cfg.speed > 0 ? s->cfg.speed : 1.0;
    const int k = a->op == MC_SCHED_F   ? TR_OP_F
                  : a->op == MC_SCHED_B ? TR_OP_B
                  : a->op == MC_SCHED_I ? TR_OP_I
                                        : TR_OP_W;
    int blocks = 0;
    for (int l = st->first; l < st->last; l++)
        blocks += l >= 1 && l <= s->cfg.model.blocks;
    const double g = tr_sim_gflop(&s->cfg.model, s->cfg.micro_batch, st->first, st->last, s->tp[r]);
    *tp_part = (k == TR_OP_W ? 0 : 2 * blocks) * s->tp_s[r];
    return ((top ? c->fixed[k] : 0.0) + c->per_gflop[k] * g) / speed + *tp_part;
}

/* Per rank: where it is in its program and its clock; per transfer: both sides' starts and
 * its end (-1: not yet); per rank and network side: when it is free and its NIC's credit
 * then (seconds of its rate). */
typedef struct {
    int *pc;
    double *clock, *start, *end, *waited, *out_free, *in_free, *out_credit, *in_credit;
    double *dp_free;             /* per rank: its mesh's bucket sums go one after another */
    double **dp_start, **dp_end; /* per rank and bucket */
} sim_state;

/* When rank r can run its next instruction; -1 when it is blocked on a transfer. */
static double ready_at(const tr_sim *s, const sim_state *q, int r)
{
    const instr_t *in = &s->g.prog[r][q->pc[r]];
    if (in->kind != IN_WAIT)
        return q->clock[r];
    const double end = q->end[in->index];
    return end < 0 ? -1.0 : max2(q->clock[r], end);
}

/* A NIC side's credit at time t >= its free time: what it had then plus the idle time since,
 * up to the burst. */
static double credit_at(const tr_sim *s, double credit, double free, double t)
{
    const double k = credit + (t - free);
    return k < s->credit_s ? k : s->credit_s;
}

/* A side of transfer i started at t; when both have (the reshard's first exchange needs
 * both), it takes the sender's outgoing and the receiver's incoming side, in the order
 * transfers became ready, for its bytes' time, less the credit both sides' NICs saved
 * while idle (a shaper's token bucket passes that much at once); the latencies follow
 * without holding them. */
static void start_side(tr_sim *s, sim_state *q, int i, int side, double t)
{
    const xfer_t *x = &s->g.x[i];
    const int p = x->src * s->cfg.ranks + x->dst;
    q->start[2 * i + side] = t;
    if (q->start[2 * i] < 0 || q->start[2 * i + 1] < 0)
        return;
    const int fixed_cost = s->cfg.costs.comm > 0; /* --sim-costs 'comm': all of it holds */
    const double fixed = fixed_cost ? 0.0 : s->pair_fixed_s[p],
                 hold = (fixed_cost ? s->cfg.costs.comm : s->pair_s[p]) - fixed,
                 begin = max2(t, max2(q->out_free[x->src], q->in_free[x->dst])),
                 ko = credit_at(s, q->out_credit[x->src], q->out_free[x->src], begin),
                 ki = credit_at(s, q->in_credit[x->dst], q->in_free[x->dst], begin),
                 k = s->pair_nic[p] ? (ko < ki ? ko : ki) : 0.0, used = hold < k ? hold : k;
    q->out_credit[x->src] = ko - used;
    q->in_credit[x->dst] = ki - used;
    q->out_free[x->src] = q->in_free[x->dst] = begin + hold - used;
    q->end[i] = begin + hold - used + fixed;
}

static void step_rank(tr_sim *s, sim_state *q, int r, double t, tr_sim_result *res)
{
    const instr_t *in = &s->g.prog[r][q->pc[r]++];
    const double ranks = (double)s->D * s->tp[r], speed = s->cfg.speed > 0 ? s->cfg.speed : 1.0;
    double d = 0.0;
    switch (in->kind) {
    case IN_COMPUTE: {
        double tp;
        d = op_time(s, r, &s->acts[r][in->index], in, &tp);
        record(s, SE_COMPUTE, r, q->pc[r] - 1, t, t + d);
        res->compute_s += d * ranks;
        res->reduce_s += tp * ranks;
        res->tp_sum_s += tp * ranks;
        d += s->cfg.costs.gap / speed; /* what the executor does between ops */
        break;
    }
    case IN_START:
        start_side(s, q, in->index, s->g.x[in->index].dst == r, t);
        break;
    case IN_WAIT: {
        const int i = in->index, side = s->g.x[i].dst == r;
        if (t > q->clock[r]) {
            record(s, SE_WAIT, r, i, q->clock[r], t);
            res->wait_s += (t - q->clock[r]) * ranks;
            if (side)
                q->waited[i] += t - q->clock[r];
        }
        record(s, SE_RESHARD, r, i, q->start[2 * i + side], q->end[i]);
        break;
    }
    case IN_DP_SUM:
        d = s->dp_s[r];
        if (d > 0)
            record(s, SE_DP_SUM, r, -1, t, t + d);
        res->reduce_s += d * ranks;
        break;
    case IN_DP_START: {
        const double begin = max2(t, q->dp_free[r]);
        q->dp_start[r][in->index] = t;
        q->dp_end[r][in->index] = q->dp_free[r] = begin + s->bucket_s[r][in->index];
        break;
    }
    case IN_DP_WAIT: {
        const double end = q->dp_end[r][in->index];
        if (end > t) {
            record(s, SE_DP_WAIT, r, in->index, t, end);
            res->reduce_s += (end - t) * ranks;
            d = end - t;
        }
        if (s->bucket_s[r][in->index] > 0)
            record(s, SE_DP_SUM, r, in->index, q->dp_start[r][in->index], max2(end, t));
        break;
    }
    default:
        d = s->cfg.costs.adamw_per_mparam * s->mparams[r] / speed;
        record(s, SE_OPTIM, r, 0, t, t + d);
        break;
    }
    q->clock[r] = t + d;
}

int tr_sim_run(tr_sim *s, tr_sim_result *res, char *err, size_t len)
{
    const int n = s->cfg.ranks, nx = s->g.nx;
    sim_state q = {.pc = calloc((size_t)n, sizeof(int)),
                   .clock = calloc((size_t)n, sizeof(double)),
                   .start = malloc((2 * (size_t)nx + 1) * sizeof(double)),
                   .end = malloc(((size_t)nx + 1) * sizeof(double)),
                   .waited = calloc((size_t)nx + 1, sizeof(double)),
                   .out_free = calloc((size_t)n, sizeof(double)),
                   .in_free = calloc((size_t)n, sizeof(double)),
                   .out_credit = malloc((size_t)n * sizeof(double)),
                   .in_credit = malloc((size_t)n * sizeof(double)),
                   .dp_free = calloc((size_t)n, sizeof(double)),
                   .dp_start = calloc((size_t)n, sizeof(double *)),
                   .dp_end = calloc((size_t)n, sizeof(double *))};
    int rc = -1;
    for (int r = 0; q.dp_start && q.dp_end && r < n; r++) {
        q.dp_start[r] = calloc((size_t)s->g.nbuckets[r] + 1, sizeof(double));
        q.dp_end[r] = calloc((size_t)s->g.nbuckets[r] + 1, sizeof(double));
    }
    memset(res, 0, sizeof(*res));
    s->nev = 0;
    int nomem = !q.pc || !q.clock || !q.start || !q.end || !q.waited || !q.out_free || !q.in_free ||
                !q.out_credit || !q.in_credit || !q.dp_free || !q.dp_start || !q.dp_end;
    for (int r = 0; !nomem && r < n; r++)
        nomem = !q.dp_start[r] || !q.dp_end[r];
    if (nomem) {
        tr_fail(err, len, "out of memory");
        goto out;
    }
    for (int i = 0; i < 2 * nx; i++)
        q.start[i] = -1.0;
    for (int i = 0; i < nx; i++)
        q.end[i] = -1.0;
    for (int r = 0; r < n; r++) /* the links idle before the step: every bucket full */
        q.out_credit[r] = q.in_credit[r] = s->credit_s;
    /* always the rank that can go on earliest: transfers take the network in time order */
    for (;;) {
        int best = -1, busy = 0;
        double bt = 0.0;
        for (int r = 0; r < n; r++) {
            if (q.pc[r] >= s->g.nprog[r])
                continue;
            busy = 1;
            double t = ready_at(s, &q, r);
            if (t >= 0 && (best < 0 || t < bt)) {
                best = r;
                bt = t;
            }
        }
        if (!busy)
            break;
        if (best < 0) {
            tr_fail(err, len, "the simulated ranks deadlock");
            goto out;
        }
        step_rank(s, &q, best, bt, res);
    }
    const double speed = s->cfg.speed > 0 ? s->cfg.speed : 1.0;
    for (int r = 0; r < n; r++)
        res->step_s = max2(res->step_s, q.clock[r] + s->cfg.costs.step / speed);
    for (int i = 0; i < nx; i++) {
        const double c = q.end[i] - q.start[2 * i];
        res->reshard_s += c;
        res->hidden_s += c - (q.waited[i] < c ? q.waited[i] : c);
    }
    res->tokens_per_s = res->step_s > 0 ? (double)s->cfg.microbatches * s->cfg.micro_batch *
                                              s->cfg.model.seq / res->step_s
                                        : 0.0;
    rc = 0;
out:
    free(q.pc);
    free(q.clock);
    free(q.start);
    free(q.end);
    free(q.waited);
    free(q.out_free);
    free(q.in_free);
    free(q.out_credit);
    free(q.in_credit);
    free(q.dp_free);
    for (int r = 0; r < n; r++) {
        if (q.dp_start)
            free(q.dp_start[r]);
        if (q.dp_end)
            free(q.dp_end[r]);
    }
    free(q.dp_start);
    free(q.dp_end);
    return rc;
}

int tr_sim_write_trace(const tr_sim *s, FILE *f)
{
    fputs("{\"traceEvents\":[", f);
    for (int r = 0; r < s->cfg.ranks; r++)
        fprintf(f,
                "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank "
                "%d (simulated)\"}},\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"name\":\"compute and waits\"}},\n{\"name\":\"thread_name\",\"ph\":"
                "\"M\",\"pid\":%d,\"tid\":1,\"args\":{\"name\":\"reshards\"}}",
                r ? "," : "", s->base[r], s->base[r], s->base[r], s->base[r]);
    for (int i = 0; i < s->nev; i++) {
        const sim_event *e = &s->ev[i];
        const int pid = s->base[e->rank];
        const double ts = e->t0 * 1e6, dur = (e->t1 - e->t0) * 1e6;
        char name[96];
        const int async = e->kind == SE_RESHARD || (e->kind == SE_DP_SUM && e->index >= 0);
        if (e->kind == SE_COMPUTE) {
            const instr_t *in = &s->g.prog[e->rank][e->index];
            tr_program_compute_name(&s->acts[e->rank][in->index], in, name, sizeof(name));
        } else if (e->kind == SE_DP_SUM && e->index >= 0) {
            tr_program_bucket_name(&s->g.buckets[e->rank][e->index], name, sizeof(name));
        } else if (e->kind == SE_DP_SUM || e->kind == SE_OPTIM || e->kind == SE_DP_WAIT) {
            snprintf(name, sizeof(name), "%s",
                     e->kind == SE_DP_SUM  ? "dp sum"
                     : e->kind == SE_OPTIM ? "adamw"
                                           : "wait dp sums");
        } else {
            tr_program_xfer_name(&s->g.x[e->index], name, sizeof(name));
        }
        tr_program_trace_span(f, name,
                              e->kind == SE_WAIT || e->kind == SE_DP_WAIT ? "wait"
                              : e->kind == SE_COMPUTE                     ? "compute"
                                                                          : "step",
                              e->kind == SE_WAIT, async, i, pid, ts, dur, 0);
    }
    fprintf(f, "\n]}\n");
    return ferror(f) ? -1 : 0;
}

const tr_program *tr_sim_program(const tr_sim *s)
{
    return &s->g;
}

void tr_sim_actions(const tr_sim *s, int r, const mc_sched_action_t **list, size_t *n)
{
    *list = s->acts[r];
    *n = s->nacts[r];
}

int tr_sim_world_rank(const tr_sim *s, int r)
{
    return s->base[r];
}

void tr_sim_free(tr_sim *s)
{
    if (!s)
        return;
    tr_program_free(&s->g);
    mc_schedule_destroy(s->sched);
    free(s->solo);
    free(s->stages);
    free(s->acts);
    free(s->nacts);
    free(s->skip_from);
    free(s->skip_to);
    free(s->pair_s);
    free(s->pair_fixed_s);
    free(s->pair_nic);
    for (int r = 0; s->bucket_s && r < s->cfg.ranks; r++)
        free(s->bucket_s[r]);
    free(s->bucket_s);
    free(s->weight);
    free(s->tp_s);
    free(s->dp_s);
    free(s->mparams);
    free(s->tp);
    free(s->base);
    free(s->ev);
    free(s);
}
