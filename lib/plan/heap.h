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
void mc_heap_free(mc_heap_t *h);

#endif
