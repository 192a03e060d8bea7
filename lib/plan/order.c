/* Orders a plan's flows like the rounds of an all-to-all: number the hosts that send over
 * NICs 0..S-1 and those that receive 0..R-1; flow k of the host pair (a, b) goes in round k
 * at rotation (rank(b) - rank(a)) mod max(S, R), so within a round every host sends to one
 * host and receives from one host. Transports and the simulator start equal-priority chunks in plan
 * order, so this keeps every receiver busy instead of letting several senders queue on one
 * host while another idles. A flow is keyed by its first NIC crossing; flows with none
 * stay first. O(F log F). */
#include <stdlib.h>
#include <string.h>
#include "plan_internal.h"
#include "util/util.h"

typedef struct {
    int64_t k, rotation, out, index; /* sort key, most significant first */
    int64_t in;
} flow_key_t;

static int cmp_pair(const void *a, const void *b)
{
    const flow_key_t *x = a, *y = b;
    if (x->out != y->out)
        return x->out < y->out ? -1 : 1;
    if (x->in != y->in)
        return x->in < y->in ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int cmp_round(const void *a, const void *b)
{
    const flow_key_t *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    if (x->rotation != y->rotation)
        return x->rotation < y->rotation ? -1 : 1;
    if (x->out != y->out)
        return x->out < y->out ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

mc_status_t mc_plan_order_rounds(mc_plan_t *plan)
{
    const mc_topology_t *topo = plan->topo;
    int64_t nhost = mc_topology_hosts(topo), n = plan->nflows, nedges = 0;
    flow_key_t *keys = mc_calloc((size_t)n + 1, sizeof *keys);
    int64_t *out_rank = mc_calloc((size_t)nhost, sizeof *out_rank);
    int64_t *in_rank = mc_calloc((size_t)nhost, sizeof *in_rank);
    mc_flow_t *flows = mc_calloc((size_t)n + 1, sizeof *flows);
    mc_edge_t *edges = mc_calloc((size_t)plan->nedges + 1, sizeof *edges);
    mc_status_t s = MC_OK;
    if (!keys || !flows || !edges || !out_rank || !in_rank) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    for (int64_t i = 0; i < n; i++) {
        const mc_flow_t *f = &plan->flows[i];
        keys[i] = (flow_key_t){0, 0, -1, i, -1};
        for (int64_t j = 0; j < f->nedges; j++) {
            const mc_edge_t *e = &plan->edges[f->edge0 + j];
            int64_t a = mc_topology_host_of(topo, e->from), b = mc_topology_host_of(topo, e->to);
            if (a != b) {
                keys[i].out = a;
                keys[i].in = b;
                out_rank[a] = in_rank[b] = 1;
                break;
            }
        }
    }
    int64_t senders = 0, receivers = 0;
    for (int64_t h = 0; h < nhost; h++) {
        out_rank[h] = out_rank[h] ? senders++ : -1;
        in_rank[h] = in_rank[h] ? receivers++ : -1;
    }
    int64_t m = senders > receivers ? senders : receivers;
    for (int64_t i = 0; i < n; i++)
        if (keys[i].out >= 0)
            keys[i].rotation = ((in_rank[keys[i].in] - out_rank[keys[i].out]) % m + m) % m;
    /* k = rank of the flow among flows of the same host pair, in plan order */
    qsort(keys, (size_t)n, sizeof *keys, cmp_pair);
    for (int64_t i = 1; i < n; i++)
        if (keys[i].out == keys[i - 1].out && keys[i].in == keys[i - 1].in)
            keys[i].k = keys[i - 1].k + 1;
    qsort(keys, (size_t)n, sizeof *keys, cmp_round);
    for (int64_t i = 0; i < n; i++) {
        const mc_flow_t *f = &plan->flows[keys[i].index];
        flows[i] = *f;
        flows[i].edge0 = nedges;
        memcpy(edges + nedges, plan->edges + f->edge0, (size_t)f->nedges * sizeof *edges);
        nedges += f->nedges;
    }
    if (n > 0) {
        memcpy(plan->flows, flows, (size_t)n * sizeof *flows);
        memcpy(plan->edges, edges, (size_t)nedges * sizeof *edges);
    }
out:
    free(out_rank);
    free(in_rank);
    free(keys);
    free(flows);
    free(edges);
    return s;
}
