/* Radix heap of simulator events (events.h): its slow paths, a bucket's growth and the
 * refill of bucket 0. A refill moves the events of the least non-empty bucket to lower
 * buckets, each at most once per bucket, so an event moves a few times at most where a
 * binary heap's pops compared and moved items on each of its levels. */
#include <stdlib.h>
#include <string.h>
#include "events.h"
#include "util/util.h"

mc_status_t mc_events_grow(mc_events_t *q, int b)
{
    mc_event_bucket_t *bk = &q->bucket[b];
    return mc_grow((void **)&bk->items, &bk->cap, bk->n, sizeof *bk->items, 64,
                   "the simulator's event queue");
}

mc_status_t mc_events_refill(mc_events_t *q)
{
    mc_event_bucket_t *b0 = &q->bucket[0];
    b0->n = q->head = 0;
    int b = __builtin_ctzll(q->used) + 1;
    mc_event_bucket_t *bk = &q->bucket[b];
    uint64_t least = mc_events_bits(bk->items[0].t);
    for (int64_t i = 1; i < bk->n; i++) {
        uint64_t k = mc_events_bits(bk->items[i].t);
        least = k < least ? k : least;
    }
    q->last = least;
    q->used &= ~(1ull << (b - 1));
    /* in order, so that events of one time keep their push order */
    for (int64_t i = 0; i < bk->n; i++) {
        mc_status_t s = mc_events_append(
            q, mc_events_bucket_of(mc_events_bits(bk->items[i].t), least), bk->items[i]);
        if (s)
            return s;
    }
    bk->n = 0;
    return MC_OK;
}

void mc_events_clear(mc_events_t *q)
{
    for (int b = 0; b < 65; b++)
        q->bucket[b].n = 0;
    q->last = q->used = 0;
    q->head = q->n = 0;
}

void mc_events_free(mc_events_t *q)
{
    for (int b = 0; b < 65; b++)
        free(q->bucket[b].items);
    memset(q, 0, sizeof *q);
}
