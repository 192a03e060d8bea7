/* The pipeline executor (pipeline.h): rank placement, the stage split, the rank's model copy,
 * the dry run that orders the reshards, this rank's program, the step, and gathering the
 * model. */
#include "pipeline_internal.h"
#include "sim_costs.h"
#include "errmsg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int stage_of_layer(const tr_pipe *p, int layer)
{
    return tr_program_stage_of_layer(p->stages, p->nstages, layer);
}

/* This rank's program, from every rank's action list (pipeline_program.h). */
static int make_program(tr_pipe *p, char *err, size_t len)
{
    const mc_sched_action_t **acts = calloc((size_t)p->nranks, sizeof(*acts));
    size_t *nacts = calloc((size_t)p->nranks, sizeof(*nacts));
    if (!acts || !nacts) {
        free(acts);
        free(nacts);
        snprintf(err, len, "out of memory");
        return -1;
    }
    for (int r = 0; r < p->nranks; r++)
        tr_pipe_actions(p, r, &acts[r], &nacts[r]);
    /* the buckets' weights: each layer's parameters on its rank (as the simulator counts) */
    double *weight = malloc((size_t)p->whole->nlayers * sizeof(double));
    for (int l = 0; weight && l < p->whole->nlayers; l++)
        weight[l] =
            tr_sim_mparams(&p->whole->cfg, l, l + 1, p->tp[p->stages[stage_of_layer(p, l)].rank]);
    tr_program_spec spec = {.nranks = p->nranks,
                            .nstages = p->nstages,
                            .M = p->M,
                            .stages = p->stages,
                            .nskips = p->m->nskips,
                            .skip_from = p->m->skip_from,
                            .skip_to = p->m->skip_to,
                            .acts = acts,
                            .nacts = nacts,
                            .replicas = p->D,
                            .dp_buckets = p->cfg.dp_buckets > 0 ? p->cfg.dp_buckets : 2,
                            .layer_weight = weight};
    int rc = weight ? tr_program_build(&spec, &p->g, err, len) : -1;
    if (!weight)
        snprintf(err, len, "out of memory");
    free(weight);
    free(acts);
    free(nacts);
    if (rc)
        return -1;
    p->x = p->g.x;
    p->nx = p->g.nx;
    p->prog = p->g.prog[p->rank];
    p->nprog = p->g.nprog[p->rank];
    return 0;
}

/* The device ids of pipeline rank r's mesh, D x T row-major: the first device of each of
 * its world ranks. */
static void mesh_devices(const tr_pipe *p, int r, int64_t *ids)
{
    const int64_t devices = mc_topology_devices(p->topo);
    for (int k = 0; k < p->D * p->tp[r]; k++) {
        int64_t dev = 0;
        while (dev < devices && mc_device_owner(p->topo, p->nworld, dev) != p->base[r] + k)
            dev++;
        ids[k] = dev;
    }
}

/* Pipeline rank r's mesh (replicas x tp ranks) holding a boundary tensor: every replica's
 * microbatch stacked, [D*B*T, C], S on the batch dim over the replicas, replicated over tp. */
static mc_status_t boundary_layout(const tr_pipe *p, int r, mc_layout_t **out)
{
    const int64_t mshape[2] = {p->D, p->tp[r]},
                  shape[2] = {(int64_t)p->D * p->cfg.micro_batch * p->m->cfg.seq, p->m->cfg.dmodel};
    int64_t *ids = malloc((size_t)p->D * p->tp[r] * sizeof(int64_t));
    mc_mesh_t *mesh = NULL;
    mc_spec_t *spec = NULL;
    if (!ids)
        return MC_ERR_NOMEM;
    mesh_devices(p, r, ids);
    mc_status_t s = mc_mesh_create(2, mshape, ids, NULL, &mesh);
    s = s ? s : mc_spec_parse("S0R", mesh, 2, &spec);
    s = s ? s : mc_layout_create(2, shape, MC_DTYPE_F32, mesh, spec, out);
    mc_spec_destroy(spec);
    mc_mesh_destroy(mesh);
    free(ids);
    return s;
}

