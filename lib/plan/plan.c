/* Plan lifecycle: create (pieces -> strategy -> chunks -> counts -> validate -> estimate,
 * bound), query, destroy; strategy names; flow building and box helpers. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "meshcast/config.h"
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

static const struct {
    const char *name;
    mc_strategy_t strategy;
    mc_sender_choice_t sender;
} strategy_names[] = {
    {"send_recv", MC_STRATEGY_SEND_RECV, MC_SENDER_LB_SIZE},
    {"local_allgather", MC_STRATEGY_LOCAL_ALLGATHER, MC_SENDER_LB_SIZE},
    {"broadcast_first", MC_STRATEGY_BROADCAST, MC_SENDER_FIRST},
    {"broadcast_lb_size", MC_STRATEGY_BROADCAST, MC_SENDER_LB_SIZE},
    {"broadcast_lb_order", MC_STRATEGY_BROADCAST, MC_SENDER_LB_ORDER},
    {"meshcast", MC_STRATEGY_MESHCAST, MC_SENDER_LB_SIZE},
};
#define NSTRATEGY_NAMES (sizeof strategy_names / sizeof strategy_names[0])

mc_status_t mc_strategy_parse(const char *name, mc_strategy_t *strategy, mc_sender_choice_t *sender)
{
    if (name && !strcmp(name, "broadcast"))
        name = "broadcast_lb_size";
    for (size_t i = 0; name && i < NSTRATEGY_NAMES; i++) {
        if (strcmp(name, strategy_names[i].name))
            continue;
        *strategy = strategy_names[i].strategy;
        *sender = strategy_names[i].sender;
        return MC_OK;
    }
    return mc_error(MC_ERR_INVALID,
                    "unknown strategy '%s' (send_recv, local_allgather, broadcast, "
                    "broadcast_first, broadcast_lb_size, broadcast_lb_order, meshcast, all)",
                    name ? name : "(null)");
}

const char *mc_strategy_name(mc_strategy_t strategy, mc_sender_choice_t sender)
{
    for (size_t i = 0; i < NSTRATEGY_NAMES; i++)
        if (strategy_names[i].strategy == strategy &&
            (strategy != MC_STRATEGY_BROADCAST || strategy_names[i].sender == sender))
            return strategy_names[i].name;
    return NULL;
}

int64_t mc_box_volume(const mc_box_t *box, int ndim)
{
    int64_t v = 1;
    for (int d = 0; d < ndim; d++)
        v *= box->hi[d] - box->lo[d];
    return v;
}

int mc_box_split(const mc_box_t *box, int ndim, int k, mc_box_t *out)
{
    int dim = -1;
    for (int d = 0; d < ndim && dim < 0; d++)
        if (box->hi[d] - box->lo[d] >= 2)
            dim = d;
    int64_t extent = dim < 0 ? 1 : box->hi[dim] - box->lo[dim];
    if (k > extent)
        k = (int)extent;
    if (k <= 1) {
        out[0] = *box;
        return 1;
    }
    for (int i = 0; i < k; i++) {
        out[i] = *box;
        out[i].lo[dim] = box->lo[dim] + extent * i / k;
        out[i].hi[dim] = box->lo[dim] + extent * (i + 1) / k;
    }
    return k;
}

mc_status_t mc_plan_reserve(mc_plan_t *plan, int64_t flows, int64_t edges)
{
    /* an empty plan's arrays (a candidate building into a judged one's) are not copied */
    if (flows > plan->flows_cap) {
        mc_flow_t *f = plan->nflows ? realloc(plan->flows, (size_t)flows * sizeof *f)
                                    : malloc((size_t)flows * sizeof *f);
        if (!f)
            return mc_error(MC_ERR_NOMEM, "out of memory growing the plan's flows");
        if (!plan->nflows)
            free(plan->flows);
        mc_advise_huge(f, (size_t)flows * sizeof *f);
        plan->flows = f;
        plan->flows_cap = flows;
    }
    if (edges > plan->edges_cap) {
        mc_edge_t *e = plan->nedges ? realloc(plan->edges, (size_t)edges * sizeof *e)
                                    : malloc((size_t)edges * sizeof *e);
        if (!e)
            return mc_error(MC_ERR_NOMEM, "out of memory growing the plan's edges");
        if (!plan->nedges)
            free(plan->edges);
        mc_advise_huge(e, (size_t)edges * sizeof *e);
        plan->edges = e;
        plan->edges_cap = edges;
    }
    return MC_OK;
}

