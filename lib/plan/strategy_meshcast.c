/* meshcast: multi-source, load-balanced, chunk-pipelined chains (docs/planning.md).
 *
 * Each piece is cut into stripes, one per holder device and at least one per needer of the
 * widest needing host (stripes stay >= 1 MiB), so every replica of the source sends and
 * every receiving device forwards a share. Each stripe is a tree that enters every host needing it
 * exactly once over the NIC, then fans out to that host's needers (a star or a chain,
 * by the ratio of device-link to NIC bandwidth). The sender of
 * each host crossing is chosen greedily, largest pieces first, as the candidate host with the
 * least NIC egress so far — a holder host, or a host that already got the stripe (a relay),
 * which is what lets host egress reach the max-closure term of the lower bound. Inside a
 * host the receiving device is the needer with the least NIC ingress; hosts that hold the
 * piece feed their own needers from their least-loaded holder.
 *
 * A partial source (a reduction) gets the naive or a reduce-scatter plan
 * (strategy_reduce_scatter.c), whichever the simulator finds fastest. */
#include <math.h>
#include <stdlib.h>
#include "strategy_common.h"
#include "util/util.h"

#define MIN_STRIPE_BYTES (1 << 20)

enum {
    POLICY_PER_HOLDER, /* one stripe per holder device */
    POLICY_PER_NEEDER, /* and at least one per needer of the widest needing host */
    POLICY_DIRECT,     /* no stripes, no relays: each needer straight from a holder */
    /* the other strategies' plans, as candidates */
    POLICY_SEND_RECV,
    POLICY_LOCAL_ALLGATHER,
    POLICY_BROADCAST_FIRST,
    POLICY_BROADCAST_LB_SIZE,
    POLICY_BROADCAST_LB_ORDER,
    /* reductions (partial source) */
    POLICY_REDUCE_NAIVE,
    POLICY_REDUCE_SCATTER,
    POLICY_REDUCE_HIERARCHICAL
};

typedef struct {
    mc_plan_t *plan;
    mc_loads_t loads;
    mc_host_run_t *hruns, *nruns;
    mc_box_t *stripes;
    int64_t *entry;  /* per host: device that received the current stripe */
    int64_t *served; /* hosts the current stripe reached, in order */
    int64_t *order;  /* needing host runs, rotated per stripe */
} ctx_t;

/* Sender for the next host crossing of a stripe: among the holder hosts and the hosts the
 * stripe already reached (served[0..nserved), host ids), the one with the least NIC egress;
 * from a holder host its least-loaded holder, from a relay host the device that got it. */
static int64_t pick_sender(ctx_t *c, const mc_piece_t *p, int nh, const int64_t *served,
                           int nserved)
{
    int64_t best = -1;
    double best_load = 0;
    for (int i = 0; i < nh; i++) {
        double l = c->loads.host_send[c->hruns[i].host];
        if (best < 0 || l < best_load) {
            best = c->hruns[i].host;
            best_load = l;
        }
    }
    for (int i = 0; i < nserved; i++)
        if (c->loads.host_send[served[i]] < best_load) {
            best = served[i];
            best_load = c->loads.host_send[best];
        }
    const mc_host_run_t *run = mc_find_run(c->hruns, nh, best);
    return run ? mc_least_loaded(p->holders + run->first, run->count, c->loads.dev_nic_send)
               : c->entry[best];
}

