/* local_allgather (Megatron scatter-gather, Alpa use_local_allgather): a host with k needers
 * and no holder gets the piece over its NIC once, in k stripes, one to each needer; each
 * needer then sends its stripe to the host's other needers. Needers in a host that holds
 * the piece copy it from a local holder.
 *
 * Spread (meshcast's candidate, not the baseline): each stripe's sender is the holder whose
 * NIC the α–β model sees free first, a crossing between rails counted one NIC latency more
 * (mc_least_nic_sender), and a piece's needing hosts are visited from the one after its
 * first holder's host on, so the holder hosts of an all-gather each feed a different host
 * first rather than all queueing at the lowest one's NICs. */
#include <stdlib.h>
#include "strategy_common.h"
#include "util/util.h"

static mc_status_t plan_piece(mc_plan_t *plan, int64_t i, int spread, mc_loads_t *loads,
                              mc_host_run_t *hruns, mc_host_run_t *nruns, mc_box_t *stripes)
{
    const mc_piece_t *p = &plan->pieces->pieces[i];
    const mc_topology_t *topo = plan->topo;
    mc_status_t s = MC_OK;
    int nh = mc_group_by_host(topo, p->holders, p->nholders, hruns);
    int nn = mc_group_by_host(topo, p->needers, p->nneeders, nruns);
    int local_flow = 0;
    for (int g = 0; g < nn && !s; g++) {
        const mc_host_run_t *h = mc_find_run(hruns, nh, nruns[g].host);
        if (!h)
            continue;
        if (!local_flow++)
            s = mc_plan_add_flow(plan, i, &p->box);
        for (int j = 0; j < nruns[g].count && !s; j++) {
            int64_t n = p->needers[nruns[g].first + j];
            int64_t from = mc_least_loaded(p->holders + h->first, h->count, loads->dev_send);
            mc_loads_add(loads, topo, from, n, (double)p->bytes);
            s = mc_plan_add_edge(plan, from, n);
        }
    }
    int first = 0; /* spread: the first needing host after the first holder's */
    while (spread && first < nn && nruns[first].host <= hruns[0].host)
        first++;
    for (int turn = 0; turn < nn && !s; turn++) {
        int g = (turn + first) % nn;
        if (mc_find_run(hruns, nh, nruns[g].host))
            continue;
        const int64_t *needers = p->needers + nruns[g].first;
        int k = mc_box_split(&p->box, plan->pieces->ndim, nruns[g].count, stripes);
        for (int st = 0; st < k && !s; st++) {
            double bytes =
                (double)(mc_box_volume(&stripes[st], plan->pieces->ndim) * plan->pieces->elem_size);
            int64_t from = mc_least_loaded(p->holders, p->nholders, loads->dev_send);
            if (spread)
                from = mc_least_nic_sender(topo, loads, p->holders, p->nholders, from, needers[st]);
            s = mc_plan_add_flow(plan, i, &stripes[st]);
            if (!s)
                s = mc_plan_add_edge(plan, from, needers[st]);
            mc_loads_add(loads, topo, from, needers[st], bytes);
            for (int j = 0; j < nruns[g].count && !s; j++) {
                if (j == st)
                    continue;
                mc_loads_add(loads, topo, needers[st], needers[j], bytes);
                s = mc_plan_add_edge(plan, needers[st], needers[j]);
            }
        }
    }
    return s;
}

/* The most flows and edges plan_piece makes: per piece a flow for the hosts that hold it,
 * an edge to each of their needers; per host of k needers that holds nothing, at most k
 * stripes (a flow each) sent to each of the k needers. */
static mc_status_t most_size(const mc_pieces_t *ps, const mc_topology_t *topo, int64_t *flows,
                             int64_t *edges)
{
    int64_t most = mc_pieces_most_devices(ps);
    mc_host_run_t *hruns = mc_calloc((size_t)most + 1, sizeof *hruns);
    mc_host_run_t *nruns = mc_calloc((size_t)most + 1, sizeof *nruns);
    *flows = *edges = 0;
    for (int64_t i = 0; i < ps->npieces && hruns && nruns; i++) {
        const mc_piece_t *p = &ps->pieces[i];
        int nh = mc_group_by_host(topo, p->holders, p->nholders, hruns);
        int nn = mc_group_by_host(topo, p->needers, p->nneeders, nruns);
        int local = 0;
        for (int g = 0; g < nn; g++) {
            int64_t k = nruns[g].count;
            if (mc_find_run(hruns, nh, nruns[g].host)) {
                *flows += !local++;
                *edges += k;
            } else {
                *flows += k;
                *edges += k * k;
            }
        }
    }
    mc_status_t s = hruns && nruns ? MC_OK : mc_error(MC_ERR_NOMEM, "out of memory planning");
    free(hruns);
    free(nruns);
    return s;
}

/* Reserves the flows and edges the plan makes at most, so that they are not grown and copied
 * piece by piece (a plan of 250,000 edges copied 10 MB). */
static mc_status_t reserve(mc_plan_t *plan)
{
    int64_t flows, edges;
    mc_status_t s = most_size(plan->pieces, plan->topo, &flows, &edges);
    return s ? s : mc_plan_reserve(plan, plan->nflows + flows + 1, plan->nedges + edges + 1);
}

mc_status_t mc_local_allgather_most(const mc_pieces_t *ps, const mc_topology_t *topo, double *size)
{
    int64_t flows, edges;
    mc_status_t s = most_size(ps, topo, &flows, &edges);
    *size = (double)flows + (double)edges;
    return s;
}

mc_status_t mc_strategy_local_allgather(mc_plan_t *plan)
{
    return mc_local_allgather_build(plan, 0);
}

mc_status_t mc_local_allgather_build(mc_plan_t *plan, int spread)
{
    const mc_pieces_t *ps = plan->pieces;
    mc_loads_t loads;
    int64_t most = mc_pieces_most_devices(ps);
    mc_status_t s = reserve(plan);
    if (s || (s = mc_loads_create(plan->topo, &loads)))
        return s;
    mc_host_run_t *hruns = mc_calloc((size_t)most, sizeof *hruns);
    mc_host_run_t *nruns = mc_calloc((size_t)most, sizeof *nruns);
    mc_box_t *stripes = mc_calloc((size_t)most, sizeof *stripes);
    if (!hruns || !nruns || !stripes)
        s = MC_ERR_NOMEM;
    for (int64_t i = 0; i < ps->npieces && !s; i++)
        if (ps->pieces[i].nneeders > 0)
            s = plan_piece(plan, i, spread, &loads, hruns, nruns, stripes);
    free(hruns);
    free(nruns);
    free(stripes);
    mc_loads_destroy(&loads);
    return s;
}
