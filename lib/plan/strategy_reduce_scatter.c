/* reduce_scatter: bandwidth-optimal reductions (reduce-scatter, then all-gather).
 *
 * Each piece is cut into one stripe per reducer candidate — the needers that hold an
 * addend, else the holders (reduce where the addends are, so that cross-mesh reductions
 * cross the NIC with results, not addends). Stripe s is reduced at its own candidate, which
 * gathers one holder of every other addend index straight (one in its own host when there
 * is one) and combines once in addend order; then the result fans out. With n devices each
 * holding an addend of S bytes and needing the sum, every port sends and receives
 * (n−1)/n·S in each phase: the 2(n−1)/n·S/B of a ring all-reduce, without forwarding
 * partial sums (which would change the combination order and round f16/bf16 at every hop).
 *
 * Flat: the reducer sends its stripe to every other needer. Hierarchical: the stripe enters
 * every other needing host once over its NIC, from the reducer's host or a host it already
 * reached (the least NIC egress so far), then fans out inside the host.
 *
 * Pre-combined: the addends a stripe gathers from a host h other than its reducer's, when
 * there are m >= 2 of them, go to a combiner on h first (the one of their holders that
 * received least so far), which combines them with its own and sends one partial over h's
 * NIC: (m - 1)/m less of the gather crosses NICs. Addends on the reducer's host go straight
 * to it. Never for avg, which divides once, at the one combine.
 *
 * Per host: one stripe per host that has candidates (its first), so stripes are larger and
 * pipeline in several chunks where per-device stripes are one chunk each. */
#include <stdlib.h>
#include "strategy_common.h"
#include "util/util.h"

typedef struct {
    mc_plan_t *plan;
    mc_loads_t loads;
    int hierarchical, precombine, per_host;
    int64_t *senders; /* the current stripe's addend senders, grouped by host */
    int64_t *cand;    /* reducer candidates of the current piece */
    mc_box_t *stripes;
    mc_host_run_t *nruns; /* the piece's needers by host */
    int64_t *entry;       /* per host: the device that got the current stripe */
    int64_t *served;      /* hosts the current stripe reached, in order */
} ctx_t;

static int candidates(const mc_piece_t *p, int64_t *out)
{
    int n = 0;
    for (int j = 0; j < p->nneeders; j++)
        if (mc_piece_holds(p, p->needers[j]))
            out[n++] = p->needers[j];
    for (int i = 0; i < p->nholders && n == 0; i++)
        out[i] = p->holders[i];
    return n ? n : p->nholders;
}

/* Result of a stripe at reducer r to the needers of a host run, entering at to. */
static mc_status_t enter_host(ctx_t *c, const mc_piece_t *p, const mc_host_run_t *g, int64_t from,
                              int64_t to, double bytes)
{
    mc_status_t s = MC_OK;
    if (from != to) {
        mc_loads_add(&c->loads, c->plan->topo, from, to, bytes);
        s = mc_plan_add_edge(c->plan, from, to);
    }
    if (!s)
        s = mc_fan_out_in_host(c->plan, &c->loads, p->needers + g->first, g->count, to, bytes);
    return s;
}

static mc_status_t fan_out(ctx_t *c, const mc_piece_t *p, int64_t r, int64_t rotation, double bytes)
{
    const mc_topology_t *topo = c->plan->topo;
    mc_status_t s = MC_OK;
    if (!c->hierarchical) {
        for (int j = 0; j < p->nneeders && !s; j++)
            if (p->needers[j] != r) {
                mc_loads_add(&c->loads, topo, r, p->needers[j], bytes);
                s = mc_plan_add_edge(c->plan, r, p->needers[j]);
            }
        return s;
    }
    int nn = mc_group_by_host(topo, p->needers, p->nneeders, c->nruns);
    int64_t hr = mc_topology_host_of(topo, r);
    int nserved = 0;
    const mc_host_run_t *own = mc_find_run(c->nruns, nn, hr);
    if (own) {
        const int64_t *devs = p->needers + own->first;
        int64_t to =
            mc_piece_needs(p, r) ? r : mc_least_loaded(devs, own->count, c->loads.dev_recv);
        s = enter_host(c, p, own, r, to, bytes);
    }
    for (int j = 0; j < nn && !s; j++) {
        const mc_host_run_t *g = &c->nruns[(j + rotation) % nn];
        if (g->host == hr)
            continue;
        int64_t from = r;
        double least = c->loads.host_send[hr];
        for (int i = 0; i < nserved; i++)
            if (c->loads.host_send[c->served[i]] < least) {
                least = c->loads.host_send[c->served[i]];
                from = c->entry[c->served[i]];
            }
        int64_t to = mc_least_loaded(p->needers + g->first, g->count, c->loads.dev_nic_recv);
        c->entry[g->host] = to;
        c->served[nserved++] = g->host;
        s = enter_host(c, p, g, from, to, bytes);
    }
    return s;
}

/* Stable insertion sort of devs by host (qsort is not stable; few senders). */
static void sort_by_host(const mc_topology_t *topo, int64_t *devs, int64_t n)
{
    for (int64_t i = 1; i < n; i++)
        for (int64_t j = i;
             j > 0 && mc_topology_host_of(topo, devs[j]) < mc_topology_host_of(topo, devs[j - 1]);
             j--) {
            int64_t v = devs[j];
            devs[j] = devs[j - 1];
            devs[j - 1] = v;
        }
}

