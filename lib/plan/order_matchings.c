/* Orders a plan's flows in matchings of hosts: round after round, a matching of sending to
 * receiving hosts, the senders with the most bytes still to send first, each taking the
 * free receiver with the most still to come (greedy) or, with maximum, an augmenting path
 * (Kuhn: a maximum matching, which may move earlier senders to other receivers). Neither is
 * best on every plan (the scale benchmark has cases each way), so meshcast simulates both.
 * Where the NIC flows are single
 * chunks (point-to-point pieces) the simulator and transports start equal-priority chunks in
 * plan order, so a round is a set of transfers that do not queue on one another; the
 * all-to-all rotation of order.c pairs hosts as well only when every host pair has as many
 * flows. A flow is keyed by its first NIC crossing; the others spread one per round. */
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

typedef struct {
    int64_t round, index;
} round_key_t;

typedef struct {
    int64_t nhost, stamp;
    int maximum;
    const int64_t *start, *next; /* per host pair: its flows, first unplaced */
    const int64_t *by_in;        /* receivers, most bytes to come first */
    int64_t *seen, *match;       /* per receiver: visit stamp, matched sender or -1 */
} kuhn_t;

/* An augmenting path from sender a (Kuhn's algorithm); depth at most the hosts. */
static int augment(kuhn_t *k, int64_t a)
{
    for (int64_t x = 0; x < k->nhost; x++) {
        int64_t b = k->by_in[x], p = a * k->nhost + b;
        if (k->next[p] == k->start[p + 1] || k->seen[b] == k->stamp)
            continue;
        k->seen[b] = k->stamp;
        if (k->match[b] < 0 || (k->maximum && augment(k, k->match[b]))) {
            k->match[b] = a;
            return 1;
        }
    }
    return 0;
}

/* Sorts hosts by load, most first (insertion sort from the last order: hosts are few and the
 * order changes little between rounds). */
static void sort_hosts(int64_t *order, int64_t n, const int64_t *load)
{
    for (int64_t x = 1; x < n; x++)
        for (int64_t y = x; y > 0 && load[order[y]] > load[order[y - 1]]; y--) {
            int64_t t = order[y];
            order[y] = order[y - 1];
            order[y - 1] = t;
        }
}

static int cmp_round(const void *a, const void *b)
{
    const round_key_t *x = a, *y = b;
    if (x->round != y->round)
        return x->round < y->round ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

mc_status_t mc_plan_order_matchings(mc_plan_t *plan, int maximum, int64_t *rounds)
{
    const mc_topology_t *topo = plan->topo;
    int64_t nhost = mc_topology_hosts(topo), n = plan->nflows, nh2 = nhost * nhost;
    round_key_t *keys = mc_calloc((size_t)n + 1, sizeof *keys);
    int64_t *pair = mc_calloc((size_t)n + 1, sizeof *pair);     /* flow: a * nhost + b, or -1 */
    int64_t *start = mc_calloc((size_t)nh2 + 1, sizeof *start); /* per pair: its flows */
    int64_t *next = mc_calloc((size_t)nh2 + 1, sizeof *next);   /* per pair: first unplaced */
    int64_t *by_pair = mc_calloc((size_t)n + 1, sizeof *by_pair);
    int64_t *out = mc_calloc((size_t)nhost, sizeof *out),
            *in = mc_calloc((size_t)nhost, sizeof *in);
    int64_t *order = mc_calloc((size_t)nhost, sizeof *order);
    int64_t *by_in = mc_calloc((size_t)nhost, sizeof *by_in);
    int64_t *seen = mc_calloc((size_t)nhost, sizeof *seen);
    int64_t *match = mc_calloc((size_t)nhost, sizeof *match);
    mc_status_t s = MC_OK;
    if (!keys || !pair || !start || !next || !by_pair || !out || !in || !order || !by_in || !seen ||
        !match) {
        s = MC_ERR_NOMEM;
        goto done;
    }
    int64_t left = 0, local = 0;
    for (int64_t i = 0, a, b; i < n; i++) {
        pair[i] = -1;
        if (mc_flow_first_crossing(plan, i, &a, &b)) {
            pair[i] = a * nhost + b;
            out[a] += plan->flows[i].bytes;
            in[b] += plan->flows[i].bytes;
            start[pair[i] + 1]++;
            left++;
        }
        keys[i] = (round_key_t){pair[i] < 0 ? local++ : 0, i};
    }
    for (int64_t p = 0; p < nh2; p++)
        next[p] = start[p + 1] += start[p]; /* next: fill cursor, then reset below */
    for (int64_t i = n - 1; i >= 0; i--)
        if (pair[i] >= 0)
            by_pair[--next[pair[i]]] = i;
    for (int64_t h = 0; h < nhost; h++)
        order[h] = by_in[h] = h;
    kuhn_t k = {nhost, 0, maximum, start, next, by_in, seen, match};
    int64_t round = 0;
    for (; left > 0; round++) {
        sort_hosts(order, nhost, out);
        sort_hosts(by_in, nhost, in);
        for (int64_t h = 0; h < nhost; h++)
            match[h] = -1;
        for (int64_t x = 0; x < nhost; x++) { /* a sender with nothing left finds no path */
            k.stamp++;
            augment(&k, order[x]);
        }
        for (int64_t b = 0; b < nhost; b++) {
            if (match[b] < 0)
                continue;
            int64_t a = match[b], i = by_pair[next[a * nhost + b]++];
            keys[i].round = round;
            out[a] -= plan->flows[i].bytes;
            in[b] -= plan->flows[i].bytes;
            left--;
        }
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_round);
    for (int64_t i = 0; i < n; i++)
        pair[i] = keys[i].index; /* pair is done with: it holds the new order */
    s = mc_plan_permute_flows(plan, pair);
    if (!s && rounds)
        *rounds = round;
done:
    free(keys);
    free(pair);
    free(start);
    free(next);
    free(by_pair);
    free(out);
    free(in);
    free(order);
    free(by_in);
    free(seen);
    free(match);
    return s;
}
