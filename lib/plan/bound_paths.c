/* The two-path latency term of the lower bound (docs/planning.md, "Two paths").
 *
 * A port's bytes reach their receiver one link latency after the port passed them: a chunk
 * holds its ports for bytes / B and arrives α after its last byte left. So a receiver that
 * can be fed through two ports only — its device port inside the host (B_intra, α_intra)
 * and its host's NIC (B_in, α_nic) — has by T at most B_1·(T − α_1)⁺ + B_2·(T − α_2)⁺
 * bytes, and T is at least the least time at which that reaches its bytes. The same holds
 * for bytes that must leave through two ports (a device's out-port and its host's NIC out),
 * and for a host's needing devices together (their n in-ports and the NIC). The fluid terms
 * charge the smaller latency once for both ports; this charges each port its own, which
 * matters when the bytes are few: a device that takes 4.6 MB from a host mate (450 GB/s,
 * 3 us) or over the NIC (400 GB/s, 10 us) needs 11.7 us, where the fluid term says 8.4.
 * mc_bound_ramps is the same for any few ports (the senders and rails-in terms). */
#include "plan_internal.h"

double mc_bound_paths(double bytes, double b1, double a1, double b2, double a2)
{
    if (bytes <= 0)
        return 0;
    if (a2 < a1) { /* the faster-starting port first */
        double b = b1, a = a1;
        b1 = b2;
        a1 = a2;
        b2 = b;
        a2 = a;
    }
    if (b1 <= 0 && b2 <= 0)
        return 0;                /* no port: other terms say so */
    if (b1 * (a2 - a1) >= bytes) /* done through the first before the second delivers */
        return a1 + bytes / b1;
    return (bytes + b1 * a1 + b2 * a2) / (b1 + b2);
}

double mc_bound_ramps(double bytes, const double *rate, const double *start, int n)
{
    int order[MC_BOUND_RAMPS_MAX];
    for (int i = 0; i < n; i++) { /* by start, insertion sort: a few ramps */
        int j = i;
        for (; j > 0 && start[order[j - 1]] > start[i]; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    double slope = 0, at = 0, t = n > 0 ? start[order[0]] : 0;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        /* delivered by start[i] with the ramps begun before it */
        double next = at + slope * (start[i] - t);
        if (slope > 0 && next >= bytes)
            return t + (bytes - at) / slope;
        at = next;
        t = start[i];
        slope += rate[i];
    }
    return slope > 0 ? t + (bytes - at) / slope : 0;
}
