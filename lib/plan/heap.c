/* Binary min-heap ordered by (key, tie). */
#include <stdlib.h>
#include "heap.h"
#include "util/util.h"

static int less(const mc_heap_item_t *x, const mc_heap_item_t *y)
{
    return x->key < y->key || (x->key == y->key && x->tie < y->tie);
}

mc_status_t mc_heap_push(mc_heap_t *h, mc_heap_item_t item)
{
    mc_status_t s =
        mc_grow((void **)&h->items, &h->cap, h->n, sizeof *h->items, 64, "a simulator queue");
    if (s)
        return s;
    int64_t i = h->n++;
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!less(&item, &h->items[parent]))
            break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = item;
    return MC_OK;
}

mc_heap_item_t mc_heap_pop(mc_heap_t *h)
{
    mc_heap_item_t top = h->items[0], last = h->items[--h->n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && less(&h->items[c + 1], &h->items[c]))
            c++;
        if (!less(&h->items[c], &last))
            break;
        h->items[i] = h->items[c];
        i = c;
    }
    if (h->n > 0)
        h->items[i] = last;
    return top;
}

void mc_heap_free(mc_heap_t *h)
{
    free(h->items);
    h->items = NULL;
    h->n = h->cap = 0;
}
