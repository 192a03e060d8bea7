/* broadcast (Alpa): one broadcast per piece from one holder to all its needers, modeled as
 * NCCL's pipelined ring: a chain from the sender through the needers of its own host, then
 * host by host (each host boundary crossed once). Sender choice as Alpa defines it:
 *   first    - the first holder;
 *   lb_size  - hosts as single NICs: the holder host with the fewest bytes sent so far;
 *   lb_order - randomized greedy rounds of host-disjoint broadcasts (best of 100 shuffles
 *              per round), each round's senders picked on the least-loaded free host; the
 *              plan lists broadcasts round by round. */
#include <stdlib.h>
#include <string.h>
#include "strategy_common.h"
#include "util/util.h"

#define LB_ORDER_TRIALS 100

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Adds piece i's chain from sender; needers of the sender's host first, then by host. */
static mc_status_t add_chain(mc_plan_t *plan, int64_t i, int64_t sender, mc_loads_t *loads)
{
    const mc_piece_t *p = &plan->pieces->pieces[i];
    int64_t sh = mc_topology_host_of(plan->topo, sender), prev = sender;
    mc_status_t s = mc_plan_add_flow(plan, i, &p->box);
    for (int pass = 0; pass < 2 && !s; pass++)
        for (int j = 0; j < p->nneeders && !s; j++) {
            int64_t n = p->needers[j];
            if ((mc_topology_host_of(plan->topo, n) == sh) != (pass == 0))
                continue;
            mc_loads_add(loads, plan->topo, prev, n, (double)p->bytes);
            s = mc_plan_add_edge(plan, prev, n);
            prev = n;
        }
    return s;
}

/* Least-loaded holder host (by bytes sent), optionally skipping hosts marked busy; then its
 * least-loaded holder device. Returns -1 if every holder host is busy. */
static int64_t pick_sender(const mc_plan_t *plan, const mc_piece_t *p, const mc_loads_t *loads,
                           const char *busy)
{
    int64_t best = -1;
    double best_load = 0;
    for (int j = 0; j < p->nholders; j++) {
        int64_t h = mc_topology_host_of(plan->topo, p->holders[j]);
        if (busy && busy[h])
            continue;
        double l = loads->host_send[h];
        if (best < 0 || l < best_load ||
            (l == best_load && loads->dev_send[p->holders[j]] < loads->dev_send[best])) {
            best = p->holders[j];
            best_load = l;
        }
    }
    return best;
}

/* Marks (or tests, when test is set) the sender's host and every needer's host. */
static int hosts_touch(const mc_plan_t *plan, const mc_piece_t *p, int64_t sender, char *busy,
                       int test)
{
    int64_t sh = mc_topology_host_of(plan->topo, sender);
    for (int j = 0; j < p->nneeders; j++) {
        int64_t h = mc_topology_host_of(plan->topo, p->needers[j]);
        if (h == sh)
            continue;
        if (test && busy[h])
            return 1;
        if (!test)
            busy[h] = 1;
    }
    if (!test)
        busy[sh] = 1;
    return 0;
}

static mc_status_t lb_order(mc_plan_t *plan, mc_loads_t *loads, int64_t *todo, int64_t n)
{
    int64_t nhost = mc_topology_hosts(plan->topo);
    uint64_t rng = plan->params.seed;
    mc_status_t s = MC_OK;
    char *busy = mc_calloc((size_t)nhost, 1);
    int64_t *trial = mc_calloc((size_t)n + 1, sizeof *trial);
    int64_t *round = mc_calloc((size_t)n + 1, sizeof *round);
    if (!busy || !trial || !round) {
        s = MC_ERR_NOMEM;
        goto out;
    }
    while (n > 0 && !s) {
        int64_t best_count = 0;
        double best_bytes = -1;
        /* Alpa's 100 shuffles per round grow quadratically; past 200 broadcasts keep the
         * work per round near 100 x 200 placements */
        int trials = n <= 200 ? LB_ORDER_TRIALS : (int)(LB_ORDER_TRIALS * 200 / n) + 4;
        for (int t = 0; t < trials; t++) {
            memcpy(trial, todo, (size_t)n * sizeof *trial);
            for (int64_t k = n - 1; k > 0; k--) {
                int64_t j = (int64_t)(next_random(&rng) % (uint64_t)(k + 1)), x = trial[k];
                trial[k] = trial[j];
                trial[j] = x;
            }
            memset(busy, 0, (size_t)nhost);
            int64_t count = 0;
            double bytes = 0;
            for (int64_t k = 0; k < n; k++) {
                const mc_piece_t *p = &plan->pieces->pieces[trial[k]];
                int64_t snd = pick_sender(plan, p, loads, busy);
                if (snd < 0 || hosts_touch(plan, p, snd, busy, 1))
                    continue;
                hosts_touch(plan, p, snd, busy, 0);
                trial[count++] = trial[k];
                bytes += (double)p->bytes;
            }
            if (bytes > best_bytes) {
                best_bytes = bytes;
                best_count = count;
                memcpy(round, trial, (size_t)count * sizeof *round);
            }
        }
        if (best_count == 0) /* a broadcast that conflicts with itself runs alone */
            round[best_count++] = todo[0];
        memset(busy, 0, (size_t)nhost);
        for (int64_t k = 0; k < best_count && !s; k++) {
            const mc_piece_t *p = &plan->pieces->pieces[round[k]];
            int64_t snd = pick_sender(plan, p, loads, busy);
            if (snd < 0)
                snd = pick_sender(plan, p, loads, NULL);
            hosts_touch(plan, p, snd, busy, 0);
            s = add_chain(plan, round[k], snd, loads);
        }
        /* drop the round's pieces from todo, keeping order */
        int64_t m = 0;
        for (int64_t k = 0; k < n; k++) {
            int in_round = 0;
            for (int64_t r = 0; r < best_count && !in_round; r++)
                in_round = round[r] == todo[k];
            if (!in_round)
                todo[m++] = todo[k];
        }
        n = m;
    }
out:
    free(busy);
    free(trial);
    free(round);
    return s;
}

mc_status_t mc_strategy_broadcast(mc_plan_t *plan)
{
    const mc_pieces_t *ps = plan->pieces;
    mc_loads_t loads;
    int64_t *todo = mc_calloc((size_t)ps->npieces + 1, sizeof *todo), n = 0;
    mc_status_t s = todo ? mc_loads_create(plan->topo, &loads) : MC_ERR_NOMEM;
    if (s) {
        free(todo);
        return s;
    }
    for (int64_t i = 0; i < ps->npieces; i++)
        if (ps->pieces[i].nneeders > 0)
            todo[n++] = i;
    if (plan->params.sender == MC_SENDER_LB_ORDER) {
        s = lb_order(plan, &loads, todo, n);
    } else {
        for (int64_t k = 0; k < n && !s; k++) {
            const mc_piece_t *p = &ps->pieces[todo[k]];
            int64_t snd = plan->params.sender == MC_SENDER_FIRST
                              ? p->holders[0]
                              : pick_sender(plan, p, &loads, NULL);
            s = add_chain(plan, todo[k], snd, &loads);
        }
    }
    free(todo);
    mc_loads_destroy(&loads);
    return s;
}