mc_status_t mc_plan_add_flow(mc_plan_t *plan, int64_t piece, const mc_box_t *box)
{
    mc_status_t s = mc_grow((void **)&plan->flows, &plan->flows_cap, plan->nflows,
                            sizeof *plan->flows, 64, "the plan's flows");
    if (s)
        return s;
    mc_flow_t *f = &plan->flows[plan->nflows++];
    memset(f, 0, sizeof *f);
    f->piece = piece;
    f->box = *box;
    f->bytes = mc_box_volume(box, plan->pieces->ndim) * plan->pieces->elem_size;
    f->edge0 = plan->nedges;
    return MC_OK;
}

mc_status_t mc_plan_add_edge(mc_plan_t *plan, int64_t from, int64_t to)
{
    mc_status_t s = mc_grow((void **)&plan->edges, &plan->edges_cap, plan->nedges,
                            sizeof *plan->edges, 256, "the plan's edges");
    if (s)
        return s;
    plan->edges[plan->nedges++] = (mc_edge_t){from, to};
    plan->flows[plan->nflows - 1].nedges++;
    return MC_OK;
}

mc_status_t mc_plan_add_gather(mc_plan_t *plan, int64_t from, int64_t to)
{
    mc_flow_t *f = &plan->flows[plan->nflows - 1];
    if (f->nedges != f->ngather)
        return mc_error(MC_ERR_INTERNAL, "plan: gather edge after a result edge");
    mc_status_t s = mc_plan_add_edge(plan, from, to);
    if (!s)
        f->ngather++;
    return s;
}

/* Pipeline shape of a flow: along its slowest root-to-leaf path, the sum of 1/B over the
 * hops, and the slowest link class on it. path[d] holds that sum up to device d, valid where
 * stamp[d] == flow index + 1 (scratch arrays shared across flows; holders start at 0). */
static double flow_fill(const mc_plan_t *plan, int64_t fi, double *path, int64_t *stamp,
                        const double inv[3], mc_link_class_t *slowest)
{
    const mc_flow_t *f = &plan->flows[fi];
    double worst = 0;
    *slowest = MC_LINK_INTRA;
    for (int64_t i = 0; i < f->nedges; i++) {
        const mc_edge_t *e = &plan->edges[f->edge0 + i];
        mc_link_class_t cls = mc_edge_class(plan->topo, e->from, e->to);
        double parent = stamp[e->from] == fi + 1 ? path[e->from] : 0;
        double here = parent + inv[cls];
        path[e->to] = here;
        stamp[e->to] = fi + 1;
        worst = here > worst ? here : worst;
        if (cls == MC_LINK_NIC)
            *slowest = MC_LINK_NIC;
    }
    return worst;
}

/* Most bytes any one port of a link class carries in the plan (NIC: per host and
 * direction; intra: per device and direction). */
static double busiest_port(const mc_plan_t *plan, mc_link_class_t cls)
{
    const mc_topology_t *topo = plan->topo;
    int64_t n = cls == MC_LINK_NIC ? mc_topology_hosts(topo) : mc_topology_devices(topo);
    double *out = calloc((size_t)n, sizeof *out), *in = calloc((size_t)n, sizeof *in), most = 0;
    for (int64_t i = 0; out && in && i < plan->nflows; i++)
        for (int64_t j = 0; j < plan->flows[i].nedges; j++) {
            const mc_edge_t *e = &plan->edges[plan->flows[i].edge0 + j];
            if (mc_edge_class(topo, e->from, e->to) != cls)
                continue;
            int64_t a = cls == MC_LINK_NIC ? mc_host_of(topo, e->from) : e->from;
            int64_t b = cls == MC_LINK_NIC ? mc_host_of(topo, e->to) : e->to;
            out[a] += (double)plan->flows[i].bytes;
            in[b] += (double)plan->flows[i].bytes;
            most = out[a] > most ? out[a] : most;
            most = in[b] > most ? in[b] : most;
        }
    free(out);
    free(in);
    return most;
}

