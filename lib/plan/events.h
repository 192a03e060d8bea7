/* The simulator's event queue: a radix heap over the bits of the events' times. It pops
 * events in (time, push order), the order of mc_heap_t with push sequence numbers as ties,
 * provided no event is pushed earlier than the last one popped: the simulator's events are
 * never in the past (a transfer ends and arrives at or after the time it starts). */
#ifndef MC_EVENTS_H
#define MC_EVENTS_H

#include <stdint.h>
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

/* t must be no earlier than the last popped event's time (and not NaN). */
mc_status_t mc_events_push(mc_events_t *q, double t, int64_t a);
/* Removes the earliest event (the first pushed among equal times) into *ev; q->n > 0. */
mc_status_t mc_events_pop(mc_events_t *q, mc_event_t *ev);
/* Empties q, keeping its buckets' memory. */
void mc_events_clear(mc_events_t *q);
void mc_events_free(mc_events_t *q);

#endif
