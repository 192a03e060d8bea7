/* Rail crossings rebalanced over the NICs (lib/plan/rails_rebalance.c), hand-worked on two
 * hosts of two devices with a NIC each (rails, 50 GB/s per NIC, 3 us + bytes / 450 GB/s a
 * hop over the host's links), two crossings of 128 KiB from host 0 to host 1, both needed on
 * rail 1:
 * - swapped: A (device 0's, rail 0) on NIC 1 after a hop to device 1; B (device 1's) on NIC 0
 *   with a hop before and after. B moves to NIC 1 (2.62 us there, no hop, against 2.62 us +
 *   two hops), then A to NIC 0 (a hop after, against NIC 1's 5.24 us and a hop before): two
 *   moves, the latest end 9.20 -> 5.91 us, the NIC loads moved with them;
 * - already right (each on the NIC it needs no hop on): nothing moves;
 * - the same swap with 32 MiB each: the bytes outweigh the hops, nothing moves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "meshcast/topology.h"
#include "plan/strategy_common.h"

static const char topo_text[] =
    "hosts 2\ndevices_per_host 2\nlink copy bandwidth=1600GB/s latency=2us\n"
    "link intra bandwidth=450GB/s latency=3us\nnic count=2 in=400Gbit/s out=400Gbit/s "
    "latency=10us\nnic-affinity map=0,1 rails\n";

/* Rebalances A and B of the given bytes placed on nic_a and nic_b; returns the moves and
 * their NICs, checking the loads follow them. */
static int64_t rebalance(double bytes, int nic_a, int nic_b, int *a_out, int *b_out)
{
    mc_topology_t *topo = NULL;
    assert_int_equal(mc_topology_parse(topo_text, "rr.topo", &topo), MC_OK);
    /* bit n: NIC n. A is on rail 0: NIC 1 needs a hop before, NIC 0 one after (the needer
     * is on rail 1); B is on rail 1: NIC 0 needs both hops, NIC 1 none. */
    mc_rail_crossing_t xs[2] = {
        {.from_host = 0,
         .to_host = 1,
         .bytes = bytes,
         .usable = 3,
         .hop_send = 2,
         .hop_recv = 1,
         .nic = nic_a},
        {.from_host = 0,
         .to_host = 1,
         .bytes = bytes,
         .usable = 3,
         .hop_send = 1,
         .hop_recv = 1,
         .nic = nic_b},
    };
    double send[4] = {0}, recv[4] = {0}; /* per port: host * 2 + NIC */
    send[nic_a] += bytes;
    recv[2 + nic_a] += bytes;
    send[nic_b] += bytes;
    recv[2 + nic_b] += bytes;
    int64_t moved = mc_rails_rebalance(topo, xs, 2, send, recv);
    *a_out = xs[0].nic;
    *b_out = xs[1].nic;
    for (int n = 0; n < 2; n++) {
        double on = bytes * ((xs[0].nic == n) + (xs[1].nic == n));
        assert_true(send[n] == on && recv[2 + n] == on);
        assert_true(send[2 + n] == 0 && recv[n] == 0);
    }
    mc_topology_destroy(topo);
    return moved;
}

static void test_swapped(void **state)
{
    (void)state;
    int a, b;
    assert_int_equal(rebalance(128 << 10, 1, 0, &a, &b), 2);
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
}

static void test_already_right(void **state)
{
    (void)state;
    int a, b;
    assert_int_equal(rebalance(128 << 10, 0, 1, &a, &b), 0);
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
}

static void test_bytes_outweigh_hops(void **state)
{
    (void)state;
    int a, b;
    assert_int_equal(rebalance(32 << 20, 1, 0, &a, &b), 0);
    assert_int_equal(a, 1);
    assert_int_equal(b, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_swapped),
        cmocka_unit_test(test_already_right),
        cmocka_unit_test(test_bytes_outweigh_hops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
