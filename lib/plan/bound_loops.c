/* The NIC-loop term of the lower bound (docs/planning.md, "NIC loops").
 *
 * The host-port terms let a device take what its in-port cannot carry through its host's
 * NIC, also bytes that only its own host holds: those can arrive over the NIC only after
 * leaving the host and reaching a device of another host, which holds none of them, so they
 * cross a NIC in twice. Call a piece host-local when its holders and its needers all lie in
 * one host h, and O_d the bytes of such pieces that d needs. By T, d's in-port carried at most
 * x = B_intra·(T − α_intra)⁺ of what it needs, so at least (R_d − x)⁺ of it arrived at d over
 * h's NIC, and at least (O_d − x)⁺ distinct bytes of h's host-local pieces arrived before at a
 * device of another host, which needs none of them. Every such arrival passed some host's NIC
 * in by T − α_nic, and no arrival is counted twice (the first kind at a device that needs the
 * bytes, the second at one that does not), so with N the NIC-in rates of all hosts summed
 *
 *     Σ_d (R_d − x)⁺ + Σ_h max_{d in h} (O_d − x)⁺ ≤ N·(T − α_nic)⁺.
 *
 * Where every host gathers its own data on one device (`S0RS1 -> S10RR` on 64 x 8 dgx-a100,
 * 16 GiB) the host-port term let each gathering device take 200 GB/s of NIC besides its
 * 300 GB/s port (0.476 ms); looped bytes cost every host two NIC arrivals, 0.592 ms. */
#include <math.h>
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

/* Σ_v (v − x)⁺ over the values */
static double excess(const double *v, int64_t n, double x)
{
    double sum = 0;
    for (int64_t i = 0; i < n; i++)
        sum += v[i] > x ? v[i] - x : 0;
    return sum;
}

mc_status_t mc_bound_loops(const mc_topology_t *topo, const double *r_dev, const double *o_dev,
                           double b_intra, double a_intra, double nic_in, double a_nic,
                           double *seconds)
{
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    *seconds = 0;
    double *v = mc_calloc((size_t)(ndev + nhost) + 1, sizeof *v);
    double *most = mc_calloc((size_t)nhost + 1, sizeof *most); /* per host: max_{d in h} O_d */
    if (!v || !most) {
        free(v);
        free(most);
        return MC_ERR_NOMEM;
    }
    int64_t n = 0;
    int loops = 0;
    for (int64_t d = 0; d < ndev; d++) {
        int64_t h = mc_topology_host_of(topo, d);
        most[h] = fmax(most[h], o_dev[d]);
        loops |= o_dev[d] > 0;
        if (r_dev[d] > 0)
            v[n++] = r_dev[d];
    }
    /* without host-local bytes the sum is the host-port terms' (each within its own NIC) */
    if (!loops || b_intra <= 0) {
        free(v);
        free(most);
        return MC_OK;
    }
    for (int64_t h = 0; h < nhost; h++)
        if (most[h] > 0)
            v[n++] = most[h];
    /* the left side falls and the right one rises with T: bisect between 0 and the time
     * every in-port alone is done; the infeasible end is returned, so the term stays below
     * the exact least T */
    double top = 0;
    for (int64_t i = 0; i < n; i++)
        top = fmax(top, v[i]);
    double lo = 0, hi = a_intra + top / b_intra;
    for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; it++) {
        double t = 0.5 * (lo + hi);
        double x = b_intra * fmax(t - a_intra, 0), nic = nic_in * fmax(t - a_nic, 0);
        if (excess(v, n, x) <= nic)
            hi = t;
        else
            lo = t;
    }
    *seconds = lo;
    free(v);
    free(most);
    return MC_OK;
}
