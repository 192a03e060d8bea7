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
 * dgx-a100: 24.4 -> 26.7 us). The in-ports' view holds for any k of the m_h devices, each
 * port its own: a device that needs little cannot lend its port's time to a mate, so the
 * k that need most give the term (Σ over them, min(k, e_h) fed from α_intra): where a
 * host's slice lies on two devices, each needing little of the other's, the six that need
 * it all bind (`RS1R -> RS0R` over 6 x 8 dgx-a100 devices, 32 MiB: 20.7 -> 22.3 us). It
 * counts copies delivered, so only copy reshards use it. */
#include <math.h>
#include <stdlib.h>
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

/* The least T with bytes <= early·(T − α_intra)⁺ + later·(T − α_intra − α_min)⁺
 * + b_in·(T − α_nic)⁺ (rates in bytes/s). */
static double ports_time(double bytes, double early, double later, double a_intra, double a_min,
                         double b_in, double a_nic)
{
    double rate[3] = {early, later, b_in}, start[3] = {a_intra, a_intra + a_min, a_nic};
    return mc_bound_ramps(bytes, rate, start, 3);
}

static int by_need_descending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The in-ports' view over every k of host h's m needers (needs[0..m), sorted here), with e
 * early devices: the largest least T. */
static double in_ports_time(double *needs, int64_t m, int64_t e, double b_intra, double a_intra,
                            double a_min, double b_in, double a_nic)
{
    double sum = 0, best = 0;
    qsort(needs, (size_t)m, sizeof *needs, by_need_descending);
    for (int64_t k = 1; k <= m; k++) {
        int64_t fed = k < e ? k : e;
        sum += needs[k - 1];
        double t = ports_time(sum, (double)fed * b_intra, (double)(k - fed) * b_intra, a_intra,
                              a_min, b_in, a_nic);
        best = t > best ? t : best;
    }
    return best;
}

mc_status_t mc_bound_senders(const mc_topology_t *topo, const double *need, const char *early,
                             double b_intra, double a_intra, double a_min, double b_in,
                             double a_nic, double *seconds)
{
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    double *needs = mc_calloc((size_t)mc_topology_devices_per_host(topo) + 1, sizeof *needs);
    *seconds = 0;
    if (!needs)
        return MC_ERR_NOMEM;
    /* a host's devices are contiguous ids: d runs over host h's as h ascends */
    for (int64_t h = 0, d = 0; h < nhost; h++) {
        double r = 0;
        int64_t n = 0, e = 0, k = 0; /* devices, early ones, needers */
        for (; d < ndev && mc_topology_host_of(topo, d) == h; d++, n++) {
            r += need[d];
            e += early[d] != 0;
            if (need[d] > 0)
                needs[k++] = need[d];
        }
        if (r <= 0)
            continue;
        /* the out-ports: holders, relays, the NIC; the in-ports: those an early device can
         * feed, the others, the NIC, for the k needers that need most */
        double t = fmax(ports_time(r, (double)e * b_intra, (double)(n - e) * b_intra, a_intra,
                                   a_min, b_in, a_nic),
                        in_ports_time(needs, k, e, b_intra, a_intra, a_min, b_in, a_nic));
        if (t > *seconds)
            *seconds = t;
    }
    free(needs);
    return MC_OK;
}
