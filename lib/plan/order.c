/* Orders a plan's flows in rounds whose NIC crossings use each host's egress and ingress at
 * most once (greedy edge colouring, like the rounds of an all-to-all). Transports and the
 * simulator start equal-priority chunks in plan order, so this keeps every receiver busy
 * instead of letting several senders queue on one host while another idles. */
#include <stdlib.h>
#include <string.h>
#include "plan_internal.h"
#include "util/util.h"

static int fits(const mc_plan_t *plan, const mc_flow_t *f, const int64_t *out_round,
                const int64_t *in_round, int64_t round)
{
    for (int64_t j = 0; j < f->nedges; j++) {
        const mc_edge_t *e = &plan->edges[f->edge0 + j];
        if (mc_edge_class(plan->topo, e->from, e->to) != MC_LINK_NIC)
            continue;
        if (out_round[mc_topology_host_of(plan->topo, e->from)] == round ||
            in_round[mc_topology_host_of(plan->topo, e->to)] == round)
            return 0;
    }
    return 1;
}

static void claim(const mc_plan_t *plan, const mc_flow_t *f, int64_t *out_round, int64_t *in_round,
                  int64_t round)
{
    for (int64_t j = 0; j < f->nedges; j++) {
        const mc_edge_t *e = &plan->edges[f->edge0 + j];
        if (mc_edge_class(plan->topo, e->from, e->to) != MC_LINK_NIC)
            continue;
        out_round[mc_topology_host_of(plan->topo, e->from)] = round;
        in_round[mc_topology_host_of(plan->topo, e->to)] = round;
    }
}

mc_status_t mc_plan_order_rounds(mc_plan_t *plan)
{
    int64_t nhost = mc_topology_hosts(plan->topo), n = plan->nflows, placed = 0;
    int64_t *out_round = mc_calloc((size_t)nhost, sizeof *out_round);
    int64_t *in_round = mc_calloc((size_t)nhost, sizeof *in_round);
    char *done = mc_calloc((size_t)n + 1, 1);
    mc_flow_t *flows = mc_calloc((size_t)n + 1, sizeof *flows);
    mc_edge_t *edges = mc_calloc((size_t)plan->nedges + 1, sizeof *edges);
    mc_status_t s = MC_OK;
    if (!out_round || !in_round || !done || !flows || !edges) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    for (int64_t h = 0; h < nhost; h++)
        out_round[h] = in_round[h] = -1;
    int64_t nedges = 0, first = 0;
    for (int64_t round = 0; placed < n; round++) {
        while (done[first])
            first++;
        for (int64_t i = first; i < n; i++) {
            const mc_flow_t *f = &plan->flows[i];
            /* the first remaining flow always goes, so every round places one */
            if (done[i] || (i != first && !fits(plan, f, out_round, in_round, round)))
                continue;
            claim(plan, f, out_round, in_round, round);
            done[i] = 1;
            flows[placed] = *f;
            flows[placed].edge0 = nedges;
            memcpy(edges + nedges, plan->edges + f->edge0, (size_t)f->nedges * sizeof *edges);
            nedges += f->nedges;
            placed++;
        }
    }
    memcpy(plan->flows, flows, (size_t)n * sizeof *flows);
    memcpy(plan->edges, edges, (size_t)nedges * sizeof *edges);
out:
    free(out_round);
    free(in_round);
    free(done);
    free(flows);
    free(edges);
    return s;
}
