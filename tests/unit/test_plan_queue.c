/* The simulator's queues (lib/plan/heap.c) against brute force, on seeded random operations:
 * - mc_heap_t pops its items in (key, tie) order, the keys compared as doubles (the heap
 *   compares their bits): -0.0 and 0.0 are one key, subnormals and infinity in their place;
 * - mc_queue_t's front always holds the first min(MC_QUEUE_FRONT, n) items in (key, tie)
 *   order, sorted, so the simulator's lookahead visits what it visited when it walked a
 *   heap: after every push and every removal of a front item, the front equals the sorted
 *   prefix of a plain array of the same items.
 * - mc_events_t (lib/plan/events.c, the event queue's radix heap) pops its events in (time,
 *   push order), as mc_heap_t does with push sequence numbers as ties, when no event is pushed
 *   earlier than the last one popped (the simulator's rule), times of either zero, subnormal,
 *   far apart or infinite among them.
 * Keys repeat often (as the simulator's offsets do) so that ties decide; on some seeds they
 * mostly come in order, as the simulator's first chunks do (the queue's sorted run). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "plan/events.h"
#include "plan/heap.h"

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* The oracle's order compares the keys as doubles (mc_heap_less compares their bits). */
static int cmp_item(const void *a, const void *b)
{
    const mc_heap_item_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->tie < y->tie ? -1 : x->tie > y->tie ? 1 : 0;
}

/* A random item with a unique tie (as the simulator's: sequence numbers, edge ids). */
static mc_heap_item_t item(uint64_t *rng, int64_t tie, int keys)
{
    return (mc_heap_item_t){(double)(next(rng) % (uint64_t)keys), tie, tie};
}

static void test_heap_pops_in_order(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        uint64_t rng = seed;
        mc_heap_t h = {0};
        mc_heap_item_t all[600];
        int n = 0, tie = 0;
        for (int op = 0; op < 2000; op++) {
            if (n == 0 || (n < 600 && next(&rng) % 3 != 0)) {
                all[n] = item(&rng, tie++, 1 + (int)(seed % 7) * 10);
                assert_int_equal(mc_heap_push(&h, all[n]), MC_OK);
                n++;
                continue;
            }
            qsort(all, (size_t)n, sizeof *all, cmp_item);
            mc_heap_item_t got = mc_heap_pop(&h);
            assert_int_equal(got.tie, all[0].tie);
            memmove(all, all + 1, (size_t)(n - 1) * sizeof *all);
            n--;
        }
        mc_heap_free(&h);
    }
}

/* Keys the simulator can make: zero of either sign (equal keys, so the tie decides), the
 * least subnormal, fractions, the largest double and infinity, pushed in a scrambled order. */
static void test_heap_key_order(void **state)
{
    (void)state;
    const double keys[] = {INFINITY, 0.0, 1.5e-6, -0.0, 5e-324, 1e300, 1.5e-6, 0.0, 2.5e-9, -0.0};
    const int64_t want[] = {1, 3, 7, 9, 4, 8, 2, 6, 5, 0}; /* ties in push order */
    mc_heap_t h = {0};
    mc_queue_t q = {0};
    for (int64_t i = 0; i < 10; i++) {
        assert_int_equal(mc_heap_push(&h, (mc_heap_item_t){keys[i], i, 0}), MC_OK);
        assert_int_equal(mc_queue_push(&q, (mc_heap_item_t){keys[i], i, 0}), MC_OK);
    }
    for (int i = 0; i < 10; i++) {
        assert_int_equal(mc_heap_pop(&h).tie, want[i]);
        assert_int_equal(mc_queue_remove(&q, 0).tie, want[i]);
    }
    mc_heap_free(&h);
    mc_queue_free(&q);
}

static void test_queue_front_is_sorted_prefix(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        uint64_t rng = seed * 977;
        mc_queue_t q = {0};
        mc_heap_item_t all[400];
        int n = 0, tie = 0;
        for (int op = 0; op < 3000; op++) {
            if (n == 0 || (n < 400 && next(&rng) % 2 == 0)) {
                all[n++] = item(&rng, tie, 1 + (int)(seed % 5) * 8);
                if (seed % 3 == 0 && next(&rng) % 4 != 0) /* mostly in order: the run */
                    all[n - 1].key = (double)(op / 8);
                assert_int_equal(mc_queue_push(&q, all[n - 1]), MC_OK);
                tie++;
            } else { /* the lookahead takes any of the front items */
                int i = (int)(next(&rng) % (uint64_t)q.nfront);
                mc_heap_item_t got = mc_queue_remove(&q, i);
                int k = 0;
                while (all[k].tie != got.tie)
                    k++;
                all[k] = all[--n];
            }
            qsort(all, (size_t)n, sizeof *all, cmp_item);
            int want = n < MC_QUEUE_FRONT ? n : MC_QUEUE_FRONT;
            assert_int_equal(q.nfront, want);
            assert_int_equal(q.nfront + q.rest.n + (q.run_n - q.run_head), n);
            for (int j = 0; j < want; j++)
                assert_int_equal(q.front[j].tie, all[j].tie);
        }
        mc_queue_free(&q);
    }
}

/* A time at or after now: often now itself (events at once, so push order decides), often a
 * repeat of a few steps ahead, sometimes far ahead, subnormal or infinite. */
static double later(uint64_t *rng, double now)
{
    static const double steps[] = {0.0, 0.0, 1e-9, 2.5e-9, 1e-6, 3e-6, 1e-3, 5e-324};
    uint64_t r = next(rng) % 64;
    if (r == 0)
        return INFINITY;
    if (r == 1)
        return now + 1e3;
    return now + steps[r % 8] * (double)(1 + next(rng) % 3);
}

static void test_events_pop_like_heap(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        uint64_t rng = seed * 7919;
        mc_events_t q = {0};
        mc_heap_t h = {0}; /* the oracle: (time, push sequence) */
        double now = seed % 2 ? 0.0 : 1.5e-5;
        int64_t seq = 0;
        for (int op = 0; op < 4000; op++) {
            if (h.n == 0 || (h.n < 500 && next(&rng) % 2 == 0)) {
                double t =
                    h.n == 0 && op % 7 == 0 ? -0.0 * (double)(now == 0) + now : later(&rng, now);
                if (isinf(now))
                    t = now;
                assert_int_equal(mc_events_push(&q, t, seq), MC_OK);
                assert_int_equal(mc_heap_push(&h, (mc_heap_item_t){t, seq, seq}), MC_OK);
                seq++;
            } else {
                mc_event_t ev;
                mc_heap_item_t want = mc_heap_pop(&h);
                assert_int_equal(mc_events_pop(&q, &ev), MC_OK);
                assert_int_equal(ev.a, want.a);
                assert_true(ev.t == want.key);
                now = ev.t;
            }
            assert_int_equal(q.n, h.n);
        }
        mc_events_free(&q);
        mc_heap_free(&h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap_pops_in_order),
        cmocka_unit_test(test_heap_key_order),
        cmocka_unit_test(test_queue_front_is_sorted_prefix),
        cmocka_unit_test(test_events_pop_like_heap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