static int make_plans(tr_pipe *p, char *err, size_t len)
{
    const int n = p->nranks, me = p->dpi * p->tp[p->rank] + p->tpi;
    const char *topo = "cpu-testbed"; /* one host per rank: every boundary crosses a NIC */
    if (mc_topology_load(topo, &p->topo) || mc_topology_set_hosts(p->topo, p->nworld))
        return tr_fail(err, len, "topology %s: %s", topo, mc_last_error());
    p->layout = calloc((size_t)n, sizeof(*p->layout));
    p->plan = calloc((size_t)n * n, sizeof(*p->plan));
    p->src = calloc((size_t)p->nworld, sizeof(*p->src));
    p->dst = calloc((size_t)p->nworld, sizeof(*p->dst));
    int64_t *ids = calloc((size_t)p->nworld, sizeof(int64_t));
    if (!p->layout || !p->plan || !p->src || !p->dst || !ids) {
        free(ids);
        return tr_fail(err, len, "out of memory");
    }
    for (int r = 0; r < n; r++)
        if (boundary_layout(p, r, &p->layout[r])) {
            free(ids);
            return tr_fail(err, len, "layout of rank %d: %s", r, mc_last_error());
        }
    mesh_devices(p, p->rank, ids);
    const int T = p->tp[p->rank];
    int rc = tr_dp_create(p->topo, ids, p->D, T, me, &p->m->params, p->bucket_of,
                          p->g.nbuckets[p->rank] ? p->g.nbuckets[p->rank] : 1, p->cfg.strategy,
                          p->cfg.sender, &p->dp, err, len);
    if (!rc && T > 1) /* this replica's tp ranks: one row of the mesh */
        rc = tr_tp_create(p->comm, p->topo, ids + p->dpi * T, T, p->tpi,
                          (int64_t)p->cfg.micro_batch * p->m->cfg.seq, p->m->cfg.dmodel,
                          p->cfg.strategy, p->cfg.sender, &p->tpg, err, len);
    free(ids);
    if (rc)
        return -1;
    for (int l = 0; l < p->m->nlayers; l++)
        if (p->m->layers[l].kind == TR_LAYER_BLOCK && p->m->tp[l] > 1)
            p->m->layers[l].blk.group = p->tpg;
    mc_plan_params_t pp = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER,
                           .strategy = p->cfg.strategy,
                           .sender = p->cfg.sender};
    for (int i = 0; i < p->nmine; i++) {
        const xfer_t *x = &p->x[p->mine[i]];
        mc_plan_t **plan = &p->plan[x->src * n + x->dst];
        if (!*plan && mc_plan_create(p->layout[x->src], p->layout[x->dst], p->topo, &pp, plan))
            return tr_fail(err, len, "plan %d->%d: %s", x->src, x->dst, mc_last_error());
    }
    return 0;
}

/* Sets out[i] = value for every parameter i of a layer. */
static void layer_params(const tr_pipe *p, const tr_layer *ly, int value, int *out)
{
    const tr_block *b = &ly->blk;
    const tr_param *list[] = {ly->wte, ly->wpe, ly->joinw, ly->joinb,  ly->lnfw,  ly->lnfb, ly->lmw,
                              b->ln1w, b->ln1b, b->qkvw,   b->qkvb,    b->projw,  b->projb, b->ln2w,
                              b->ln2b, b->fcw,  b->fcb,    b->fcprojw, b->fcprojb};
    for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
        if (list[i])
            out[list[i] - p->m->params.p] = value;
}

/* Which bucket sums each of this rank's parameters: the one holding its layer (every
 * parameter in bucket 0 when one sum after the backward does them all). */
static int assign_buckets(tr_pipe *p)
{
    const tr_params *ps = &p->m->params;
    if (!(p->bucket_of = malloc(((size_t)ps->count + 1) * sizeof(int))) ||
        !(p->dp_start = calloc((size_t)p->g.nbuckets[p->rank] + 1, sizeof(double))) ||
        !(p->layer_of = calloc((size_t)ps->count + 1, sizeof(int))))
        return -1;
    for (int l = 0; l < p->m->nlayers; l++)
        layer_params(p, &p->m->layers[l], l, p->layer_of);
    for (int i = 0; i < ps->count; i++) {
        p->bucket_of[i] = p->owned[i] ? 0 : -1;
        for (int b = 0; p->owned[i] && b < p->g.nbuckets[p->rank]; b++) {
            const tr_bucket *k = &p->g.buckets[p->rank][b];
            if (p->layer_of[i] >= k->first && p->layer_of[i] < k->last)
                p->bucket_of[i] = b;
        }
    }
    return 0;
}

static void mark_layer_params(tr_pipe *p, const tr_layer *ly, int rank)
{
    layer_params(p, ly, rank, p->owner);
}

