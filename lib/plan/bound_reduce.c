/* The message-count lemma behind the reduction bound (docs/planning.md#the-reduction-bound).
 *
 * One element, k addends; node i (a device, or a host) starts knowing a set A_i of addend
 * indices; a message carries one value, any combination of what its sender knows; every
 * needer must end up knowing all k. This is one-way gossip. Let X be the first node to know
 * all k (none knows all at the start): the messages in X's causal past connect nodes whose
 * sets cover the k indices, at least c = ceil(k / max|A_i|) nodes (one more if X knows
 * nothing), so there are at least c - 1 of them; every other incomplete needer is still
 * incomplete when X completes, so it receives one more message afterwards. Hence
 *   messages >= c - 2 + |I|  if some incomplete needer knows an addend (X may be it),
 *               c - 1 + |I|  otherwise,
 * with I the incomplete needers; when some node knows all k, >= |I|. An all-reduce over n
 * devices gives 2(n-1), a reduce-scatter n-1 per element. */
#include "plan_internal.h"

int64_t mc_reduce_min_messages(int64_t k, int64_t max_known, int64_t incomplete_needers,
                               int needer_knows_some)
{
    if (incomplete_needers == 0)
        return 0;
    if (max_known >= k)
        return incomplete_needers;
    int64_t c = max_known > 0 ? (k + max_known - 1) / max_known : k + 1;
    return c - (needer_knows_some ? 2 : 1) + incomplete_needers;
}
