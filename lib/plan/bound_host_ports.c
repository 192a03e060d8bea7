/* The host-port term of the lower bound, per device (docs/planning.md, "Host ports").
 *
 * A device d of host h takes the R_d bytes it needs and lacks through its own in-port (an
 * intra-host edge into d) or through h's NIC in (a cross-host edge ending at d, which holds
 * no device port). By T its in-port delivered at most B_intra·(T − α_intra)⁺ of them, so
 * at least (R_d − B_intra·(T − α_intra)⁺)⁺ came through the NIC, which all of h's devices
 * share: Σ_{d in h} (R_d − B_intra·(T − α_intra)⁺)⁺ ≤ B_in(h)·(T − α_nic)⁺. The sum of
 * positive parts is the largest sum over device sets S of Σ_S (R_d − B_intra·(T − α_intra)⁺),
 * and for |S| = j the j largest R_d give it, so T is at least
 * max_j paths(the j largest R_d summed; j·B_intra, α_intra; B_in(h), α_nic). j = 1 is the
 * device term and j = n_h the host term before; the ones between count that a device needing
 * little cannot lend its in-port to a needier one (`RS1RR -> S0RR` inside 7 hosts of
 * dgx-h100: the two devices holding a host's slice need 10 and 64 of its 74 rows, the other
 * six all 74). The same holds for the bytes only d holds (E_d), through its out-port or h's
 * NIC out. With a port per NIC (nic-affinity) a cross-host edge ends at its device's own NIC,
 * so j devices take at most j NIC ports' rate of it (fewer where they share NICs). */
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

/* max_j paths(Σ of the j largest of v[0..n); j·b1, a1; min(b2, j·b2_port), a2); sorts v. */
static double each(double *v, int64_t n, double b1, double a1, double b2, double b2_port, double a2)
{
    mc_sort_desc(v, n);
    double sum = 0, best = 0;
    for (int64_t j = 0; j < n && v[j] > 0; j++) {
        sum += v[j];
        double nic = b2 < (double)(j + 1) * b2_port ? b2 : (double)(j + 1) * b2_port;
        double t = mc_bound_paths(sum, (double)(j + 1) * b1, a1, nic, a2);
        if (t > best)
            best = t;
    }
    return best;
}

mc_status_t mc_bound_host_ports(const mc_topology_t *topo, const double *bytes, double b1,
                                double a1, double b2, double b2_port, double a2, double *seconds)
{
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    int64_t *start = mc_calloc((size_t)nhost + 1, sizeof *start);
    int64_t *fill = mc_calloc((size_t)nhost + 1, sizeof *fill);
    double *v = mc_calloc((size_t)ndev + 1, sizeof *v);
    *seconds = 0;
    if (!start || !fill || !v) {
        free(start);
        free(fill);
        free(v);
        return MC_ERR_NOMEM;
    }
    /* devices grouped by host (a topology may map them in any order) */
    for (int64_t d = 0; d < ndev; d++)
        start[mc_topology_host_of(topo, d) + 1]++;
    for (int64_t h = 0; h < nhost; h++)
        fill[h + 1] = start[h + 1] += start[h];
    for (int64_t d = 0; d < ndev; d++)
        v[fill[mc_topology_host_of(topo, d)]++] = bytes[d];
    for (int64_t h = 0; h < nhost; h++) {
        double t = each(v + start[h], start[h + 1] - start[h], b1, a1, b2, b2_port, a2);
        if (t > *seconds)
            *seconds = t;
    }
    free(start);
    free(fill);
    free(v);
    return MC_OK;
}
