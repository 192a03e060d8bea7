/* Orders a plan's flows in rounds by bytes (docs/planning.md, the meshcast row): a flow is
 * keyed by the share of its host pair's bytes that come before it (its first NIC crossing's
 * sending and receiving hosts, the pair's flows in plan order), then by the all-to-all
 * rotation (rank(b) - rank(a)) mod max(S, R) and the sender, as in order.c. So every host
 * pair is the same share through its bytes at the same point of the order, where order.c's
 * k-th flow of every pair shares a round however large it is: with pairs of 8 and 16 flows
 * of unequal sizes (g0156 of the scale benchmark, seed 5: 5,490 flows between 23 hosts) a
 * round's short flows end early and their NICs wait, 1.264 of the bound, and by bytes
 * 1.054. Flows that cross no NIC are spread the same way over their own count. */
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"
#include "topology/topology_internal.h"

typedef struct {
    double share; /* bytes of its pair before it / the pair's bytes */
    int64_t rotation, sender, index;
} byte_key_t;

static int cmp_key(const void *a, const void *b)
{
    const byte_key_t *x = a, *y = b;
    if (x->share != y->share)
        return x->share < y->share ? -1 : 1;
    if (x->rotation != y->rotation)
        return x->rotation < y->rotation ? -1 : 1;
    if (x->sender != y->sender)
        return x->sender < y->sender ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

mc_status_t mc_plan_order_bytes(mc_plan_t *plan)
{
    const mc_topology_t *topo = plan->topo;
    int64_t nhost = mc_topology_hosts(topo), n = plan->nflows;
    byte_key_t *keys = mc_calloc((size_t)n + 1, sizeof *keys);
    int64_t *pair = mc_calloc((size_t)n + 1, sizeof *pair); /* per flow: its pair, -1: none */
    int64_t *out_rank = mc_calloc((size_t)nhost, sizeof *out_rank);
    int64_t *in_rank = mc_calloc((size_t)nhost, sizeof *in_rank);
    double *total = NULL, *before = NULL;
    mc_status_t s = MC_ERR_NOMEM;
    if (!keys || !pair || !out_rank || !in_rank)
        goto out;
    for (int64_t i = 0, a, b; i < n; i++) {
        pair[i] = -1;
        if (mc_flow_first_crossing(plan, i, &a, &b)) {
            pair[i] = a * nhost + b;
            out_rank[a] = in_rank[b] = 1;
        }
    }
    int64_t senders = mc_rank_marked(out_rank, nhost), receivers = mc_rank_marked(in_rank, nhost);
    /* per pair of ranks, and one more slot for the flows that cross no NIC; past 2^24 pairs
     * the order is left as it is */
    s = MC_OK;
    if (senders * receivers > ((int64_t)1 << 24))
        goto out;
    s = MC_ERR_NOMEM;
    int64_t npairs = senders * receivers + 1, m = senders > receivers ? senders : receivers;
    total = mc_calloc((size_t)npairs, sizeof *total);
    before = mc_calloc((size_t)npairs, sizeof *before);
    if (!total || !before)
        goto out;
    for (int64_t i = 0; i < n; i++) {
        int64_t a = pair[i] < 0 ? -1 : out_rank[pair[i] / nhost];
        int64_t b = pair[i] < 0 ? -1 : in_rank[pair[i] % nhost];
        int64_t slot = pair[i] < 0 ? npairs - 1 : a * receivers + b;
        keys[i] = (byte_key_t){0, a < 0 ? 0 : ((b - a) % m + m) % m, a, i};
        pair[i] = slot;
        total[slot] += slot == npairs - 1 ? 1 : (double)plan->flows[i].bytes;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t slot = pair[i];
        keys[i].share = before[slot] / total[slot];
        before[slot] += slot == npairs - 1 ? 1 : (double)plan->flows[i].bytes;
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_key);
    for (int64_t i = 0; i < n; i++)
        pair[i] = keys[i].index; /* pair is done with: it holds the new order */
    s = mc_plan_permute_flows(plan, pair);
out:
    free(keys);
    free(pair);
    free(out_rank);
    free(in_rank);
    free(total);
    free(before);
    return s;
}