/* The gather edges of the current stripe into reducer r (which holds addend own, or -1):
 * one holder of every other addend sends it straight, or, pre-combining, through a combiner
 * of its host (edges into a combiner before its edge out). */
static mc_status_t gather(ctx_t *c, const mc_piece_t *p, int64_t r, int64_t own, double bytes)
{
    mc_plan_t *plan = c->plan;
    const mc_topology_t *topo = plan->topo;
    int64_t n = 0, hr = mc_topology_host_of(topo, r);
    for (int64_t a = 0; a < plan->pieces->naddends; a++)
        if (a != own)
            c->senders[n++] = mc_addend_sender(topo, p, a, r, &c->loads);
    int pre = c->precombine && plan->pieces->op != MC_REDUCE_AVG;
    if (pre)
        sort_by_host(topo, c->senders, n);
    mc_status_t s = MC_OK;
    for (int64_t i = 0; i < n && !s;) {
        int64_t h = mc_topology_host_of(topo, c->senders[i]), end = i + 1;
        while (pre && end < n && mc_topology_host_of(topo, c->senders[end]) == h)
            end++;
        if (h == hr || end - i < 2) { /* straight to the reducer */
            for (; i < end && !s; i++) {
                mc_loads_add(&c->loads, topo, c->senders[i], r, bytes);
                s = mc_plan_add_gather(plan, c->senders[i], r);
            }
            continue;
        }
        int64_t comb = c->senders[i];
        for (int64_t k = i + 1; k < end; k++)
            if (c->loads.dev_recv[c->senders[k]] < c->loads.dev_recv[comb])
                comb = c->senders[k];
        for (; i < end && !s; i++)
            if (c->senders[i] != comb) {
                mc_loads_add(&c->loads, topo, c->senders[i], comb, bytes);
                s = mc_plan_add_gather(plan, c->senders[i], comb);
            }
        if (!s) {
            mc_loads_add(&c->loads, topo, comb, r, bytes);
            s = mc_plan_add_gather(plan, comb, r);
        }
    }
    return s;
}

static mc_status_t plan_piece(ctx_t *c, int64_t i)
{
    mc_plan_t *plan = c->plan;
    const mc_piece_t *p = &plan->pieces->pieces[i];
    int ndim = plan->pieces->ndim;
    int nc = candidates(p, c->cand);
    if (c->per_host) { /* the first candidate of each host (candidates ascend) */
        int m = 0;
        for (int j = 0; j < nc; j++)
            if (m == 0 || mc_topology_host_of(plan->topo, c->cand[j]) !=
                              mc_topology_host_of(plan->topo, c->cand[m - 1]))
                c->cand[m++] = c->cand[j];
        nc = m;
    }
    int k = mc_box_split(&p->box, ndim, nc, c->stripes);
    mc_status_t s = MC_OK;
    for (int st = 0; st < k && !s; st++) {
        int64_t r = c->cand[(st + i) % nc], own = mc_piece_addend(p, r);
        double bytes = (double)(mc_box_volume(&c->stripes[st], ndim) * plan->pieces->elem_size);
        s = mc_plan_add_flow(plan, i, &c->stripes[st]);
        if (!s)
            s = gather(c, p, r, own, bytes);
        if (!s)
            s = fan_out(c, p, r, st + i, bytes);
    }
    return s;
}

mc_status_t mc_strategy_reduce_scatter(mc_plan_t *plan, unsigned flags)
{
    const mc_pieces_t *ps = plan->pieces;
    ctx_t c = {.plan = plan,
               .hierarchical = (flags & MC_RS_HIERARCHICAL) != 0,
               .precombine = (flags & MC_RS_PRECOMBINE) != 0,
               .per_host = (flags & MC_RS_PER_HOST) != 0};
    int64_t most = mc_pieces_most_devices(ps), nhost = mc_topology_hosts(plan->topo);
    mc_status_t s = mc_loads_create(plan->topo, &c.loads);
    if (s)
        return s;
    c.cand = mc_calloc((size_t)most, sizeof *c.cand);
    c.stripes = mc_calloc((size_t)most, sizeof *c.stripes);
    c.nruns = mc_calloc((size_t)most, sizeof *c.nruns);
    c.entry = mc_calloc((size_t)nhost, sizeof *c.entry);
    c.served = mc_calloc((size_t)nhost, sizeof *c.served);
    c.senders = mc_calloc((size_t)ps->naddends + 1, sizeof *c.senders);
    if (!c.cand || !c.stripes || !c.nruns || !c.entry || !c.served || !c.senders)
        s = MC_ERR_NOMEM;
    for (int64_t i = 0; i < ps->npieces && !s; i++)
        if (ps->pieces[i].nneeders > 0)
            s = plan_piece(&c, i);
    free(c.cand);
    free(c.stripes);
    free(c.nruns);
    free(c.entry);
    free(c.served);
    free(c.senders);
    mc_loads_destroy(&c.loads);
    return s;
}
