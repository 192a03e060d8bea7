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

/* The heap's order: key, then tie. */
static inline int mc_heap_less(const mc_heap_item_t *x, const mc_heap_item_t *y)
{
    return x->key < y->key || (x->key == y->key && x->tie < y->tie);
}

mc_status_t mc_heap_push(mc_heap_t *h, mc_heap_item_t item);
mc_heap_item_t mc_heap_pop(mc_heap_t *h); /* h->n must be > 0 */
/* Removes and returns the item at index i (< h->n). */
mc_heap_item_t mc_heap_remove(mc_heap_t *h, int64_t i);

/* Visits the first MC_HEAP_PEEK items in (key, tie) order without removing them (the
 * simulator's lookahead): mc_heap_peek_next returns each one's index, then -1. The heap
 * must not change in between. The frontier (the unvisited children of visited items) is a
 * small heap of copies of their keys, inline: the lookahead runs once per simulated chunk. */
#define MC_HEAP_PEEK 16
typedef struct {
    double key;
    int64_t tie, idx;
} mc_heap_peek_entry_t;
typedef struct {
    mc_heap_peek_entry_t f[MC_HEAP_PEEK + 2];
    int n, visited;
    int64_t last; /* the item returned last, whose children are not in f yet; -1 none */
} mc_heap_peek_t;

static inline int mc_heap_peek_less(const mc_heap_peek_entry_t *x, const mc_heap_peek_entry_t *y)
{
    return x->key < y->key || (x->key == y->key && x->tie < y->tie);
}

static inline void mc_heap_peek_push(const mc_heap_t *h, mc_heap_peek_t *it, int64_t idx)
{
    mc_heap_peek_entry_t e = {h->items[idx].key, h->items[idx].tie, idx};
    int i = it->n++;
    for (; i > 0 && mc_heap_peek_less(&e, &it->f[(i - 1) / 2]); i = (i - 1) / 2)
        it->f[i] = it->f[(i - 1) / 2];
    it->f[i] = e;
}

static inline void mc_heap_peek_start(const mc_heap_t *h, mc_heap_peek_t *it)
{
    it->n = 0;
    it->visited = 0;
    it->last = -1;
    if (h->n > 0)
        mc_heap_peek_push(h, it, 0);
}

static inline int64_t mc_heap_peek_next(const mc_heap_t *h, mc_heap_peek_t *it)
{
    if (it->visited == MC_HEAP_PEEK)
        return -1;
    /* the last item's children join the frontier only now: most lookaheads stop at the
     * first item */
    for (int64_t c = 2 * it->last + 1; it->last >= 0 && c <= 2 * it->last + 2 && c < h->n; c++)
        mc_heap_peek_push(h, it, c);
    if (it->n == 0)
        return -1;
    int64_t top = it->f[0].idx;
    mc_heap_peek_entry_t e = it->f[--it->n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= it->n)
            break;
        if (c + 1 < it->n && mc_heap_peek_less(&it->f[c + 1], &it->f[c]))
            c++;
        if (!mc_heap_peek_less(&it->f[c], &e))
            break;
        it->f[i] = it->f[c];
        i = c;
    }
    if (it->n > 0)
        it->f[i] = e;
    it->visited++;
    it->last = top;
    return top;
}
void mc_heap_free(mc_heap_t *h);

#endif
