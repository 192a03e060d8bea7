/* A binary min-heap of (key, tie, a) items, used by the simulator's event queues, and a
 * queue that keeps its first items sorted apart (the simulator's port queues). */
#ifndef MC_HEAP_H
#define MC_HEAP_H

#include <stdint.h>
#include <string.h>
#include "meshcast/status.h"

typedef struct { /* 24 bytes: the simulator's pops move them level by level */
    double key;
    int64_t tie; /* breaks equal keys deterministically */
    int64_t a;
} mc_heap_item_t;

typedef struct {
    mc_heap_item_t *items;
    int64_t n, cap;
} mc_heap_t;

/* The heap's order: key, then tie. Keys are times and byte offsets, never negative nor NaN
 * (push adds 0.0, which turns -0.0 into 0.0), so their bits order as the keys do, and the
 * comparison runs without branches on the keys (the simulator's pops mispredicted them). */
static inline int mc_heap_less(const mc_heap_item_t *x, const mc_heap_item_t *y)
{
    uint64_t kx, ky;
    memcpy(&kx, &x->key, sizeof kx);
    memcpy(&ky, &y->key, sizeof ky);
    return (kx < ky) | ((kx == ky) & (x->tie < y->tie));
}

mc_status_t mc_heap_push(mc_heap_t *h, mc_heap_item_t item);
mc_heap_item_t mc_heap_pop(mc_heap_t *h); /* h->n must be > 0 */
/* Removes and returns the item at index i (< h->n). */
mc_heap_item_t mc_heap_remove(mc_heap_t *h, int64_t i);

void mc_heap_free(mc_heap_t *h);

/* A port's queue for the simulator's lookahead, which visits the first MC_QUEUE_FRONT items
 * in (key, tie) order: those are kept apart, sorted, in front[], and the rest (a sorted run
 * and a heap) all come after them (the rest is empty unless front is full). The lookahead then
 * reads an array instead of walking a heap, and a push or removal moves at most
 * MC_QUEUE_FRONT items besides one heap operation. */
#define MC_QUEUE_FRONT 16
typedef struct {
    mc_heap_item_t *front; /* grows to MC_QUEUE_FRONT items: most ports queue a few */
    int64_t nfront, front_cap;
    /* the rest: items that come in order (no less than the run's last) are appended to a
     * sorted run, the others go to a heap; the least of the rest is the run's head or the
     * heap's top. Edges whose first chunks queue at once come in order (offset 0, then edge
     * index), so a port that queues thousands pops them from the run, not the heap. */
    mc_heap_item_t *run;
    int64_t run_head, run_n, run_cap;
    mc_heap_t rest;
} mc_queue_t;

mc_status_t mc_queue_push(mc_queue_t *q, mc_heap_item_t item);
/* Removes and returns front[i] (i < q->nfront). */
mc_heap_item_t mc_queue_remove(mc_queue_t *q, int64_t i);
/* Empties q, keeping its memory. */
void mc_queue_clear(mc_queue_t *q);
void mc_queue_free(mc_queue_t *q);

#endif
