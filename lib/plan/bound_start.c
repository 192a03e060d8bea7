/* The slow-start term of the lower bound (docs/planning.md, "Slow start").
 *
 * Host h lacks pieces that k_p of its devices need; R_h their bytes, D_h = Σ k_p·bytes. A
 * needing device gets such a byte through h's NIC in (a copy) or from a device of h, which
 * got it through h's NIC at least α_nic + α_intra before T. So every byte passes h's NIC
 * once by τ = T − α_nic − α_intra or k_p times by T − α_nic; with Q = B_in·α_intra, at most
 * g_h(Q) bytes (fewest copies first, Σ k_p·bytes ≤ Q) can do without the early pass, and
 * h's NIC must pass c_h = R_h − g_h(Q) distinct bytes by τ.
 *
 * Before α_nic no byte has crossed a NIC, so only the s hosts holding pieces that others
 * lack send then: the needing hosts' NICs pass at most m = min(s·B_out, n·B_in) bytes/s
 * together in [0, α_nic). With u = τ − α_nic ≥ 0, host h passes x_h + B_in·u bytes by τ,
 * x_h ≤ B_in·α_nic what it passed before α_nic, Σ x_h ≤ m·α_nic; so for every j, the j
 * largest c_h sum to at most m·α_nic + j·B_in·u:
 *   T >= 2α_nic + α_intra + max_j (C_j − m·α_nic) / (j·B_in),  C_j the sum of the j largest,
 *   and T >= α_nic + α_intra + c_h / B_in for each host (x_h ≤ B_in·α_nic).
 * Below 2α_nic + α_intra (τ < α_nic) everything passed by τ was sent in the slow start:
 * T >= α_nic + α_intra + max(max_h c_h / B_in, Σ_h c_h / m); below α_nic + α_intra nothing
 * can be relayed inside h: T >= α_nic + D_h / B_in. The bound is the least T that meets the
 * conditions of its range. */
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

static uint64_t copies_key(const void *item, const void *ctx)
{
    (void)ctx;
    return (uint64_t)((const mc_relay_item_t *)item)->copies;
}

/* c_h (*early): bytes that must pass the NIC by τ when the last α_intra passes room
 * copy-bytes. */
static mc_status_t early_bytes(mc_relay_item_t *items, int64_t n, double room, double *direct,
                               double *early)
{
    double r = 0, spared = 0;
    int sorted = 1;
    *direct = *early = 0;
    for (int64_t i = 1; i < n && sorted; i++)
        sorted = items[i].copies >= items[i - 1].copies;
    /* fewest copies first, stably; often all alike: then the sort is skipped */
    mc_status_t s = sorted ? MC_OK : mc_sort_by_key(items, n, sizeof *items, copies_key, NULL);
    if (s)
        return s;
    for (int64_t i = 0; i < n; i++) {
        double copies = (double)items[i].copies, all = items[i].bytes * copies;
        r += items[i].bytes;
        *direct += all;
        double take = all < room ? all : room;
        spared += take / copies;
        room -= take;
    }
    *early = r - spared;
    return MC_OK;
}

mc_status_t mc_bound_start(mc_relay_item_t *items, const int64_t *off, int64_t nhosts,
                           int64_t senders, double b_in, double b_out, double a_nic, double a_intra,
                           double *seconds)
{
    *seconds = 0;
    if (nhosts == 0 || b_in <= 0 || b_out <= 0)
        return MC_OK;
    double *c = mc_calloc((size_t)nhosts, sizeof *c);
    if (!c)
        return MC_ERR_NOMEM;
    double m = (double)senders * b_out, sum = 0, max_direct = 0;
    if (m > (double)nhosts * b_in)
        m = (double)nhosts * b_in;
    if (m <= 0) {
        free(c);
        return MC_OK;
    }
    for (int64_t h = 0; h < nhosts; h++) {
        double direct;
        mc_status_t s =
            early_bytes(items + off[h], off[h + 1] - off[h], b_in * a_intra, &direct, &c[h]);
        if (s) {
            free(c);
            return s;
        }
        sum += c[h];
        max_direct = direct > max_direct ? direct : max_direct;
    }
    mc_sort_desc(c, nhosts);
    double t_a = a_nic + max_direct / b_in;
    double t_b = a_nic + a_intra + (c[0] / b_in > sum / m ? c[0] / b_in : sum / m);
    double u = c[0] / b_in - a_nic, prefix = 0;
    for (int64_t j = 0; j < nhosts; j++) {
        prefix += c[j];
        double t = (prefix - m * a_nic) / ((double)(j + 1) * b_in);
        u = t > u ? t : u;
    }
    if (t_a < a_nic + a_intra)
        *seconds = t_a;
    else if (t_b < 2 * a_nic + a_intra)
        *seconds = t_b;
    else
        *seconds = 2 * a_nic + a_intra + (u > 0 ? u : 0);
    free(c);
    return MC_OK;
}
