/* The simulator's event queue: a radix heap over the bits of the events' times. It pops
 * events in (time, push order), the order of mc_heap_t with push sequence numbers as ties,
 * provided no event is pushed earlier than the last one popped: the simulator's events are
 * never in the past (a transfer ends and arrives at or after the time it starts). */
#ifndef MC_EVENTS_H
#define MC_EVENTS_H

#include <stdint.h>
#include <string.h>
#include "meshcast/status.h"

typedef struct { /* 16 bytes: redistributions move them */
    double t;
    int64_t a;
} mc_event_t;

typedef struct {
    mc_event_t *items;
    int64_t n, cap;
} mc_event_bucket_t;

/* Bucket 0 holds the events at the last popped time (in push order, read from head); bucket
 * b > 0 those whose time's bits first differ from it at bit b - 1. Times are non-negative
 * doubles, whose bits order as they do, so bucket b's events all come before bucket b + 1's,
 * and every event of one time sits in one bucket, in push order. */
typedef struct {
    uint64_t last; /* bits of the last popped time */
    uint64_t used; /* bit b - 1: bucket b (1..64) holds events */
    int64_t head;  /* bucket 0's next event */
    int64_t n;     /* events queued */
    mc_event_bucket_t bucket[65];
} mc_events_t;

mc_status_t mc_events_grow(mc_events_t *q, int b); /* bucket b is full: grows it */
mc_status_t mc_events_refill(mc_events_t *q);      /* bucket 0 is spent: refills it */

/* Push and pop are inline, their slow paths not: the simulator pops and pushes an event or
 * two per chunk transfer (inline, the slowest rails plans take 3% fewer instructions). */
static inline uint64_t mc_events_bits(double t)
{
    uint64_t k;
    memcpy(&k, &t, sizeof k);
    return k;
}

/* Which bucket time bits k belong to, relative to the last popped time's. */
static inline int mc_events_bucket_of(uint64_t k, uint64_t last)
{
    return k == last ? 0 : 64 - __builtin_clzll(k ^ last);
}

static inline mc_status_t mc_events_append(mc_events_t *q, int b, mc_event_t ev)
{
    mc_event_bucket_t *bk = &q->bucket[b];
    mc_status_t s;
    if (bk->n == bk->cap && (s = mc_events_grow(q, b)))
        return s;
    bk->items[bk->n++] = ev;
    if (b > 0)
        q->used |= 1ull << (b - 1);
    return MC_OK;
}

/* t must be no earlier than the last popped event's time (and not NaN). */
static inline mc_status_t mc_events_push(mc_events_t *q, double t, int64_t a)
{
    t += 0.0; /* -0.0 becomes 0.0: the two are one time */
    mc_status_t s =
        mc_events_append(q, mc_events_bucket_of(mc_events_bits(t), q->last), (mc_event_t){t, a});
    if (!s)
        q->n++;
    return s;
}

/* Removes the earliest event (the first pushed among equal times) into *ev; q->n > 0. */
static inline mc_status_t mc_events_pop(mc_events_t *q, mc_event_t *ev)
{
    mc_status_t s;
    if (q->head == q->bucket[0].n && (s = mc_events_refill(q)))
        return s;
    *ev = q->bucket[0].items[q->head++];
    q->n--;
    return MC_OK;
}
/* Empties q, keeping its buckets' memory. */
void mc_events_clear(mc_events_t *q);
void mc_events_free(mc_events_t *q);

#endif