/* Boundary tensors of this rank's stages; a neighbour on the same rank shares them. */
static int alloc_buffers(tr_pipe *p)
{
    const int S = p->nstages, M = p->M;
    const size_t act = (size_t)p->cfg.micro_batch * p->m->cfg.seq * p->m->cfg.dmodel;
    float ***bufs[4] = {&p->in, &p->out, &p->dout, &p->din};
    for (int k = 0; k < 4; k++)
        if (!(*bufs[k] = calloc((size_t)S * M, sizeof(float *))))
            return -1;
    p->a = calloc((size_t)M, sizeof(*p->a));
    if (!p->a)
        return -1;
    for (int mb = 0; mb < M; mb++)
        if (!(p->a[mb] = tr_acts_create(p->m, p->cfg.micro_batch)))
            return -1;
    for (int s = 0; s < S; s++) {
        if (p->stages[s].rank != p->rank)
            continue;
        for (int mb = 0; mb < M; mb++) {
            if (s + 1 < S && !(p->out[s * M + mb] = tr_alloc(act)))
                return -1;
            if (s > 0 && !(p->din[s * M + mb] = tr_alloc(act)))
                return -1;
        }
    }
    for (int s = 0; s < S; s++) {
        if (p->stages[s].rank != p->rank)
            continue;
        for (int mb = 0; mb < M; mb++) {
            if (s > 0)
                p->in[s * M + mb] =
                    p->stages[s - 1].rank == p->rank ? p->out[(s - 1) * M + mb] : tr_alloc(act);
            if (s + 1 < S)
                p->dout[s * M + mb] =
                    p->stages[s + 1].rank == p->rank ? p->din[(s + 1) * M + mb] : tr_alloc(act);
            if ((s > 0 && !p->in[s * M + mb]) || (s + 1 < S && !p->dout[s * M + mb]))
                return -1;
        }
    }
    return 0;
}

/* The schedule and the stage split (pipeline_program.h). */
static int make_schedule(tr_pipe *p, const tr_pipe_config *cfg, char *err, size_t len)
{
    const tr_model *m = p->whole;
    return tr_program_schedule(cfg->kind, p->nranks, p->M, m->nlayers, m->nskips, m->skip_from,
                               m->skip_to, &p->sched, &p->stages, &p->nstages, err, len);
}

/* This rank's copy of the model and of the optimizer state: the blocks of its stages split
 * tp ways (share tpi), the others whole (never computed here); and which pipeline rank
 * trains each parameter. The embedding, the U-joins and the head stay whole on every tp
 * rank: they run on replicated inputs with replicated output gradients, so each tp rank
 * computes their complete gradient, and only the sum over replicas remains. */
static int make_local(tr_pipe *p, const tr_adamw *o)
{
    const tr_model *w = p->whole;
    const int L = w->nlayers;
    int *tp = malloc((size_t)L * sizeof(int)), *tp_rank = malloc((size_t)L * sizeof(int));
    for (int l = 0; tp && tp_rank && l < L; l++) {
        int mine = p->stages[stage_of_layer(p, l)].rank == p->rank;
        tp[l] = mine ? p->tp[p->rank] : 1;
        tp_rank[l] = mine ? p->tpi : 0;
    }
    p->m = tp && tp_rank ? tr_model_create_part(w, tp, tp_rank) : NULL;
    free(tp);
    free(tp_rank);
    if (!p->m)
        return -1;
    const tr_params *ps = &p->m->params;
    p->owner = calloc((size_t)ps->count, sizeof(int));
    p->owned = calloc((size_t)ps->count, 1);
    if (!p->owner || !p->owned || tr_adamw_init(&p->opt, ps->total, o->lr))
        return -1;
    for (int s = 0; s < p->nstages; s++)
        for (int l = p->stages[s].first; l < p->stages[s].last; l++)
            mark_layer_params(p, &p->m->layers[l], p->stages[s].rank);
    p->opt.beta1 = o->beta1;
    p->opt.beta2 = o->beta2;
    p->opt.eps = o->eps;
    p->opt.weight_decay = o->weight_decay;
    p->opt.step = o->step;
    for (int i = 0; i < ps->count; i++) {
        const tr_param *whole = &w->params.p[i], *part = &ps->p[i];
        const int parts = tr_model_param_parts(p->m, i);
        p->owned[i] = p->owner[i] == p->rank;
        tr_param_get_part(whole, parts, part->split.part, o->m + whole->offset,
                          p->opt.m + part->offset);
        tr_param_get_part(whole, parts, part->split.part, o->v + whole->offset,
                          p->opt.v + part->offset);
    }
    return 0;
}

