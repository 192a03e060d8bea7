/* Radix heap of simulator events (events.h). A pop moves the events of the least non-empty
 * bucket to lower buckets, each at most once per bucket, so an event moves a few times at
 * most where a binary heap's pops compared and moved items on each of its levels. */
#include <stdlib.h>
#include <string.h>
#include "events.h"
#include "util/util.h"

static uint64_t bits_of(double t)
{
    uint64_t k;
    memcpy(&k, &t, sizeof k);
    return k;
}

/* Which bucket time bits k belong to, relative to the last popped time's. */
static int bucket_of(uint64_t k, uint64_t last)
{
    return k == last ? 0 : 64 - __builtin_clzll(k ^ last);
}

static mc_status_t append(mc_events_t *q, int b, mc_event_t ev)
{
    mc_event_bucket_t *bk = &q->bucket[b];
    mc_status_t s;
    if (bk->n == bk->cap && (s = mc_grow((void **)&bk->items, &bk->cap, bk->n, sizeof *bk->items,
                                         64, "the simulator's event queue")))
        return s;
    bk->items[bk->n++] = ev;
    if (b > 0)
        q->used |= 1ull << (b - 1);
    return MC_OK;
}

mc_status_t mc_events_push(mc_events_t *q, double t, int64_t a)
{
    t += 0.0; /* -0.0 becomes 0.0: the two are one time */
    mc_status_t s = append(q, bucket_of(bits_of(t), q->last), (mc_event_t){t, a});
    if (!s)
        q->n++;
    return s;
}

mc_status_t mc_events_pop(mc_events_t *q, mc_event_t *ev)
{
    mc_event_bucket_t *b0 = &q->bucket[0];
    if (q->head == b0->n) { /* bucket 0 is spent: the least bucket's events move down */
        b0->n = q->head = 0;
        int b = __builtin_ctzll(q->used) + 1;
        mc_event_bucket_t *bk = &q->bucket[b];
        uint64_t least = bits_of(bk->items[0].t);
        for (int64_t i = 1; i < bk->n; i++) {
            uint64_t k = bits_of(bk->items[i].t);
            least = k < least ? k : least;
        }
        q->last = least;
        q->used &= ~(1ull << (b - 1));
        /* in order, so that events of one time keep their push order */
        for (int64_t i = 0; i < bk->n; i++) {
            mc_status_t s = append(q, bucket_of(bits_of(bk->items[i].t), least), bk->items[i]);
            if (s)
                return s;
        }
        bk->n = 0;
    }
    *ev = b0->items[q->head++];
    q->n--;
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