/* The most chunk transfers the plan may have (mc_plan_t's max_chunks). */
static int64_t max_chunks(const mc_plan_t *plan)
{
    return plan->max_chunks > 0 ? plan->max_chunks : MC_PLAN_MAX_CHUNKS;
}

/* Chunk transfers of the plan if no chunk is smaller than floor bytes, counted only until
 * past max_chunks (saturates at INT64_MAX). */
static int64_t count_chunks(const mc_plan_t *plan, int64_t floor)
{
    int64_t total = 0, most = max_chunks(plan);
    for (int64_t i = 0; i < plan->nflows && total <= most; i++) {
        const mc_flow_t *f = &plan->flows[i];
        int64_t c = f->chunk_bytes > floor ? f->chunk_bytes : floor;
        int64_t n = f->bytes / c + (f->bytes % c != 0), sends;
        if (mc_mul_i64(n, f->nedges, &sends) || mc_add_i64(total, sends, &total))
            total = INT64_MAX;
    }
    return total;
}

/* Grows chunks to a common least size, the smallest whole number of elements that keeps
 * the plan within max_chunks (or one chunk per message, if there are more messages), then
 * rounds each to whole elements within its flow. */
static void cap_chunks(mc_plan_t *plan)
{
    const int64_t elem = plan->pieces->elem_size, most = max_chunks(plan);
    int64_t lo = 1, hi = 1; /* in elements: hi keeps the cap, lo - 1 does not */
    int64_t messages = 0;   /* each edge sends a chunk at least */
    for (int64_t i = 0; i < plan->nflows; i++) {
        if (plan->flows[i].bytes / elem > hi)
            hi = plan->flows[i].bytes / elem;
        messages += plan->flows[i].nedges;
    }
    if (messages > most)
        lo = hi; /* no chunk size keeps the cap: the largest, one chunk per message */
    else if (count_chunks(plan, elem) <= most)
        hi = 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (count_chunks(plan, mid * elem) <= most)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (int64_t i = 0; i < plan->nflows; i++) {
        mc_flow_t *f = &plan->flows[i];
        int64_t c = f->chunk_bytes > hi * elem ? f->chunk_bytes / elem * elem : hi * elem;
        if (c < elem)
            c = elem;
        f->chunk_bytes = c < f->bytes ? c : (f->bytes > 0 ? f->bytes : elem);
    }
}

/* Moving S bytes through a bottleneck port (latency α) in chunks of c costs about
 * (S/c)·α + S/B, plus a pipeline fill of c·W where W sums 1/B over the other hops of the
 * slowest path; the minimum is at c* = sqrt(S·α/W). S is the busiest port's bytes of that
 * class (flows share it), clamped to 256 KiB..4 MiB (FIELD-NOTES). A NIC's message cost
 * (port time per chunk) is paid per chunk as α is: it adds to α. */
mc_status_t mc_plan_set_chunks(mc_plan_t *plan)
{
    /* a cap below the least chunk lowers the least chunk to it */
    const int64_t cap = plan->chunk_cap,
                  lo = cap > 0 && cap < MC_PLAN_MIN_CHUNK_BYTES ? cap : MC_PLAN_MIN_CHUNK_BYTES,
                  hi = cap >= lo ? cap : MC_PLAN_MAX_CHUNK_BYTES;
    double port[2] = {-1, -1}; /* busiest port bytes: intra, NIC (computed on demand) */
    double inv[3];             /* 1/B per link class, for flow_fill */
    int64_t messages = 0;
    for (int64_t i = 0; i < plan->nflows; i++)
        messages += plan->flows[i].nedges;
    /* more messages than max_chunks: cap_chunks would make every flow one chunk whatever
     * the formula chose, so the formula is not worked out */
    if (messages > max_chunks(plan)) {
        for (int64_t i = 0; i < plan->nflows; i++)
            plan->flows[i].chunk_bytes =
                plan->flows[i].bytes > 0 ? plan->flows[i].bytes : plan->pieces->elem_size;
        return MC_OK;
    }
    for (int k = 0; k < 3; k++)
        inv[k] = 1.0 / mc_topology_link(plan->topo, (mc_link_class_t)k).bandwidth;
    size_t ndev = (size_t)mc_topology_devices(plan->topo);
    double *path = mc_calloc(ndev, sizeof *path);
    int64_t *stamp = mc_calloc(ndev, sizeof *stamp);
    if (!path || !stamp) {
        free(path);
        free(stamp);
        return MC_ERR_NOMEM;
    }
    for (int64_t i = 0; i < plan->nflows; i++) {
        mc_flow_t *f = &plan->flows[i];
        int64_t c;
        if (plan->params.chunk_bytes > 0) {
            c = plan->params.chunk_bytes;
        } else {
            mc_link_class_t cls;
            double fill = flow_fill(plan, i, path, stamp, inv, &cls);
            int k = cls == MC_LINK_NIC;
            mc_link_t link = mc_topology_link(plan->topo, cls);
            if (port[k] < 0)
                port[k] = busiest_port(plan, cls);
            double s = port[k] > (double)f->bytes ? port[k] : (double)f->bytes;
            double w = fill - 1.0 / link.bandwidth;
            double alpha = link.latency + (k ? plan->topo->nic_msg_s : 0);
            double best = w > 1e-30 ? sqrt(s * alpha / w) : (double)hi;
            if (plan->chunk_scale > 0)
                best *= plan->chunk_scale;
            c = best < lo ? lo : best > hi ? hi : (int64_t)best;
        }
        f->chunk_bytes = c;
    }
    free(path);
    free(stamp);
    cap_chunks(plan);
    return MC_OK;
}