int tr_pipe_rank_of(const tr_pipe *p, int world_rank)
{
    int r = 0;
    while (r + 1 < p->nranks && p->base[r + 1] <= world_rank)
        r++;
    return r;
}

void tr_pipe_actions(const tr_pipe *p, int rank, const mc_sched_action_t **list, size_t *n)
{
    if (!p->sched) {
        *list = p->solo;
        *n = 2 * (size_t)p->M;
        return;
    }
    mc_schedule_actions(p->sched, rank, list, n);
}

static int solo_list(tr_pipe *p)
{
    p->nstages = 1;
    return tr_program_solo(p->M, p->whole->nlayers, &p->solo, &p->stages);
}

/* Where this world rank sits: pipeline rank, replica, tensor-parallel index. */
static int place_ranks(tr_pipe *p, const tr_pipe_config *cfg, char *err, size_t len)
{
    p->nranks = cfg->ranks;
    p->D = cfg->dp > 0 ? cfg->dp : 1;
    p->tp = calloc((size_t)p->nranks, sizeof(int));
    p->base = calloc((size_t)p->nranks + 1, sizeof(int));
    if (!p->tp || !p->base)
        return tr_fail(err, len, "out of memory");
    for (int r = 0; r < p->nranks; r++) {
        p->tp[r] = cfg->tp ? cfg->tp[r] : 1;
        if (p->tp[r] < 1 || p->whole->cfg.heads % p->tp[r])
            return tr_fail(err, len, "tensor parallelism %d does not divide the %d heads", p->tp[r],
                           p->whole->cfg.heads);
        p->base[r + 1] = p->base[r] + p->D * p->tp[r];
    }
    if (p->base[p->nranks] != p->nworld)
        return tr_fail(err, len,
                       "%d pipeline ranks x %d replicas (x tensor-parallel ranks) need %d ranks; "
                       "%d were started",
                       p->nranks, p->D, p->base[p->nranks], p->nworld);
    p->rank = tr_pipe_rank_of(p, p->wrank);
    p->dpi = (p->wrank - p->base[p->rank]) / p->tp[p->rank];
    p->tpi = (p->wrank - p->base[p->rank]) % p->tp[p->rank];
    if (cfg->microbatches % p->D)
        return tr_fail(err, len, "%d microbatches do not split over %d replicas", cfg->microbatches,
                       p->D);
    p->M = cfg->microbatches / p->D;
    return 0;
}

int tr_pipe_create(const tr_model *m, const tr_adamw *o, mc_comm_t *comm, const tr_pipe_config *cfg,
                   tr_pipe **out, char *err, size_t len)
{
    err[0] = '\0';
    *out = NULL;
    tr_pipe *p = calloc(1, sizeof(*p));
    if (!p)
        return tr_fail(err, len, "out of memory");
    *out = p;
    p->whole = m;
    p->comm = comm;
    p->cfg = *cfg;
    p->wrank = mc_comm_rank(comm);
    p->nworld = mc_comm_nranks(comm);
    if (place_ranks(p, cfg, err, len))
        return -1;
    if (p->M < 1 || 2 * p->M > MAX_INFLIGHT) /* each microbatch: an activation and a gradient */
        return tr_fail(err, len,
                       "%d microbatches need more than the %d reshards a communicator "
                       "keeps in flight",
                       p->M, MAX_INFLIGHT);
    if (p->nranks == 1) {
        if (solo_list(p))
            return tr_fail(err, len, "out of memory");
    } else if (make_schedule(p, cfg, err, len)) {
        return -1;
    }
    if (make_local(p, o))
        return tr_fail(err, len, "out of memory");
    tr_pipe_actions(p, p->rank, &p->acts, &p->nacts);
    if (make_program(p, err, len))
        return -1;
    if (!(p->mine = calloc((size_t)p->nx + 1, sizeof(int))))
        return tr_fail(err, len, "out of memory");
    for (int i = 0; i < p->nx; i++)
        if (p->x[i].src == p->rank || p->x[i].dst == p->rank)
            p->mine[p->nmine++] = i;
    if (p->nmine + p->g.nbuckets[p->rank] > MAX_INFLIGHT) /* the sums' buckets are in flight too */
        return tr_fail(
            err, len,
            "rank %d takes part in %d reshards per step, more than the %d a communicator "
            "keeps in flight; use fewer microbatches or --dp-buckets",
            p->rank, p->nmine + p->g.nbuckets[p->rank], MAX_INFLIGHT);
    p->req = calloc((size_t)p->nx + 1, sizeof(*p->req));
    p->state = calloc((size_t)p->nx + 1, sizeof(int));
    p->t_start = calloc((size_t)p->nx + 1, sizeof(double));
    p->t_done = calloc((size_t)p->nx + 1, sizeof(double));
    p->times = calloc(3 * (size_t)p->nx * (p->nworld + 1) + 1, sizeof(double));
    p->loss = calloc((size_t)p->M, sizeof(float));
    p->losses = calloc((size_t)p->M * p->D * (p->nworld + 1), sizeof(double));
    if (!p->req || !p->state || !p->t_start || !p->t_done || !p->times || !p->loss || !p->losses ||
        alloc_buffers(p))
        return tr_fail(err, len, "out of memory");
    if (assign_buckets(p) ||
        !(p->part = tr_alloc((size_t)p->cfg.micro_batch * p->m->cfg.seq * p->m->cfg.dmodel)))
        return tr_fail(err, len, "out of memory");
    return make_plans(p, err, len);
}

