/* Multi-trees over hosts (docs/planning.md, the meshcast row): a piece that few holder hosts
 * hold and many hosts need is cut into k stripes, and stripe j goes down a tree of its own over
 * the needing hosts, whose forwarders are mostly hosts that forward no other stripe: every host
 * gets each stripe once and forwards at most k stripes' copies (the piece) over its NIC, what it
 * takes in, while a stripe crosses about log_k(hosts) + 1 NICs rather than most hosts one after
 * the other: the classic "k stripes, k trees" broadcast (SplitStream's), of which host scatter
 * is the extreme k = hosts.
 *
 * g0100 of seed 44 of the scale benchmark: 4 MiB from the 4 devices of one p3.8xlarge host to
 * every device of 27 others. The greedy choice of senders (the host whose copy leaves first)
 * sees a 1 MiB stripe's egress outweigh one more hop, so each stripe becomes a near-chain of
 * 20-27 hosts, each paying α_nic and a chunk: 1.787 of the bound; 16 trees 1.147. */
#include <stdlib.h>
#include <string.h>
#include "strategy_common.h"
#include "util/util.h"

mc_status_t mc_multitree_shape(int64_t n, int64_t roots, int k, int64_t start, int64_t *order,
                               int64_t *parent)
{
    int64_t tops = roots < n ? roots : n, at = n > 0 ? start % n : 0;
    int64_t *left = mc_calloc((size_t)n + 1, sizeof *left);
    int64_t *cap = mc_calloc((size_t)n + 1, sizeof *cap);
    if (!left || !cap) {
        free(left);
        free(cap);
        return MC_ERR_NOMEM;
    }
    for (int64_t h = 0; h < n; h++)
        left[h] = k;
    for (int j = 0; j < k; j++) {
        int64_t *ord = order + (int64_t)j * n, *par = parent + (int64_t)j * n;
        int64_t need = n - tops, first = at, m = 0;
        memset(cap, 0, (size_t)n * sizeof *cap);
        /* this stripe's forwarders: hosts in cycle order from where the last stripe's ended,
         * each forwarding what is left of its k copies; a host with copies left after the
         * stripe is served starts the next one. The stripes need k (n - tops) copies of the
         * hosts' k n, so the walk goes round the cycle once in all. */
        for (int64_t steps = 0; need > 0 && steps < n; steps++) {
            int64_t c = left[at] < need ? left[at] : need;
            cap[at] = c;
            left[at] -= c;
            need -= c;
            if (left[at] == 0)
                at = (at + 1) % n;
        }
        /* positions: forwarders by copies, most first, so the tree is as shallow as a heap
         * (ties in cycle order from the stripe's first), then the others */
        for (int64_t s = 0; s < n; s++)
            if (cap[(first + s) % n] > 0)
                ord[m++] = (first + s) % n;
        for (int64_t q = 1; q < m; q++)
            for (int64_t r = q; r > 0 && cap[ord[r]] > cap[ord[r - 1]]; r--) {
                int64_t t = ord[r];
                ord[r] = ord[r - 1];
                ord[r - 1] = t;
            }
        for (int64_t s = 0, q = m; s < n; s++)
            if (cap[(first + s) % n] == 0)
                ord[q++] = (first + s) % n;
        /* parents: the first tops positions hang off the roots (stripe by stripe in turn when
         * there are fewer tops than roots), the rest off the forwarders in order */
        int64_t next = tops;
        for (int64_t q = 0; q < tops; q++)
            par[q] = -1 - (q + (int64_t)j * tops) % roots;
        for (int64_t q = 0; q < m; q++)
            for (int64_t c = 0; c < cap[ord[q]]; c++)
                par[next++] = q;
    }
    free(left);
    free(cap);
    return MC_OK;
}

typedef struct {
    mc_plan_t *plan;
    mc_loads_t loads;
    mc_host_run_t *hruns, *nruns;
    int64_t *needing; /* the piece's needing hosts: indices into nruns */
    int64_t *order, *parent;
    mc_box_t *stripes;
    int64_t *entry; /* per host: the device that received the current stripe */
} tree_ctx_t;

/* The sender of a crossing to device to from a host that has the stripe on the devices
 * devs[0..n) (best, one of them, if the NICs are pooled): with NIC affinity the one whose
 * NIC the α–β model sees free first (mc_least_nic_sender). */
static int64_t nic_sender(const tree_ctx_t *c, const int64_t *devs, int n, int64_t best, int64_t to)
{
    const mc_topology_t *topo = c->plan->topo;
    if (mc_topology_nics_per_host(topo) < 2 || mc_topology_nic_index(topo, best) < 0)
        return best;
    return mc_least_nic_sender(topo, &c->loads, devs, n, best, to);
}

