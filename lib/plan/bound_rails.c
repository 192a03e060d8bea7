/* The rails term of the lower bound (docs/planning.md, "The rails term"): on a rail-optimized
 * cluster a crossing between NICs of two rails pays one more NIC latency (the spine), so a
 * piece whose holders all sit on other rails than a needer's reaches that needer late.
 *
 * Let host h not hold piece p, and d a needer of p in h whose rail r(d) no holder of p is on.
 * Every byte of p reaches d (a) over d's own NIC from a device on rail r(d) of another host,
 * which holds no byte of p and so got it a hop before: over its host's links (α_intra) or a
 * NIC (α_nic); (b) over d's NIC from another rail: the spine's α_nic more on arrival; or
 * (c) over a host mate's NIC, then a hop over h's links: α_intra more on arrival. With
 * δ = min(α_intra, α_nic): in (a) the byte's passage through h's NIC port starts δ late and
 * it arrives α_nic after the passage; in (b) and (c) it arrives α_nic + δ after its passage,
 * which may start at once. Through a port j of rate B_j, let such bytes pass Q_a of kind (a)
 * and Q_c of the others: the last of (a) passes at δ + Q_a/B_j or later, the last of the
 * others at Q_c/B_j or later, so the later arrival is at least α_nic + δ + max(Q_a, Q_c)/B_j
 * ≥ α_nic + δ + Q_j/(2 B_j), Q_j = Q_a + Q_c (a port may pass kind (c) while kind (a) is
 * still on its way; the host NIC term has Q_j/B_j alone). Every byte passes some port of h at
 * least once, and max_j Q_j/B_j ≥ Q_h/Σ_j B_j: T ≥ α_nic + δ + Q_h/(2 B_in(h)), Q_h the bytes
 * of pieces that h lacks and some needer in h gets from no holder on its rail, each piece
 * once. Copies only: a partial source's needers need combinations, made wherever a plan
 * makes them. */
#include <stdlib.h>
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

/* Whether a holder of p sits on rail r: a mask for rails below 64, else a scan. */
static int rail_held(const mc_topology_t *topo, const mc_piece_t *p, uint64_t mask, int r)
{
    if (r < 64)
        return (int)(mask >> r & 1);
    for (int j = 0; j < p->nholders; j++)
        if (mc_topology_nic_index(topo, p->holders[j]) == r)
            return 1;
    return 0;
}

mc_status_t mc_bound_rails(const mc_pieces_t *pieces, const mc_topology_t *topo, const double *bin,
                           double *seconds)
{
    *seconds = 0;
    if (!topo->nic_rails || !topo->nic_map || pieces->naddends > 1)
        return MC_OK;
    int64_t nhost = mc_topology_hosts(topo);
    double *q = mc_calloc((size_t)nhost, sizeof *q);
    int64_t *held = mc_calloc((size_t)nhost, sizeof *held), *counted = NULL;
    if (q && held)
        counted = mc_calloc((size_t)nhost, sizeof *counted);
    if (!counted) {
        free(q);
        free(held);
        return MC_ERR_NOMEM;
    }
    for (int64_t i = 0; i < pieces->npieces; i++) {
        const mc_piece_t *p = &pieces->pieces[i];
        uint64_t mask = 0; /* holder rails below 64 */
        for (int j = 0; j < p->nholders; j++) {
            int r = mc_topology_nic_index(topo, p->holders[j]);
            held[mc_host_of(topo, p->holders[j])] = i + 1;
            if (r >= 0 && r < 64)
                mask |= 1ull << r;
        }
        for (int j = 0; j < p->nneeders; j++) {
            int64_t d = p->needers[j], h = mc_host_of(topo, d);
            int r = mc_topology_nic_index(topo, d);
            if (held[h] == i + 1 || counted[h] == i + 1 || r < 0 || rail_held(topo, p, mask, r))
                continue;
            counted[h] = i + 1;
            q[h] += (double)p->bytes;
        }
    }
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double delta = intra.latency < nic.latency ? intra.latency : nic.latency;
    for (int64_t h = 0; h < nhost; h++) {
        double t = q[h] > 0 && bin[h] > 0 ? nic.latency + delta + q[h] / (2 * bin[h]) : 0;
        *seconds = t > *seconds ? t : *seconds;
    }
    free(q);
    free(held);
    free(counted);
    return MC_OK;
}