static void free_bufs(tr_pipe *p, float **v, int neighbour)
{
    for (int s = 0; v && s < p->nstages; s++) {
        int t = s + neighbour; /* a shared tensor belongs to that neighbour */
        int shared = t >= 0 && t < p->nstages && neighbour && p->stages[t].rank == p->rank;
        for (int mb = 0; mb < p->M && !shared; mb++)
            free(v[s * p->M + mb]);
    }
    free(v);
}

void tr_pipe_free(tr_pipe *p)
{
    if (!p)
        return;
    for (int i = 0; p->req && i < p->nx; i++)
        mc_request_free(p->req[i]);
    free_bufs(p, p->in, -1);
    free_bufs(p, p->dout, 1);
    free_bufs(p, p->out, 0);
    free_bufs(p, p->din, 0);
    for (int mb = 0; p->a && mb < p->M; mb++)
        tr_acts_free(p->m, p->a[mb]);
    free(p->a);
    tr_model_free(p->m);
    for (int i = 0; p->plan && i < p->nranks * p->nranks; i++)
        mc_plan_destroy(p->plan[i]);
    for (int r = 0; p->layout && r < p->nranks; r++)
        mc_layout_destroy(p->layout[r]);
    free(p->plan);
    free(p->layout);
    free(p->src);
    free(p->dst);
    tr_dp_free(p->dp);
    tr_tp_free(p->tpg);
    tr_adamw_free(&p->opt);
    free(p->owner);
    free(p->tp);
    free(p->base);
    free(p->solo);
    free(p->losses);
    mc_topology_destroy(p->topo);
    mc_schedule_destroy(p->sched);
    free(p->stages);
    tr_program_free(&p->g);
    free(p->bucket_of);
    free(p->layer_of);
    free(p->dp_start);
    free(p->part);
    free(p->mine);
    free(p->owned);
    free(p->loss);
    free(p->req);
    free(p->state);
    free(p->t_start);
    free(p->t_done);
    free(p->times);
    free(p->ev);
    free(p);
}

/* This rank's share of its parameters: values, AdamW m and v, each `most` long. */
static void pack_owned(const tr_pipe *p, float *pack, size_t most)
{
    const tr_params *ps = &p->m->params;
    size_t off = 0;
    for (int i = 0; i < ps->count; i++) {
        if (!p->owned[i])
            continue;
        const size_t n = (size_t)ps->p[i].value.size, at = ps->p[i].offset;
        memcpy(pack + off, ps->p[i].value.data, n * sizeof(float));
        memcpy(pack + most + off, p->opt.m + at, n * sizeof(float));
        memcpy(pack + 2 * most + off, p->opt.v + at, n * sizeof(float));
        off += n;
    }
}

