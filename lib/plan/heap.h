/* A binary min-heap of (key, tie, a, b) items, used by the simulator's event queues. */
#ifndef MC_HEAP_H
#define MC_HEAP_H

#include <stdint.h>
#include "meshcast/status.h"

typedef struct {
    double key;
    int64_t tie; /* breaks equal keys deterministically */
    int64_t a, b;
} mc_heap_item_t;

typedef struct {
    mc_heap_item_t *items;
    int64_t n, cap;
} mc_heap_t;

mc_status_t mc_heap_push(mc_heap_t *h, mc_heap_item_t item);
mc_heap_item_t mc_heap_pop(mc_heap_t *h); /* h->n must be > 0 */
/* Removes and returns the item at index i (< h->n). */
mc_heap_item_t mc_heap_remove(mc_heap_t *h, int64_t i);

/* Visits the first MC_HEAP_PEEK items in (key, tie) order without removing them (the
 * simulator's lookahead): mc_heap_peek_next returns each one's index, then -1. The heap
 * must not change in between. */
#define MC_HEAP_PEEK 16
typedef struct {
    int64_t idx[MC_HEAP_PEEK + 2]; /* unvisited children of visited items, a heap */
    int n, visited;
    int64_t last; /* the item returned last, whose children are not in idx yet; -1 none */
} mc_heap_peek_t;
void mc_heap_peek_start(const mc_heap_t *h, mc_heap_peek_t *it);
int64_t mc_heap_peek_next(const mc_heap_t *h, mc_heap_peek_t *it);
void mc_heap_free(mc_heap_t *h);

#endif