void mc_plan_destroy(mc_plan_t *plan)
{
    if (!plan)
        return;
    mc_layout_destroy(plan->src);
    mc_layout_destroy(plan->dst);
    mc_topology_destroy(plan->topo);
    mc_pieces_destroy(plan->pieces);
    free(plan->flows);
    free(plan->edges);
    free(plan);
}

static mc_status_t check_devices(const mc_layout_t *layout, const mc_topology_t *topo,
                                 const char *side)
{
    const mc_mesh_t *mesh = mc_layout_mesh(layout);
    for (int64_t i = 0; i < mc_mesh_size(mesh); i++) {
        int64_t d = mc_mesh_device(mesh, i);
        if (mc_topology_host_of(topo, d) < 0)
            return mc_error(MC_ERR_INVALID,
                            "meshes do not fit the topology: %s device %lld is outside '%s' "
                            "(%lld hosts x %lld devices)",
                            side, (long long)d, mc_topology_name(topo),
                            (long long)mc_topology_hosts(topo),
                            (long long)mc_topology_devices_per_host(topo));
    }
    return MC_OK;
}

static mc_status_t check_deliveries(const mc_pieces_t *pieces)
{
    int64_t n = 0;
    for (int64_t i = 0; i < pieces->npieces; i++)
        n += pieces->pieces[i].nneeders;
    if (n > MC_PLAN_MAX_DELIVERIES)
        return mc_error(MC_ERR_OVERFLOW,
                        "%lld deliveries (pieces to devices that need them) are more than the "
                        "limit of %lld per plan",
                        (long long)n, (long long)MC_PLAN_MAX_DELIVERIES);
    return MC_OK;
}

static mc_status_t plan_params(const mc_plan_params_t *in, mc_plan_params_t *out)
{
    static const mc_plan_params_t none; /* NULL: every default, MESHCAST_CHUNK_BYTES too */
    *out = (mc_plan_params_t){0, MC_STRATEGY_MESHCAST, MC_SENDER_LB_SIZE, 0, 1};
    if (!in)
        in = &none;
    out->field_mask = in->field_mask;
    if (in->field_mask & MC_PLAN_PARAM_STRATEGY) {
        if ((unsigned)in->strategy >= MC_STRATEGY_COUNT)
            return mc_error(MC_ERR_INVALID, "unknown strategy %d", (int)in->strategy);
        out->strategy = in->strategy;
    }
    if (in->field_mask & MC_PLAN_PARAM_SENDER) {
        if ((unsigned)in->sender > MC_SENDER_LB_ORDER)
            return mc_error(MC_ERR_INVALID, "unknown sender choice %d", (int)in->sender);
        out->sender = in->sender;
    }
    if (in->field_mask & MC_PLAN_PARAM_CHUNK_BYTES) {
        if (in->chunk_bytes < 0)
            return mc_error(MC_ERR_INVALID, "chunk_bytes %lld is negative",
                            (long long)in->chunk_bytes);
        out->chunk_bytes = in->chunk_bytes;
    }
    if (in->field_mask & MC_PLAN_PARAM_SEED)
        out->seed = in->seed;
    if (!(in->field_mask & MC_PLAN_PARAM_CHUNK_BYTES)) {
        double c = 0;
        mc_status_t s = mc_setting_number("CHUNK_BYTES", &c);
        if (s)
            return s;
        out->chunk_bytes = (int64_t)c;
    }
    return MC_OK;
}

