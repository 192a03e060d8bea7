/* The rails-out term of the lower bound (docs/planning.md, "The rails-out term"): on a
 * rail-optimized cluster a host whose own bytes are needed only on some rails can use its
 * NICs on the other rails for them only at a cost in latency.
 *
 * Let E_A be the bytes of the pieces that only host A holds and some device of another host
 * needs, and U_A the NIC ports of A on whose rail no such needer sits. Every byte of E_A
 * reaches one of its needers n outside A along a path whose first edge out of A leaves
 * through some port j of A. If j is in U_A, the byte lands (α_nic after its passage ends) on
 * a device on rail j that does not need it and must pass it on (α_intra or α_nic more), or
 * crosses the spine to another rail (α_nic more): it reaches n at least α_nic + δ after its
 * passage through j, δ = min(α_intra, α_nic). Counting each byte once, at that first edge,
 * port j of rate B_j passes by T at most B_j·(T − α_nic)⁺ of them if its rail has such a
 * needer and B_j·(T − α_nic − δ)⁺ if not, so
 *     E_A ≤ Σ_j B_j·(T − α_nic − [j ∈ U_A]·δ)⁺,
 * the least such T is a bound. Ports of A that no device of the meshes sits on carry nothing
 * (a plan's edges join its meshes' devices). Copies only: a partial source's needers need
 * combinations, made wherever a plan makes them. */
#include <stdlib.h>
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

mc_status_t mc_bound_rails_out(const mc_pieces_t *pieces, const mc_topology_t *topo,
                               double *seconds)
{
    *seconds = 0;
    if (!topo->nic_rails || !topo->nic_map || pieces->naddends > 1)
        return MC_OK;
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    int64_t ports = mc_topology_nic_ports(topo);
    double *own = mc_calloc((size_t)nhost, sizeof *own); /* E_A */
    /* per port: 1 a device of the meshes sits on it, 2 also a needer of E_A on its rail */
    char *port = mc_calloc((size_t)(nhost * ports), 1);
    char *unmapped = mc_calloc((size_t)nhost, 1); /* a device without a NIC of its own */
    if (!own || !port || !unmapped) {
        free(own);
        free(port);
        free(unmapped);
        return MC_ERR_NOMEM;
    }
    for (int64_t d = 0; d < ndev; d++) {
        if (mc_topology_nic_index(topo, d) < 0)
            unmapped[mc_host_of(topo, d)] = 1;
        else
            port[mc_topology_nic_port(topo, d)] |= 1;
    }
    for (int64_t i = 0; i < pieces->npieces; i++) {
        const mc_piece_t *p = &pieces->pieces[i];
        if (p->nholders == 0)
            continue;
        int64_t a = mc_host_of(topo, p->holders[0]);
        int only = 1, needed = 0;
        for (int j = 1; j < p->nholders && only; j++)
            only = mc_host_of(topo, p->holders[j]) == a;
        for (int j = 0; j < p->nneeders && only; j++) {
            int64_t n = p->needers[j];
            if (mc_host_of(topo, n) == a)
                continue;
            needed = 1;
            int r = mc_topology_nic_index(topo, n);
            if (r < 0)
                unmapped[a] = 1; /* which rail it arrives on is unknown: no term for a */
            else
                port[a * ports + r] |= 2;
        }
        if (only && needed)
            own[a] += (double)p->bytes;
    }
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double delta = intra.latency < nic.latency ? intra.latency : nic.latency;
    double rate = mc_topology_nic_out(topo) / (double)ports;
    for (int64_t a = 0; a < nhost; a++) {
        int64_t direct = 0, late = 0;
        for (int64_t j = 0; j < ports; j++) {
            direct += port[a * ports + j] == 3;
            late += port[a * ports + j] == 1;
        }
        if (unmapped[a])
            continue;
        /* the direct ports pass from the start, the others δ late (0: nothing to send) */
        double t = mc_bound_paths(own[a], (double)direct * rate, nic.latency, (double)late * rate,
                                  nic.latency + delta);
        *seconds = t > *seconds ? t : *seconds;
    }
    free(own);
    free(port);
    free(unmapped);
    return MC_OK;
}
