/* Binary min-heap ordered by (key, tie). */
#include <stdlib.h>
#include "heap.h"
#include "util/util.h"

static int less(const mc_heap_item_t *x, const mc_heap_item_t *y)
{
    return x->key < y->key || (x->key == y->key && x->tie < y->tie);
}

/* Puts item at hole i or above it. */
static void sift_up(mc_heap_t *h, int64_t i, mc_heap_item_t item)
{
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!less(&item, &h->items[parent]))
            break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = item;
}

mc_status_t mc_heap_push(mc_heap_t *h, mc_heap_item_t item)
{
    mc_status_t s =
        mc_grow((void **)&h->items, &h->cap, h->n, sizeof *h->items, 64, "a simulator queue");
    if (s)
        return s;
    sift_up(h, h->n++, item);
    return MC_OK;
}

mc_heap_item_t mc_heap_pop(mc_heap_t *h)
{
    return mc_heap_remove(h, 0);
}

/* The hole moves down to a leaf along the lesser children, then the last item rises from
 * there (Floyd's): the last item mostly belongs near the bottom, so this compares about half
 * as often as sifting it down from i. */
mc_heap_item_t mc_heap_remove(mc_heap_t *h, int64_t i)
{
    mc_heap_item_t item = h->items[i], last = h->items[--h->n];
    if (i == h->n)
        return item;
    for (int64_t c = 2 * i + 1; c < h->n; c = 2 * i + 1) {
        if (c + 1 < h->n && less(&h->items[c + 1], &h->items[c]))
            c++;
        h->items[i] = h->items[c];
        i = c;
    }
    sift_up(h, i, last);
    return item;
}

void mc_heap_free(mc_heap_t *h)
{
    free(h->items);
    h->items = NULL;
    h->n = h->cap = 0;
}