/* The planner works on compact devices 0..n-1 (the ids both meshes use, ascending) of a
 * compact topology, so its time and memory follow the devices and hosts used, not the
 * largest id or the host count. */
typedef struct {
    int64_t *ids, n;
    mc_layout_t *src, *dst;
    mc_topology_t *topo;
} compact_t;

static void compact_free(compact_t *c)
{
    free(c->ids);
    mc_layout_destroy(c->src);
    mc_layout_destroy(c->dst);
    mc_topology_destroy(c->topo);
    memset(c, 0, sizeof *c);
}

static mc_status_t compact(const mc_layout_t *src, const mc_layout_t *dst,
                           const mc_topology_t *topo, compact_t *c)
{
    mc_status_t s;
    memset(c, 0, sizeof *c);
    if ((s = check_devices(src, topo, "src")) || (s = check_devices(dst, topo, "dst")) ||
        (s = mc_mesh_union(src->mesh, dst->mesh, &c->ids, &c->n)) ||
        (s = mc_layout_relabel(src, c->ids, c->n, &c->src)) ||
        (s = mc_layout_relabel(dst, c->ids, c->n, &c->dst)) ||
        (s = mc_topology_compact(topo, c->ids, c->n, &c->topo)))
        compact_free(c);
    return s;
}

static void expand_list(int64_t *devs, int n, const int64_t *ids)
{
    for (int i = 0; i < n; i++)
        devs[i] = ids[devs[i]];
}

/* Puts the real device ids back into a plan made on compact ones (ascending, so sorted
 * lists stay sorted) and gives it the real layouts and topology. */
static mc_status_t expand(mc_plan_t *plan, const mc_layout_t *src, const mc_layout_t *dst,
                          const mc_topology_t *topo, const int64_t *ids)
{
    mc_layout_t *s2 = NULL, *d2 = NULL;
    mc_topology_t *t2 = NULL;
    mc_status_t s;
    if ((s = mc_layout_copy(src, &s2)) || (s = mc_layout_copy(dst, &d2)) ||
        (s = mc_topology_copy(topo, &t2))) {
        mc_layout_destroy(s2);
        mc_layout_destroy(d2);
        return s;
    }
    for (int64_t i = 0; i < plan->nedges; i++)
        plan->edges[i] = (mc_edge_t){ids[plan->edges[i].from], ids[plan->edges[i].to]};
    for (int64_t i = 0; i < plan->pieces->npieces; i++) {
        mc_piece_t *p = &plan->pieces->pieces[i];
        expand_list(p->holders, p->nholders, ids);
        expand_list(p->needers, p->nneeders, ids);
        expand_list(p->self, p->nself, ids);
    }
    mc_layout_destroy(plan->src);
    mc_layout_destroy(plan->dst);
    mc_topology_destroy(plan->topo);
    plan->src = s2;
    plan->dst = d2;
    plan->topo = t2;
    return MC_OK;
}

/* Reduction plans (a partial source): meshcast chooses among the naive and the
 * reduce-scatter plans, send_recv and broadcast plan the naive one; local_allgather has
 * no reduction and says so rather than treat addends as copies. */
static mc_status_t check_reduction(const mc_pieces_t *pieces, const mc_plan_params_t *params,
                                   mc_dtype_t dtype)
{
    if (pieces->naddends <= 1)
        return MC_OK;
    if (dtype == MC_DTYPE_BOOL && pieces->op == MC_REDUCE_AVG)
        return mc_error(MC_ERR_UNSUPPORTED, "plan: avg of bool is not defined");
    if (params->strategy != MC_STRATEGY_LOCAL_ALLGATHER)
        return MC_OK;
    return mc_error(MC_ERR_UNSUPPORTED,
                    "plan: the source is Partial (pending %s of %lld addends); strategy "
                    "local_allgather moves copies only (meshcast, send_recv and broadcast plan "
                    "reductions)",
                    mc_reduce_name(pieces->op), (long long)pieces->naddends);
}