static mc_status_t plan_piece(ctx_t *c, int64_t i, int64_t rotation, int per_needer)
{
    mc_plan_t *plan = c->plan;
    const mc_piece_t *p = &plan->pieces->pieces[i];
    const mc_topology_t *topo = plan->topo;
    int ndim = plan->pieces->ndim;
    mc_status_t s = MC_OK;
    int nh = mc_group_by_host(topo, p->holders, p->nholders, c->hruns);
    int nn = mc_group_by_host(topo, p->needers, p->nneeders, c->nruns);
    int nneed = 0;
    for (int g = 0; g < nn; g++)
        if (!mc_find_run(c->hruns, nh, c->nruns[g].host))
            c->order[nneed++] = g;
    /* stripes: one per holder (all replicas send) and, with per_needer, at least one per
     * needer of the widest needing host (each receiving device forwards a share); each
     * stripe >= MIN_STRIPE_BYTES */
    int64_t want = p->bytes / MIN_STRIPE_BYTES, k64 = p->nholders;
    for (int j = 0; per_needer && j < nneed; j++)
        if (c->nruns[c->order[j]].count > k64)
            k64 = c->nruns[c->order[j]].count;
    int k = (int)(k64 < want ? k64 : (want > 1 ? want : 1));
    k = mc_box_split(&p->box, ndim, k, c->stripes);
    for (int st = 0; st < k && !s; st++) {
        double bytes = (double)(mc_box_volume(&c->stripes[st], ndim) * plan->pieces->elem_size);
        s = mc_plan_add_flow(plan, i, &c->stripes[st]);
        /* hosts that hold the piece: chain from a local holder */
        for (int g = 0; g < nn && !s; g++) {
            const mc_host_run_t *run = mc_find_run(c->hruns, nh, c->nruns[g].host);
            if (!run)
                continue;
            const int64_t *needers = p->needers + c->nruns[g].first;
            int64_t from = mc_least_loaded(p->holders + run->first, run->count, c->loads.dev_send);
            int64_t to = mc_least_loaded(needers, c->nruns[g].count, c->loads.dev_recv);
            mc_loads_add(&c->loads, topo, from, to, bytes);
            if (!(s = mc_plan_add_edge(plan, from, to)))
                s = mc_fan_out_in_host(plan, &c->loads, needers, c->nruns[g].count, to, bytes);
        }
        /* hosts that need it: one NIC crossing each, rotating which host goes first */
        for (int j = 0; j < nneed && !s; j++) {
            const mc_host_run_t *g = &c->nruns[c->order[(j + st + rotation) % nneed]];
            const int64_t *needers = p->needers + g->first;
            int64_t from = pick_sender(c, p, nh, c->served, j);
            int64_t to = mc_least_loaded(needers, g->count, c->loads.dev_nic_recv);
            mc_loads_add(&c->loads, topo, from, to, bytes);
            c->entry[g->host] = to;
            c->served[j] = g->host;
            if (!(s = mc_plan_add_edge(plan, from, to)))
                s = mc_fan_out_in_host(plan, &c->loads, needers, g->count, to, bytes);
        }
    }
    return s;
}

/* Direct policy: one flow per piece, every needer fed by a holder of its own host if any,
 * else by the least-loaded holder of the holder host with the least NIC egress. */
static mc_status_t plan_direct(ctx_t *c, int64_t i)
{
    mc_plan_t *plan = c->plan;
    const mc_piece_t *p = &plan->pieces->pieces[i];
    const mc_topology_t *topo = plan->topo;
    int nh = mc_group_by_host(topo, p->holders, p->nholders, c->hruns);
    mc_status_t s = mc_plan_add_flow(plan, i, &p->box);
    for (int j = 0; j < p->nneeders && !s; j++) {
        int64_t n = p->needers[j], from;
        const mc_host_run_t *run = mc_find_run(c->hruns, nh, mc_topology_host_of(topo, n));
        if (run)
            from = mc_least_loaded(p->holders + run->first, run->count, c->loads.dev_send);
        else
            from = pick_sender(c, p, nh, NULL, 0);
        mc_loads_add(&c->loads, topo, from, n, (double)p->bytes);
        s = mc_plan_add_edge(plan, from, n);
    }
    return s;
}

static mc_status_t build(mc_plan_t *plan, int policy)
{
    const mc_pieces_t *ps = plan->pieces;
    ctx_t c = {.plan = plan};
    int64_t most = 1, nhost = mc_topology_hosts(plan->topo), *by_size = NULL;
    for (int64_t i = 0; i < ps->npieces; i++) {
        if (ps->pieces[i].nholders > most)
            most = ps->pieces[i].nholders;
        if (ps->pieces[i].nneeders > most)
            most = ps->pieces[i].nneeders;
    }
    mc_status_t s = mc_loads_create(plan->topo, &c.loads);
    if (s)
        return s;
    c.hruns = mc_calloc((size_t)most, sizeof *c.hruns);
    c.nruns = mc_calloc((size_t)most, sizeof *c.nruns);
    c.stripes = mc_calloc((size_t)most, sizeof *c.stripes);
    c.entry = mc_calloc((size_t)nhost, sizeof *c.entry);
    c.served = mc_calloc((size_t)most, sizeof *c.served);
    c.order = mc_calloc((size_t)most, sizeof *c.order);
    if (!c.hruns || !c.nruns || !c.stripes || !c.entry || !c.served || !c.order) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    /* most plans have about one flow and edge per (piece, needer): reserve that up front */
    if ((s = mc_grow((void **)&plan->flows, &plan->flows_cap, plan->flows_cap, sizeof *plan->flows,
                     ps->npieces + 1, "the plan's flows")) ||
        (s = mc_pieces_by_size(ps, &by_size)))
        goto out;
    for (int64_t k = 0; k < ps->npieces && !s; k++)
        if (ps->pieces[by_size[k]].nneeders > 0)
            s = policy == POLICY_DIRECT
                    ? plan_direct(&c, by_size[k])
                    : plan_piece(&c, by_size[k], k, policy == POLICY_PER_NEEDER);
    if (!s)
        s = mc_plan_order_rounds(plan);
out:
    free(by_size);
    free(c.hruns);
    free(c.nruns);
    free(c.stripes);
    free(c.entry);
    free(c.served);
    free(c.order);
    mc_loads_destroy(&c.loads);
    return s;
}

