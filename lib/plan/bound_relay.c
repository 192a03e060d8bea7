/* The relay (latency) term of the lower bound (docs/planning.md, "Latency terms").
 *
 * Bytes reach m places (hosts, or devices of one host) through one port of rate B. A copy
 * sent straight through the port arrives at least alpha1 after it left; a copy that is
 * relayed (sent once, then forwarded) arrives at least alpha1 + alpha2 after the port sent
 * the byte. By T, the port sent at most B·(T − alpha1) bytes, and the distinct bytes that
 * are relayed left it by T − alpha1 − alpha2 = tau, so at most B·tau of them. A byte that
 * is not relayed goes through the port once per copy. So if T < alpha1 + alpha2 every copy
 * goes straight: T >= D/B + alpha1 (D: bytes times copies). Otherwise the y <= B·tau
 * relayed bytes save most when they are the ones with most copies: T >= alpha1 + alpha2 +
 * y_min / B, y_min the fewest such bytes that leave at most B·alpha2 bytes of direct copies. */
#include "plan_internal.h"
#include "util/util.h"

static uint64_t fewer_copies(const void *item, const void *ctx)
{
    (void)ctx;
    return UINT64_MAX - (uint64_t)((const mc_relay_item_t *)item)->copies;
}

mc_status_t mc_bound_relay(mc_relay_item_t *items, int64_t n, double bw, double alpha1,
                           double alpha2, double *seconds)
{
    double direct = 0, room = bw * alpha2, relayed = 0;
    *seconds = 0;
    for (int64_t i = 0; i < n; i++)
        direct += items[i].bytes * (double)items[i].copies;
    if (direct <= 0)
        return MC_OK;
    if (direct <= room) {
        *seconds = direct / bw + alpha1;
        return MC_OK;
    }
    int sorted = 1;
    for (int64_t i = 1; i < n && sorted; i++)
        sorted = items[i].copies <= items[i - 1].copies;
    mc_status_t s = sorted ? MC_OK : mc_sort_by_key(items, n, sizeof *items, fewer_copies, NULL);
    if (s)
        return s;
    double left = direct; /* direct copies if the bytes so far are relayed */
    for (int64_t i = 0; i < n && left > room; i++) {
        double all = items[i].bytes * (double)items[i].copies;
        if (left - all <= room) {
            relayed += (left - room) / (double)items[i].copies;
            left = room;
        } else {
            relayed += items[i].bytes;
            left -= all;
        }
    }
    double straight = direct / bw + alpha1, relay = alpha1 + alpha2 + relayed / bw;
    *seconds = straight < relay ? straight : relay;
    return MC_OK;
}