/* Writes world rank w's pack (replica 0 of its pipeline rank) into the whole model. */
static void unpack_rank(const tr_pipe *p, int w, const float *pack, size_t most, tr_model *m,
                        tr_adamw *o)
{
    const int r = tr_pipe_rank_of(p, w), T = p->tp[r], t = (w - p->base[r]) % T;
    size_t off = 0;
    for (int i = 0; i < m->params.count; i++) {
        if (p->owner[i] != r)
            continue;
        const tr_param *whole = &m->params.p[i];
        const int parts = whole->split.mid ? T : 1;
        tr_param_put_part(whole, parts, t, pack + off, whole->value.data);
        tr_param_put_part(whole, parts, t, pack + most + off, o->m + whole->offset);
        tr_param_put_part(whole, parts, t, pack + 2 * most + off, o->v + whole->offset);
        off += (size_t)tr_param_part_size(whole, parts);
    }
}

int tr_pipe_gather(tr_pipe *p, tr_model *m, tr_adamw *o, char *err, size_t len)
{
    const tr_params *ps = &p->m->params;
    uint64_t mine = 0, *lens = calloc((size_t)p->nworld, sizeof(uint64_t)), most = 0;
    float *pack = NULL, *all = NULL;
    int rc = -1;
    for (int i = 0; i < ps->count; i++)
        mine += p->owned[i] ? (uint64_t)ps->p[i].value.size : 0;
    if (!lens || mc_comm_allgather(p->comm, &mine, lens, sizeof(mine)))
        goto out;
    for (int w = 0; w < p->nworld; w++)
        most = lens[w] > most ? lens[w] : most;
    pack = calloc(3 * most + 1, sizeof(float));
    all = malloc((3 * most * p->nworld + 1) * sizeof(float));
    if (!pack || !all)
        goto out;
    pack_owned(p, pack, most);
    if (mc_comm_allgather(p->comm, pack, all, 3 * most * sizeof(float)))
        goto out;
    for (int r = 0; r < p->nranks; r++) /* replica 0's tp ranks; replicas hold the same */
        for (int t = 0; t < p->tp[r]; t++)
            unpack_rank(p, p->base[r] + t, all + (size_t)(p->base[r] + t) * 3 * most, most, m, o);
    o->step = p->opt.step;
    rc = 0;
out:
    if (rc)
        tr_fail(err, len, "gathering the model: %s",
                pack && all ? mc_last_error() : "out of memory");
    free(lens);
    free(pack);
    free(all);
    return rc;
}

/* The transfer's tile on this rank: what it sends from or receives into. */
static float *xfer_buffer(tr_pipe *p, const xfer_t *x)
{
    tr_acts *a = p->a[x->mb];
    if (x->edge >= 0)
        return x->grad ? a->dskip[x->edge] : a->skip[x->edge];
    int sending = x->src == p->rank, s = sending ? x->from : x->to;
    float **v = x->grad ? (sending ? p->din : p->dout) : (sending ? p->out : p->in);
    return v[s * p->M + x->mb];
}

static void finish(tr_pipe *p, int i, double t)
{
    mc_request_free(p->req[i]);
    p->req[i] = NULL;
    p->state[i] = XS_DONE;
    p->t_done[i] = t;
    if (p->x[i].dst == p->rank)
        p->times[3 * i + 1] = t;
    tr_pipe_record(p, EV_RESHARD, i, p->t_start[i], t);
}

/* Notes the requests that completed while the rank computed. */
static void poll_requests(tr_pipe *p)
{
    for (int k = 0; k < p->nmine; k++) {
        int i = p->mine[k];
        if (p->state[i] == XS_RUNNING && mc_request_test(p->req[i]) == MC_OK)
            finish(p, i, now());
    }
}

static int wait_request(tr_pipe *p, int i, char *err, size_t len)
{
    if (p->state[i] != XS_RUNNING)
        return 0;
    double t0 = now();
    mc_status_t s = mc_request_wait(p->req[i]);
    double t1 = now();
    p->wait_s += t1 - t0;
    if (p->x[i].dst == p->rank)
        p->times[3 * i + 2] += t1 - t0;
    tr_pipe_record(p, EV_WAIT, i, t0, t1);
    if (s)
        return tr_fail(err, len, "reshard %d->%d: %s", p->x[i].src, p->x[i].dst, mc_last_error());
    finish(p, i, t1);
    return 0;
}

