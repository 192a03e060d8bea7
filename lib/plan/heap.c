/* Binary min-heap ordered by (key, tie). */
#include <stdlib.h>
#include <string.h>
#include "heap.h"
#include "util/util.h"

/* Puts item at hole i or above it. */
static void sift_up(mc_heap_t *h, int64_t i, mc_heap_item_t item)
{
    while (i > 0) {
        int64_t parent = (i - 1) / 2;
        if (!mc_heap_less(&item, &h->items[parent]))
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
    item.key += 0.0; /* -0.0 becomes 0.0 (mc_heap_less compares the bits) */
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
    int64_t c = 2 * i + 1;
    for (; c + 1 < h->n; c = 2 * i + 1) { /* two children: the lesser, chosen without a branch */
        c += mc_heap_less(&h->items[c + 1], &h->items[c]);
        h->items[i] = h->items[c];
        i = c;
    }
    if (c < h->n) { /* an only child */
        h->items[i] = h->items[c];
        i = c;
    }
    sift_up(h, i, last);
    return item;
}

/* Puts item into front[0..n) at its place (n < MC_QUEUE_FRONT). */
static void front_insert(mc_queue_t *q, int64_t n, mc_heap_item_t item)
{
    int64_t i = n;
    for (; i > 0 && mc_heap_less(&item, &q->front[i - 1]); i--)
        q->front[i] = q->front[i - 1];
    q->front[i] = item;
}

/* Adds item to the rest (the run if it comes in order, else the heap). */
static mc_status_t rest_push(mc_queue_t *q, mc_heap_item_t item)
{
    if (q->run_head == q->run_n)
        q->run_head = q->run_n = 0; /* the run is empty: start it again */
    if (q->run_n > 0 && mc_heap_less(&item, &q->run[q->run_n - 1]))
        return mc_heap_push(&q->rest, item);
    if (q->run_n == q->run_cap && q->run_head > 0) { /* reuse the popped head's room */
        memmove(q->run, q->run + q->run_head, (size_t)(q->run_n - q->run_head) * sizeof *q->run);
        q->run_n -= q->run_head;
        q->run_head = 0;
    }
    mc_status_t s =
        mc_grow((void **)&q->run, &q->run_cap, q->run_n, sizeof *q->run, 16, "a simulator queue");
    if (!s)
        q->run[q->run_n++] = item;
    return s;
}

/* Removes and returns the least item of the rest, which is not empty. */
static mc_heap_item_t rest_pop(mc_queue_t *q)
{
    if (q->run_head < q->run_n &&
        (q->rest.n == 0 || mc_heap_less(&q->run[q->run_head], &q->rest.items[0])))
        return q->run[q->run_head++];
    return mc_heap_pop(&q->rest);
}

mc_status_t mc_queue_push(mc_queue_t *q, mc_heap_item_t item)
{
    item.key += 0.0;                  /* -0.0 becomes 0.0 (mc_heap_less compares the bits) */
    if (q->nfront < MC_QUEUE_FRONT) { /* rest is empty */
        mc_status_t s = mc_grow((void **)&q->front, &q->front_cap, q->nfront, sizeof *q->front, 4,
                                "a simulator queue");
        if (!s)
            front_insert(q, q->nfront++, item);
        return s;
    }
    mc_heap_item_t last = q->front[MC_QUEUE_FRONT - 1];
    if (!mc_heap_less(&item, &last))
        return rest_push(q, item);
    mc_status_t s = rest_push(q, last); /* the front's last moves to the rest */
    if (!s)
        front_insert(q, MC_QUEUE_FRONT - 1, item);
    return s;
}

mc_heap_item_t mc_queue_remove(mc_queue_t *q, int64_t i)
{
    mc_heap_item_t item = q->front[i];
    for (; i + 1 < q->nfront; i++)
        q->front[i] = q->front[i + 1];
    q->nfront--;
    if (q->rest.n > 0 || q->run_head < q->run_n) /* the rest's least comes after the front */
        q->front[q->nfront++] = rest_pop(q);
    return item;
}

void mc_queue_clear(mc_queue_t *q)
{
    q->nfront = q->run_head = q->run_n = 0;
    q->rest.n = 0;
}

void mc_queue_free(mc_queue_t *q)
{
    mc_heap_free(&q->rest);
    free(q->front);
    free(q->run);
    q->front = q->run = NULL;
    q->nfront = q->front_cap = q->run_head = q->run_n = q->run_cap = 0;
}

void mc_heap_free(mc_heap_t *h)
{
    free(h->items);
    h->items = NULL;
    h->n = h->cap = 0;
}
