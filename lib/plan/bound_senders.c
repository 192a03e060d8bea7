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
 * lie on two devices, 10.0 -> 11.3 us). It counts copies delivered, so only copy reshards
 * use it. */
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

mc_status_t mc_bound_senders(const mc_topology_t *topo, const double *need, const char *early,
                             double b_intra, double a_intra, double a_min, double b_in,
                             double a_nic, double *seconds)
{
    int64_t nhost = mc_topology_hosts(topo), ndev = mc_topology_devices(topo);
    double *r = mc_calloc((size_t)nhost + 1, sizeof *r);
    int64_t *n = mc_calloc((size_t)nhost + 1, sizeof *n),
            *e = mc_calloc((size_t)nhost + 1, sizeof *e);
    *seconds = 0;
    if (!r || !n || !e) {
        free(r);
        free(n);
        free(e);
        return MC_ERR_NOMEM;
    }
    for (int64_t d = 0; d < ndev; d++) {
        int64_t h = mc_topology_host_of(topo, d);
        r[h] += need[d];
        n[h]++;
        e[h] += early[d] != 0;
    }
    for (int64_t h = 0; h < nhost; h++) {
        if (r[h] <= 0)
            continue;
        /* three ports in the order they open: holders, relays, the NIC */
        double rate[3] = {(double)e[h] * b_intra, (double)(n[h] - e[h]) * b_intra, b_in};
        double start[3] = {a_intra, a_intra + a_min, a_nic};
        for (int i = 1; i < 3; i++) /* insertion sort by start */
            for (int j = i; j > 0 && start[j] < start[j - 1]; j--) {
                double t = start[j];
                start[j] = start[j - 1];
                start[j - 1] = t;
                t = rate[j];
                rate[j] = rate[j - 1];
                rate[j - 1] = t;
            }
        double t = least_time(r[h], rate, start, 3);
        if (t > *seconds)
            *seconds = t;
    }
    free(r);
    free(n);
    free(e);
    return MC_OK;
}
