/* The rails-in term of the lower bound (docs/planning.md, "The rails-in term"): on a
 * rail-optimized cluster a needer that no holder's rail reaches gets its bytes late through
 * every one of its host's NIC ports, later through some than through others.
 *
 * Let d be a needer in host h of pieces that h does not hold and none of whose holders sits
 * on d's rail j = r(d); R_d their bytes. A byte of such a piece p last enters h through a NIC
 * port k of h, landing α_nic after its passage through k ends on a device m on rail k, from
 * a sender s on another host. δ = min(α_intra, α_nic); α_s the spine's latency (a crossing
 * between rails).
 *  - k = j: s on rail j holds no byte of p, so got it a hop before and the passage starts δ
 *    late or more; or s sits on another rail and the byte arrives α_s later. Through k the
 *    passages of d's bytes lie in [δ, T − α_nic] ∪ [0, T − α_nic − α_s].
 *  - k ≠ j: m is not d (d's own port is j), so the byte takes a hop inside h after it lands,
 *    α_intra more. If k is the rail of some holder of p, s may be that holder: passages lie
 *    in [0, T − α_nic − α_intra]. If not, s lacks p or crosses the spine, as above:
 *    [δ, T − α_nic − α_intra] ∪ [0, T − α_nic − α_intra − α_s].
 * A port serves one chunk at a time at its rate B (at most: a crossbar only slows it), so
 * it passes at most B times the length of those windows, whatever else it carries; so
 *     R_d ≤ Σ_k B·L_k(T)
 * and the least such T is a bound. Per port the window of any of d's pieces counts (the
 * longest), so pieces that mix holder rails only weaken it. It differs from the rails term
 * (bound_rails.c), which charges each byte α_nic + δ with half a host's NIC rate: here each of
 * d's ports has its own windows, and the ports on no holder's rail pay both the hop before
 * and the hop after. Only ports a device of the meshes sits on count (a plan's edges join
 * its meshes' devices). Copies only: a partial source's needers need combinations. */
#include <stdlib.h>
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

/* The least T by which d's host's ports pass bytes to d: its own port, e ports on a holder's
 * rail of some of its pieces and o on none. A window [δ, x] ∪ [0, x − α_s] has length
 * (x − δ)⁺ + (x − α_s)⁺ − (x − α_s − δ)⁺ (the second part is at most δ long). */
static double least_time(double bytes, double rate, double nic, double intra, double delta,
                         double spine, int64_t e, int64_t o)
{
    double ports[3] = {rate, (double)e * rate, (double)o * rate};
    double r[7] = {ports[0], ports[0], -ports[0], ports[1], ports[2], ports[2], -ports[2]};
    double hop = nic + intra; /* the other ports' bytes take a hop inside the host */
    double start[7] = {nic + delta, nic + spine, nic + spine + delta, hop,
                       hop + delta, hop + spine, hop + spine + delta};
    return mc_bound_ramps(bytes, r, start, 7);
}

mc_status_t mc_bound_rails_in(const mc_pieces_t *pieces, const mc_topology_t *topo, double *seconds)
{
    *seconds = 0;
    int64_t ports = mc_topology_nic_ports(topo);
    if (!topo->nic_rails || !topo->nic_map || pieces->naddends > 1 || ports > 64)
        return MC_OK; /* a mask per device below: more rails get no term */
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    double *need = mc_calloc((size_t)ndev + 1, sizeof *need);     /* R_d */
    uint64_t *early = mc_calloc((size_t)ndev + 1, sizeof *early); /* holder rails, d's pieces */
    uint64_t *sits = mc_calloc((size_t)nhost + 1, sizeof *sits);  /* ports with a device */
    int64_t *held = mc_calloc((size_t)nhost + 1, sizeof *held);   /* piece + 1 */
    if (!need || !early || !sits || !held) {
        free(need);
        free(early);
        free(sits);
        free(held);
        return MC_ERR_NOMEM;
    }
    for (int64_t d = 0; d < ndev; d++) {
        int r = mc_topology_nic_index(topo, d);
        if (r >= 0)
            sits[mc_host_of(topo, d)] |= 1ull << r;
    }
    for (int64_t i = 0; i < pieces->npieces; i++) {
        const mc_piece_t *p = &pieces->pieces[i];
        uint64_t rails = 0;
        for (int j = 0; j < p->nholders; j++) {
            int r = mc_topology_nic_index(topo, p->holders[j]);
            held[mc_host_of(topo, p->holders[j])] = i + 1;
            rails |= r >= 0 ? 1ull << r : ~0ull; /* a holder off the rails: every port early */
        }
        for (int j = 0; j < p->nneeders; j++) {
            int64_t d = p->needers[j];
            int r = mc_topology_nic_index(topo, d);
            if (r < 0 || held[mc_host_of(topo, d)] == i + 1 || (rails >> r & 1))
                continue;
            need[d] += (double)p->bytes;
            early[d] |= rails;
        }
    }
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double delta = intra.latency < nic.latency ? intra.latency : nic.latency;
    double rate = 1.0 / mc_topology_nic_port_seconds_per_byte(topo);
    for (int64_t d = 0; d < ndev; d++) {
        if (need[d] <= 0)
            continue;
        uint64_t others = sits[mc_host_of(topo, d)] & ~(1ull << mc_topology_nic_index(topo, d));
        int64_t e = __builtin_popcountll(others & early[d]);
        int64_t o = __builtin_popcountll(others & ~early[d]);
        double t =
            least_time(need[d], rate, nic.latency, intra.latency, delta, topo->nic_latency, e, o);
        *seconds = t > *seconds ? t : *seconds;
    }
    free(need);
    free(early);
    free(sits);
    free(held);
    return MC_OK;
}