static int start_request(tr_pipe *p, int i, char *err, size_t len)
{
    const xfer_t *x = &p->x[i];
    const int me = p->dpi * p->tp[p->rank] + p->tpi; /* this rank's index in its mesh */
    mc_buffer_t *mine = x->src == p->rank ? p->src : p->dst;
    mine[me] = (mc_buffer_t){.ptr = xfer_buffer(p, x), .memory = MC_MEMORY_HOST};
    p->t_start[i] = now();
    if (x->src == p->rank)
        p->times[3 * i] = p->t_start[i];
    mc_status_t s = mc_reshard_start(p->comm, p->plan[x->src * p->nranks + x->dst], p->src, p->dst,
                                     NULL, &p->req[i]);
    if (s)
        return tr_fail(err, len, "reshard %d->%d: %s", x->src, x->dst, mc_last_error());
    p->state[i] = XS_RUNNING;
    return 0;
}

/* Runs a part [first, last) of stage s's backward op: from the top, the parts in between
 * pass the gradient through p->part (the same operations as the whole op, so the same bits). */
static void backward_part(tr_pipe *p, const mc_sched_action_t *a, int first, int last)
{
    const stage_t *st = &p->stages[a->stage];
    const int s = a->stage, mb = a->microbatch, M = p->M;
    const float *dout = last == st->last ? p->dout[s * M + mb] : p->part;
    float *din = first == st->first ? p->din[s * M + mb] : p->part;
    if (a->op == MC_SCHED_W)
        tr_stage_backward_weight(p->m, p->a[mb], first, last);
    else
        tr_stage_backward(p->m, p->a[mb], first, last, 1.0f / (float)(M * p->D), dout, din);
}

static void compute(tr_pipe *p, const mc_sched_action_t *a, const instr_t *in, const int *tokens,
                    const int *targets)
{
    const stage_t *st = &p->stages[a->stage];
    const int s = a->stage, mb = a->microbatch, M = p->M;
    if (in->first < in->last) {
        backward_part(p, a, in->first, in->last);
        return;
    }
    /* replica d runs the batch's microbatches d*M .. d*M + M-1 */
    const size_t off = (size_t)(p->dpi * M + mb) * p->cfg.micro_batch * p->m->cfg.seq;
    tr_acts *acts = p->a[mb];
    switch (a->op) {
    case MC_SCHED_F: {
        float loss = tr_stage_forward(p->m, acts, st->first, st->last, tokens + off, targets + off,
                                      p->in[s * M + mb], p->out[s * M + mb]);
        if (st->last == p->m->nlayers)
            p->loss[mb] = loss;
        break;
    }
    case MC_SCHED_B:
        tr_stage_backward(p->m, acts, st->first, st->last, 1.0f / (float)(M * p->D),
                          p->dout[s * M + mb], p->din[s * M + mb]);
        break;
    case MC_SCHED_I: /* the input gradient now, for the previous stage; W later */
        tr_stage_backward_input(p->m, acts, st->first, st->last, 1.0f / (float)(M * p->D),
                                p->dout[s * M + mb], p->din[s * M + mb]);
        break;
    case MC_SCHED_W:
        tr_stage_backward_weight(p->m, acts, st->first, st->last);
        break;
    default:
        break;
    }
}

typedef struct {
    double seconds, compute, wait, reduce;
} rank_stats;

/* Each transfer once: from its first sender's start to its last receiver seeing it done,
 * and the longest any receiver spent blocked waiting for it (the schedule simulator's
 * measure; with one device per mesh, one sender and one receiver). */
static int transfer_times(tr_pipe *p, tr_pipe_stats *st)
{
    const size_t n = 3 * (size_t)p->nx;
    double *all = p->times + n;
    if (mc_comm_allgather(p->comm, p->times, all, n * sizeof(double)))
        return -1;
    for (int i = 0; i < p->nx; i++) {
        double start = 0.0, done = 0.0, waited = 0.0;
        for (int r = 0; r < p->nworld; r++) { /* 0: that rank did not send or receive it */
            const double *t = &all[r * n + 3 * i];
            if (t[0] > 0.0 && (start == 0.0 || t[0] < start))
                start = t[0];
            done = t[1] > done ? t[1] : done;
            waited = t[2] > waited ? t[2] : waited;
        }
        double c = done > start ? done - start : 0.0;
        st->reshard_s += c;
        st->hidden_s += c - (waited < c ? waited : c);
    }
    return 0;
}

/* The step's loss: every microbatch's (of every replica) from the last stage's first
 * tensor-parallel rank, summed in the batch's order as one process does. */