/* Whether some piece would get more stripes with per_needer (else both builds agree). */
static int per_needer_differs(const mc_plan_t *plan)
{
    const mc_pieces_t *ps = plan->pieces;
    int64_t dph = mc_topology_devices_per_host(plan->topo);
    for (int64_t i = 0; i < ps->npieces; i++) {
        const mc_piece_t *p = &ps->pieces[i];
        if (p->nneeders > p->nholders && p->nholders < dph &&
            p->bytes >= 2 * (int64_t)MIN_STRIPE_BYTES)
            return 1;
    }
    return 0;
}

/* Builds alt with a policy, and moves it into plan if the simulator finds it faster. */
static mc_status_t try_policy(mc_plan_t *plan, int policy, double *best)
{
    mc_plan_t alt = *plan;
    double t = 0;
    alt.flows = NULL;
    alt.edges = NULL;
    alt.nflows = alt.flows_cap = alt.nedges = alt.edges_cap = 0;
    mc_status_t s;
    switch (policy) {
    case POLICY_SEND_RECV:
        s = mc_strategy_send_recv(&alt);
        break;
    case POLICY_LOCAL_ALLGATHER:
        s = mc_strategy_local_allgather(&alt);
        break;
    case POLICY_BROADCAST_FIRST:
    case POLICY_BROADCAST_LB_SIZE:
    case POLICY_BROADCAST_LB_ORDER:
        alt.params.sender = policy == POLICY_BROADCAST_FIRST     ? MC_SENDER_FIRST
                            : policy == POLICY_BROADCAST_LB_SIZE ? MC_SENDER_LB_SIZE
                                                                 : MC_SENDER_LB_ORDER;
        s = mc_strategy_broadcast(&alt);
        break;
    case POLICY_REDUCE_NAIVE:
        s = mc_strategy_reduce_naive(&alt);
        break;
    case POLICY_REDUCE_SCATTER:
    case POLICY_REDUCE_HIERARCHICAL:
        s = mc_strategy_reduce_scatter(&alt, policy == POLICY_REDUCE_HIERARCHICAL);
        break;
    default:
        s = build(&alt, policy);
        break;
    }
    if (!s && !(s = mc_plan_set_chunks(&alt)))
        s = mc_plan_simulate(&alt, &t);
    if (!s && t < *best) {
        mc_flow_t *f = plan->flows;
        mc_edge_t *e = plan->edges;
        plan->flows = alt.flows;
        plan->edges = alt.edges;
        plan->nflows = alt.nflows;
        plan->nedges = alt.nedges;
        plan->flows_cap = alt.flows_cap;
        plan->edges_cap = alt.edges_cap;
        alt.flows = f;
        alt.edges = e;
        *best = t;
    }
    free(alt.flows);
    free(alt.edges);
    return s;
}

/* Plans with the stripe policy first, then tries the others and keeps whichever the
 * simulator finds fastest: more stripes spread forwarding over more devices, fewer keep
 * pipelines short. While the plan is still measurably (0.1%) above the lower bound — in
 * practice when latency rather than bandwidth dominates (small pieces) — direct sends and
 * then the other strategies' plans are tried too, so meshcast is never worse than them in
 * the cost model. The winner's estimate is kept in plan->stats. */
mc_status_t mc_strategy_meshcast(mc_plan_t *plan)
{
    double best = HUGE_VAL;
    mc_status_t s = MC_OK;
    if (plan->pieces->naddends > 1) { /* a reduction: naive, reduce-scatter flat or by host */
        for (int policy = POLICY_REDUCE_NAIVE; policy <= POLICY_REDUCE_HIERARCHICAL && !s; policy++)
            s = try_policy(plan, policy, &best);
        plan->stats.estimate_s = best;
        return s;
    }
    s = build(plan, POLICY_PER_HOLDER);
    if (!s && !(s = mc_plan_set_chunks(plan)))
        s = mc_plan_simulate(plan, &best);
    if (!s && per_needer_differs(plan))
        s = try_policy(plan, POLICY_PER_NEEDER, &best);
    for (int policy = POLICY_DIRECT; policy <= POLICY_BROADCAST_LB_ORDER && !s; policy++)
        if (best > 1.001 * plan->stats.lower_bound_s)
            s = try_policy(plan, policy, &best);
    plan->stats.estimate_s = best;
    return s;
}
