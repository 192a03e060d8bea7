/* The senders term of the lower bound (docs/planning.md, "Senders").
 *
 * Every byte a device d of host h needs and lacks (R_d) arrives over an intra-host edge,
 * which holds the out-port of its sender, a device of h, or over h's NIC in (a cross-host
 * edge holds no device port). A chunk arrives one link latency after its last byte left the
 * port, so by T a device's out-port delivered at most B_intra·(T − α_intra − s)⁺, where s is
 * the earliest it can have a byte to send: 0 for a device that holds a piece a mate of h
 * needs, and for any other device the first arrival into it, α_min = min(α_intra, α_nic)
 * at the soonest (it can only forward what it received). So
 *   Σ_{d in h} R_d ≤ e_h·B_intra·(T − α_intra)⁺ + (n_h − e_h)·B_intra·(T − α_intra − α_min)⁺
 *                    + B_in(h)·(T − α_nic)⁺,
 * n_h the devices of h (any may relay), e_h those holding what a mate needs. The in-port
 * terms let every needer's port be busy from α_intra; this one sees that when a few devices
 * hold what the whole host needs, the others' out-ports start a hop later: a small all-gather
 * inside hosts (`RS1 -> RS0` on the same 4 x 8 dgx-a100 devices, 8 MiB: each host's 8 MiB
 * lie on two devices, 10.0 -> 11.3 us).
 *
 * The same seen from the in-ports: what a device of h needs over an intra-host edge also
 * holds its own in-port, B_intra·(T − α_intra)⁺ at most, and an edge that starts before
 * α_min can only come from an early device (nothing has arrived anywhere yet), whose
 * out-ports pass e_h·B_intra then. So with m_h the devices of h that need something,
 *   Σ_{d in h} R_d ≤ min(m_h, e_h)·B_intra·(T − α_intra)⁺
 *                    + (m_h − min(m_h, e_h))·B_intra·(T − α_intra − α_min)⁺
 *                    + B_in(h)·(T − α_nic)⁺:
 * in an all-gather inside hosts whose host's slice lies on one device, that device's port
 * feeds the others alone for a hop, and its own in-port, which the out-port view counts,
 * carries nothing it needs (g0210 of seed 19 of the scale benchmark, 6.8 MB to 7 mates on
 * dgx-a100: 24.4 -> 26.7 us). It counts copies delivered, so only copy reshards use it. */
#include <math.h>
#include <stdlib.h>
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

/* The least T with bytes <= Σ_i rate[i]·(T − start[i])⁺ (starts ascending). */
static double least_time(double bytes, const double *rate, const double *start, int n)
{
    double slope = 0, at = 0, t = start[0];
    for (int i = 0; i < n; i++) {
        /* delivered by start[i] with the ports open before it */
        double next = at + slope * (start[i] - t);
        if (slope > 0 && next >= bytes)
            return t + (bytes - at) / slope;
        at = next;
        t = start[i];
        slope += rate[i];
    }
    return slope > 0 ? t + (bytes - at) / slope : 0;
}

/* The least T with bytes <= early·(T − α_intra)⁺ + later·(T − α_intra − α_min)⁺
 * + b_in·(T − α_nic)⁺ (rates in bytes/s). */
static double ports_time(double bytes, double early, double later, double a_intra, double a_min,
                         double b_in, double a_nic)
{
    double rate[3] = {early, later, b_in}, start[3] = {a_intra, a_intra + a_min, a_nic};
    for (int i = 1; i < 3; i++) /* insertion sort by start */
        for (int j = i; j > 0 && start[j] < start[j - 1]; j--) {
            double t = start[j];
            start[j] = start[j - 1];
            start[j - 1] = t;
            t = rate[j];
            rate[j] = rate[j - 1];
            rate[j - 1] = t;
        }
    return least_time(bytes, rate, start, 3);
}

mc_status_t mc_bound_senders(const mc_topology_t *topo, const double *need, const char *early,
                             double b_intra, double a_intra, double a_min, double b_in,
                             double a_nic, double *seconds)
{
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    double *r = mc_calloc((size_t)nhost + 1, sizeof *r);
    int64_t *n = mc_calloc((size_t)nhost + 1, sizeof *n),
            *e = mc_calloc((size_t)nhost + 1, sizeof *e),
            *m = mc_calloc((size_t)nhost + 1, sizeof *m);
    *seconds = 0;
    if (!r || !n || !e || !m) {
        free(r);
        free(n);
        free(e);
        free(m);
        return MC_ERR_NOMEM;
    }
    for (int64_t d = 0; d < ndev; d++) {
        int64_t h = mc_topology_host_of(topo, d);
        r[h] += need[d];
        n[h]++;
        e[h] += early[d] != 0;
        m[h] += need[d] > 0;
    }
    for (int64_t h = 0; h < nhost; h++) {
        if (r[h] <= 0)
            continue;
        /* the out-ports: holders, relays, the NIC; the in-ports: those an early device can
         * feed, the others, the NIC */
        int64_t fed = m[h] < e[h] ? m[h] : e[h];
        double t = fmax(ports_time(r[h], (double)e[h] * b_intra, (double)(n[h] - e[h]) * b_intra,
                                   a_intra, a_min, b_in, a_nic),
                        ports_time(r[h], (double)fed * b_intra, (double)(m[h] - fed) * b_intra,
                                   a_intra, a_min, b_in, a_nic));
        if (t > *seconds)
            *seconds = t;
    }
    free(r);
    free(n);
    free(e);
    free(m);
    return MC_OK;
}