static int step_loss(tr_pipe *p, tr_pipe_stats *st)
{
    const int all_mb = p->M * p->D;
    double *mine = p->losses, *all = p->losses + all_mb, loss = 0.0;
    memset(mine, 0, (size_t)all_mb * sizeof(double));
    if (p->stages[p->nstages - 1].rank == p->rank && p->tpi == 0)
        for (int mb = 0; mb < p->M; mb++)
            mine[p->dpi * p->M + mb] = p->loss[mb];
    if (mc_comm_allgather(p->comm, mine, all, (size_t)all_mb * sizeof(double)))
        return -1;
    for (int g = 0; g < all_mb; g++)
        for (int r = 0; r < p->nworld; r++) /* one rank wrote each; the others 0 */
            loss += all[(size_t)r * all_mb + g];
    st->loss = (float)(loss / all_mb);
    return 0;
}

int tr_pipe_step(tr_pipe *p, const int *tokens, const int *targets, tr_pipe_stats *st, char *err,
                 size_t len)
{
    int rc = 0;
    double t_begin = now();
    tr_params_zero_grad(&p->m->params);
    p->compute_s = 0.0;
    p->wait_s = 0.0;
    memset(p->times, 0, 3 * (size_t)p->nx * sizeof(double));
    for (int k = 0; k < p->nmine; k++)
        p->state[p->mine[k]] = XS_IDLE;
    double reduce_s = 0.0;
    for (int i = 0; i < p->nprog && !rc; i++) {
        const instr_t *in = &p->prog[i];
        double t0 = now();
        if (in->kind == IN_START) {
            rc = start_request(p, in->index, err, len);
        } else if (in->kind == IN_WAIT) {
            rc = wait_request(p, in->index, err, len);
        } else if (in->kind == IN_DP_SUM) {
            rc = tr_dp_reduce(p->dp, p->comm, &p->m->params, &reduce_s, err, len);
            if (!rc && p->D > 1)
                tr_pipe_record(p, EV_DP_SUM, -1, t0, now());
        } else if (in->kind == IN_DP_START) {
            rc = tr_dp_start(p->dp, p->comm, &p->m->params, in->index, err, len);
            p->dp_start[in->index] = t0;
        } else if (in->kind == IN_DP_WAIT) {
            double blocked;
            rc = tr_dp_wait(p->dp, &p->m->params, in->index, &blocked, err, len);
            reduce_s += blocked;
            if (!rc && p->D > 1) {
                tr_pipe_record(p, EV_DP_WAIT, in->index, t0, now());
                tr_pipe_record(p, EV_DP_SUM, in->index, p->dp_start[in->index], now());
            }
        } else if (in->kind == IN_OPTIM) {
            tr_adamw_update_some(&p->opt, &p->m->params, p->owned);
            tr_pipe_record(p, EV_OPTIM, 0, t0, now());
        } else {
            const mc_sched_action_t *a = &p->acts[in->index];
            compute(p, a, in, tokens, targets);
            double t1 = now();
            rc = tr_tp_check(p->tpg, err, len);
            p->compute_s += t1 - t0;
            tr_pipe_record(p, EV_COMPUTE, i, t0, t1);
            poll_requests(p);
        }
    }
    if (rc) { /* the requests still in flight */
        tr_dp_abort(p->dp);
        for (int k = 0; k < p->nmine; k++) {
            mc_request_free(p->req[p->mine[k]]);
            p->req[p->mine[k]] = NULL;
        }
        return -1;
    }
    reduce_s += tr_tp_take_seconds(p->tpg);

    double t_end = now();
    tr_pipe_record(p, EV_STEP, 0, t_begin, t_end);
    rank_stats mine = {.seconds = t_end - t_begin,
                       .compute = p->compute_s,
                       .wait = p->wait_s,
                       .reduce = reduce_s},
               *all;
    if (!(all = calloc((size_t)p->nworld, sizeof(*all))))
        return tr_fail(err, len, "out of memory");
    memset(st, 0, sizeof(*st));
    mc_status_t s = mc_comm_allgather(p->comm, &mine, all, sizeof(mine));
    if (s || transfer_times(p, st) || step_loss(p, st)) {
        free(all);
        return tr_fail(err, len, "step statistics: %s", mc_last_error());
    }
    for (int r = 0; r < p->nworld; r++) {
        st->seconds = all[r].seconds > st->seconds ? all[r].seconds : st->seconds;
        st->compute_s += all[r].compute;
        st->wait_s += all[r].wait;
        st->reduce_s += all[r].reduce;
    }
    free(all);
    p->step++;
    return 0;
}