mc_status_t mc_plan_create(const mc_layout_t *src, const mc_layout_t *dst,
                           const mc_topology_t *topo, const mc_plan_params_t *params,
                           mc_plan_t **out)
{
    mc_status_t s;
    compact_t c = {0};
    if (!src || !dst || !topo || !out)
        return mc_error(MC_ERR_INVALID, "mc_plan_create: NULL argument");
    double t0 = mc_now();
    mc_plan_t *plan = mc_calloc(1, sizeof *plan);
    if (!plan)
        return MC_ERR_NOMEM;
    static atomic_uint_fast64_t next_id = 1; /* plans may be created in several threads */
    plan->id = atomic_fetch_add(&next_id, 1);
    if ((s = plan_params(params, &plan->params)) || (s = compact(src, dst, topo, &c)))
        goto err;
    plan->src = c.src;
    plan->dst = c.dst;
    plan->topo = c.topo;
    c.src = c.dst = NULL;
    c.topo = NULL;
    if ((s = mc_pieces_compute(plan->src, plan->dst, &plan->pieces)) ||
        (s = check_reduction(plan->pieces, &plan->params, plan->src->dtype)) ||
        (s = check_deliveries(plan->pieces)))
        goto err;
    /* the bound first: strategies may plan against it */
    if ((s = mc_bound_compute(plan->pieces, plan->topo, &plan->stats.lower_bound_s)))
        goto err;
    switch (plan->params.strategy) {
    case MC_STRATEGY_SEND_RECV:
        s = plan->pieces->naddends > 1 ? mc_strategy_reduce_naive(plan)
                                       : mc_strategy_send_recv(plan);
        break;
    case MC_STRATEGY_LOCAL_ALLGATHER:
        s = mc_strategy_local_allgather(plan);
        break;
    case MC_STRATEGY_BROADCAST:
        s = plan->pieces->naddends > 1 ? mc_strategy_reduce_naive(plan)
                                       : mc_strategy_broadcast(plan);
        break;
    default:
        s = mc_strategy_meshcast(plan);
        break;
    }
    if (s)
        goto err;
    if ((s = mc_plan_set_chunks(plan)) || (s = mc_plan_count(plan)))
        goto err;
    plan->stats.plan_ms = 1e3 * (mc_now() - t0);
    s = mc_plan_validate(plan);
    if (s) {
        mc_error_context(s, "internal error: %s plan failed validation",
                         mc_strategy_name(plan->params.strategy, plan->params.sender));
        s = MC_ERR_INTERNAL;
        goto err;
    }
    plan->stats.valid = 1;
    /* strategies that simulated their final plan already hold its estimate */
    if (plan->stats.estimate_s == 0 && (s = mc_plan_simulate(plan, &plan->stats.estimate_s)))
        goto err;
    if ((s = expand(plan, src, dst, topo, c.ids)))
        goto err;
    compact_free(&c);
    *out = plan;
    return MC_OK;
err:
    compact_free(&c);
    mc_plan_destroy(plan);
    return s;
}

mc_status_t mc_plan_query(const mc_plan_t *plan, mc_plan_stats_t *out)
{
    if (!plan || !out)
        return mc_error(MC_ERR_INVALID, "mc_plan_query: NULL argument");
    *out = plan->stats;
    return MC_OK;
}

mc_status_t mc_lower_bound(const mc_layout_t *src, const mc_layout_t *dst,
                           const mc_topology_t *topo, double *seconds)
{
    mc_pieces_t *pieces = NULL;
    mc_status_t s;
    if (!src || !dst || !topo || !seconds)
        return mc_error(MC_ERR_INVALID, "mc_lower_bound: NULL argument");
    compact_t c;
    if ((s = compact(src, dst, topo, &c)))
        return s;
    if (!(s = mc_pieces_compute(c.src, c.dst, &pieces)))
        s = mc_bound_compute(pieces, c.topo, seconds);
    mc_pieces_destroy(pieces);
    compact_free(&c);
    return s;
}
