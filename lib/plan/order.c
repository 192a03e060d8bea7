/* Orders a plan's flows like the rounds of an all-to-all: number the hosts that send over
 * NICs 0..S-1 and those that receive 0..R-1; flow k of the host pair (a, b) goes in round k
 * at rotation (rank(b) - rank(a)) mod max(S, R), so within a round every host sends to one
 * host and receives from one host. Transports and the simulator start equal-priority chunks in plan
 * order, so this keeps every receiver busy instead of letting several senders queue on one
 * host while another idles. A flow is keyed by its first NIC crossing; flows with none
 * stay first. One sort of F packed keys (round k, rotation, sender rank: most significant
 * first). */
#include <stdlib.h>
#include <string.h>
#include "plan_internal.h"
#include "util/util.h"
#include "topology/topology_internal.h"

int mc_flow_first_crossing(const mc_plan_t *plan, int64_t i, int64_t *from, int64_t *to)
{
    const mc_flow_t *f = &plan->flows[i];
    for (int64_t j = 0; j < f->nedges; j++) {
        const mc_edge_t *e = &plan->edges[f->edge0 + j];
        int64_t a = mc_host_of(plan->topo, e->from), b = mc_host_of(plan->topo, e->to);
        if (a != b) {
            *from = a;
            *to = b;
            return 1;
        }
    }
    *from = *to = -1;
    return 0;
}

int64_t mc_rank_marked(int64_t *mark, int64_t n)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++)
        mark[i] = mark[i] ? count++ : -1;
    return count;
}

mc_status_t mc_plan_order_rounds(mc_plan_t *plan)
{
    const mc_topology_t *topo = plan->topo;
    int64_t nhost = mc_topology_hosts(topo), n = plan->nflows;
    /* malloc: keys, out_host and in_host are written before they are read */
    mc_sort_key_t *keys = malloc(((size_t)n + 1) * sizeof *keys);
    int64_t *out_host = malloc(((size_t)n + 1) * sizeof *out_host);
    int64_t *in_host = malloc(((size_t)n + 1) * sizeof *in_host);
    int64_t *out_rank = mc_calloc((size_t)nhost, sizeof *out_rank);
    int64_t *in_rank = mc_calloc((size_t)nhost, sizeof *in_rank);
    int64_t *pair_count = NULL;
    mc_status_t s = MC_OK;
    if (!keys || !out_host || !in_host || !out_rank || !in_rank) {
        s = mc_error(MC_ERR_NOMEM, "out of memory ordering the plan's flows");
        goto out;
    }
    for (int64_t i = 0; i < n; i++)
        if (mc_flow_first_crossing(plan, i, &out_host[i], &in_host[i]))
            out_rank[out_host[i]] = in_rank[in_host[i]] = 1;
    int64_t senders = mc_rank_marked(out_rank, nhost), receivers = mc_rank_marked(in_rank, nhost);
    /* keys pack k (23 bits), rotation and sender rank (20 bits each); past that (over a
     * million hosts) the order is left as it is */
    if (senders * receivers > ((int64_t)1 << 26) || n >= ((int64_t)1 << 23))
        goto out;
    pair_count = mc_calloc((size_t)(senders * receivers) + 1, sizeof *pair_count);
    if (!pair_count) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    int64_t m = senders > receivers ? senders : receivers, local = 0;
    for (int64_t i = 0; i < n; i++) {
        /* flows inside hosts spread over the rounds too, one per round */
        uint64_t k = (uint64_t)local, rotation = 0, sender = 0;
        if (out_host[i] < 0) {
            local++;
        } else {
            int64_t a = out_rank[out_host[i]], b = in_rank[in_host[i]];
            k = (uint64_t)pair_count[a * receivers + b]++; /* k-th flow of this host pair */
            rotation = (uint64_t)(((b - a) % m + m) % m);
            sender = (uint64_t)a;
        }
        keys[i] = (mc_sort_key_t){(k << 40) | (rotation << 20) | sender, i};
    }
    mc_sort_key_t *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
    if (!tmp) {
        s = mc_error(MC_ERR_NOMEM, "out of memory ordering the plan's flows");
        goto out;
    }
    mc_sort_keys(keys, tmp, n);
    free(tmp);
    for (int64_t i = 0; i < n; i++)
        out_host[i] = keys[i].index; /* out_host is done with: it holds the new order */
    s = mc_plan_permute_flows(plan, out_host);
out:
    free(keys);
    free(out_host);
    free(in_host);
    free(out_rank);
    free(in_rank);
    free(pair_count);
    return s;
}

mc_status_t mc_plan_permute_flows(mc_plan_t *plan, const int64_t *index)
{
    /* in place, so no fresh arrays (a plan's flows are 176 bytes each, and arrays of 20,000
     * of them taken afresh per candidate faulted a page per 4 KiB: a fifth of some plans'
     * time): the edges from a copy, the flows along the permutation's cycles */
    int64_t n = plan->nflows, nedges = 0;
    mc_edge_t *old = mc_malloc((size_t)plan->nedges + 1, sizeof *old);
    char *done = mc_calloc((size_t)n + 1, 1);
    if (!old || !done) {
        free(old);
        free(done);
        return mc_error(MC_ERR_NOMEM, "out of memory ordering the plan's flows");
    }
    memcpy(old, plan->edges, (size_t)plan->nedges * sizeof *old);
    for (int64_t i = 0; i < n; i++) {
        const mc_flow_t *f = &plan->flows[index[i]];
        memcpy(plan->edges + nedges, old + f->edge0, (size_t)f->nedges * sizeof *old);
        nedges += f->nedges;
    }
    for (int64_t i = 0; i < n; i++) { /* flows[i] = old flows[index[i]], cycle by cycle */
        if (done[i])
            continue;
        mc_flow_t first = plan->flows[i];
        int64_t j = i;
        for (; index[j] != i; j = index[j]) {
            plan->flows[j] = plan->flows[index[j]];
            done[j] = 1;
        }
        plan->flows[j] = first;
        done[j] = 1;
    }
    for (int64_t i = 0, e = 0; i < n; i++) {
        plan->flows[i].edge0 = e;
        e += plan->flows[i].nedges;
    }
    free(old);
    free(done);
    return MC_OK;
}