static mc_status_t tree_piece(tree_ctx_t *c, int64_t i, int64_t rank, int k, int64_t min_stripe)
{
    mc_plan_t *plan = c->plan;
    const mc_topology_t *topo = plan->topo;
    const mc_piece_t *p = &plan->pieces->pieces[i];
    int ndim = plan->pieces->ndim;
    int nh = mc_group_by_host(topo, p->holders, p->nholders, c->hruns);
    int nn = mc_group_by_host(topo, p->needers, p->nneeders, c->nruns);
    int64_t n = 0, want = min_stripe > 0 ? p->bytes / min_stripe : k;
    for (int g = 0; g < nn; g++)
        if (!mc_find_run(c->hruns, nh, c->nruns[g].host))
            c->needing[n++] = g;
    int ks =
        mc_box_split_even(&p->box, ndim, (int)(want < k ? (want > 1 ? want : 1) : k), c->stripes);
    mc_status_t s = mc_multitree_shape(n, nh, ks, rank, c->order, c->parent);
    /* every stripe comes into each needing host at once, so one takes the whole piece's NIC
     * time to arrive: its fan-out may be a star (4 MiB from device 0 to 4 dgx-h100 hosts:
     * 3-ary trees, timed as if each stripe had the NIC alone, 1.241 of the bound; stars 1.139) */
    double arrive = (double)p->bytes / mc_topology_nic_in(topo);
    for (int st = 0; st < ks && !s; st++) {
        double bytes = (double)(mc_box_volume(&c->stripes[st], ndim) * plan->pieces->elem_size);
        s = mc_plan_add_flow(plan, i, &c->stripes[st]);
        /* hosts that hold the piece: from a local holder */
        for (int g = 0; g < nn && !s; g++) {
            const mc_host_run_t *run = mc_find_run(c->hruns, nh, c->nruns[g].host);
            if (!run)
                continue;
            const int64_t *needers = p->needers + c->nruns[g].first;
            int64_t from = mc_least_loaded(p->holders + run->first, run->count, c->loads.dev_send);
            int64_t to = mc_least_loaded_tie(needers, c->nruns[g].count, c->loads.dev_recv,
                                             c->loads.dev_send);
            mc_loads_add(&c->loads, topo, from, to, bytes);
            if (!(s = mc_plan_add_edge(plan, from, to)))
                s = mc_fan_out_in_host(plan, &c->loads, needers, c->nruns[g].count, to, bytes);
        }
        /* needing hosts down the stripe's tree, parents first */
        const int64_t *ord = c->order + (int64_t)st * n, *par = c->parent + (int64_t)st * n;
        for (int64_t q = 0; q < n && !s; q++) {
            const mc_host_run_t *g = &c->nruns[c->needing[ord[q]]];
            const int64_t *needers = p->needers + g->first;
            int64_t to = mc_least_loaded(needers, g->count, c->loads.dev_nic_recv), from;
            if (par[q] < 0) {
                const mc_host_run_t *r = &c->hruns[-1 - par[q]];
                from = mc_least_loaded(p->holders + r->first, r->count, c->loads.dev_nic_send);
                from = nic_sender(c, p->holders + r->first, r->count, from, to);
            } else {
                const mc_host_run_t *up = &c->nruns[c->needing[ord[par[q]]]];
                from = nic_sender(c, p->needers + up->first, up->count, c->entry[up->host], to);
            }
            mc_loads_add(&c->loads, topo, from, to, bytes);
            c->entry[g->host] = to;
            if (!(s = mc_plan_add_edge(plan, from, to)))
                s = mc_fan_out_paced(plan, &c->loads, needers, g->count, to, bytes, arrive);
        }
    }
    return s;
}

mc_status_t mc_strategy_multitree(mc_plan_t *plan, int k, int64_t min_stripe)
{
    const mc_pieces_t *ps = plan->pieces;
    int64_t most = mc_pieces_most_devices(ps), *by_size = NULL, flows = 1, edges = 1;
    tree_ctx_t c = {.plan = plan};
    mc_status_t s = mc_loads_create(plan->topo, &c.loads);
    if (s)
        return s;
    c.hruns = mc_calloc((size_t)most, sizeof *c.hruns);
    c.nruns = mc_calloc((size_t)most, sizeof *c.nruns);
    c.needing = mc_calloc((size_t)most, sizeof *c.needing);
    c.order = mc_calloc((size_t)(k * most), sizeof *c.order);
    c.parent = mc_calloc((size_t)(k * most), sizeof *c.parent);
    c.stripes = mc_calloc((size_t)k, sizeof *c.stripes);
    c.entry = mc_calloc((size_t)mc_topology_hosts(plan->topo), sizeof *c.entry);
    if (!c.hruns || !c.nruns || !c.needing || !c.order || !c.parent || !c.stripes || !c.entry)
        s = MC_ERR_NOMEM;
    for (int64_t i = 0; i < ps->npieces && !s; i++) {
        flows += k;
        edges += (int64_t)k * ps->pieces[i].nneeders;
    }
    if (!s && !(s = mc_plan_reserve(plan, flows, edges)))
        s = mc_pieces_by_size(ps, &by_size);
    for (int64_t r = 0; r < ps->npieces && !s; r++)
        if (ps->pieces[by_size[r]].nneeders > 0)
            s = tree_piece(&c, by_size[r], r, k, min_stripe);
    if (!s)
        s = mc_plan_order_rounds(plan);
    free(by_size);
    free(c.hruns);
    free(c.nruns);
    free(c.needing);
    free(c.order);
    free(c.parent);
    free(c.stripes);
    free(c.entry);
    mc_loads_destroy(&c.loads);
    return s;
}
