/* The lower bound (issue 2, acceptance 2). (1) mc_bound_closure (parametric min-cut) equals
 * mc_bound_closure_bruteforce on random instances: up to 12 hosts, random holder host
 * subsets, sizes from bytes to terabytes, unequal per-host bandwidths. (2) The whole bound of
 * mc_lower_bound equals a brute-force recomputation of the formula in bound.c's header
 * from the layouts' tiles element by element, the host-set term by enumerating every
 * subset of hosts, on random small layout cases (random_case.h). Seeds printed on failure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "plan/plan_internal.h"
#include "random_case.h"

static int close_rel(double a, double b, double rel)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= rel * m;
}

/* ---- (1) closure vs brute force ---- */

static double rand_size(rc_rng_t *r)
{
    switch (rc_range(r, 0, 4)) {
    case 0:
        return 0; /* empty group */
    case 1:
        return (double)rc_range(r, 1, 100);
    case 2:
        return (double)rc_range(r, 1, 1 << 30);
    case 3:
        return ldexp(rc_unit(r) + 0.01, (int)rc_range(r, 10, 42));
    default:
        return (double)rc_range(r, 1, 4096) * 4;
    }
}

static double rand_bw(rc_rng_t *r, int mode)
{
    switch (mode) {
    case 0:
        return 1.25e9; /* equal */
    case 1:
        return 1e9 * (double)rc_range(r, 1, 8); /* a few levels */
    default:
        return ldexp(rc_unit(r) + 0.001, (int)rc_range(r, 20, 40)); /* very unequal */
    }
}

static void test_closure_vs_bruteforce(void **state)
{
    (void)state;
    int checked = 0, nontrivial = 0;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        rc_rng_t rng = {seed * 7919};
        rc_rng_t *r = &rng;
        int64_t nhosts = rc_range(r, 1, 12), ngroups = rc_range(r, 0, 40);
        double size[40], bout[12];
        int64_t off[41], hosts[40 * 12];
        int bwmode = (int)rc_range(r, 0, 2);
        for (int64_t h = 0; h < nhosts; h++)
            bout[h] = rand_bw(r, bwmode);
        off[0] = 0;
        for (int64_t g = 0; g < ngroups; g++) {
            size[g] = rand_size(r);
            /* holder hosts: a random non-empty subset, mostly small, sorted */
            int64_t n = 0, want = rc_range(r, 0, 3) ? rc_range(r, 1, 2) : rc_range(r, 1, nhosts);
            char in[12] = {0};
            while (n < want && n < nhosts) {
                int64_t h = rc_range(r, 0, nhosts - 1);
                if (!in[h]) {
                    in[h] = 1;
                    n++;
                }
            }
            off[g + 1] = off[g];
            for (int64_t h = 0; h < nhosts; h++)
                if (in[h])
                    hosts[off[g + 1]++] = h;
        }
        double best = -1;
        mc_status_t s = mc_bound_closure(ngroups, size, off, hosts, nhosts, bout, &best);
        if (s != MC_OK)
            fail_msg("seed %llu: mc_bound_closure = %d: %s", (unsigned long long)seed, s,
                     mc_last_error());
        double brute = mc_bound_closure_bruteforce(ngroups, size, off, hosts, nhosts, bout);
        if (!close_rel(best, brute, 1e-9))
            fail_msg("seed %llu (%lld hosts, %lld groups, bandwidth mode %d): closure %.17g, "
                     "brute force %.17g",
                     (unsigned long long)seed, (long long)nhosts, (long long)ngroups, bwmode, best,
                     brute);
        /* the brute force itself, recomputed here */
        double mine = 0;
        for (uint32_t mask = 1; mask < (1u << nhosts); mask++) {
            double e = 0, b = 0;
            for (int64_t h = 0; h < nhosts; h++)
                if (mask >> h & 1)
                    b += bout[h];
            for (int64_t g = 0; g < ngroups; g++) {
                int all = 1;
                for (int64_t i = off[g]; i < off[g + 1]; i++)
                    all &= (int)(mask >> hosts[i] & 1);
                if (all)
                    e += size[g];
            }
            if (e / b > mine)
                mine = e / b;
        }
        if (!close_rel(mine, brute, 1e-12))
            fail_msg("seed %llu: mc_bound_closure_bruteforce %.17g, test's enumeration %.17g",
                     (unsigned long long)seed, brute, mine);
        checked++;
        nontrivial += nhosts >= 4 && ngroups >= 4;
    }
    assert_true(checked >= 300 && nontrivial >= 300);
}

/* Hand-made closure instances. */
/* Fewest one-way messages (a message brings the receiver everything its sender knows) until
 * every needer knows all k addends, by breadth-first search over who knows what: n <= 5
 * nodes, k <= 4 addends, so at most 2^20 states. */
static int64_t gossip_bruteforce(int n, int k, const unsigned *know, unsigned needs)
{
    const unsigned full = (1u << k) - 1, nstates = 1u << (n * k);
    unsigned char *seen = calloc(nstates, 1);
    uint32_t *queue = malloc(nstates * sizeof *queue);
    uint32_t start = 0, head = 0, tail = 0;
    assert_non_null(seen);
    assert_non_null(queue);
    for (int i = 0; i < n; i++)
        start |= know[i] << (i * k);
    queue[tail++] = start;
    seen[start] = 1;
    int64_t depth = 0, found = -1;
    while (head < tail && found < 0) {
        uint32_t level_end = tail;
        for (; head < level_end && found < 0; head++) {
            uint32_t st = queue[head];
            int done = 1;
            for (int i = 0; i < n && done; i++)
                done = !(needs >> i & 1) || ((st >> (i * k)) & full) == full;
            if (done) {
                found = depth;
                break;
            }
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    uint32_t next = st | (((st >> (i * k)) & full) << (j * k));
                    if (i != j && !seen[next]) {
                        seen[next] = 1;
                        queue[tail++] = next;
                    }
                }
        }
        depth++;
    }
    free(seen);
    free(queue);
    return found;
}

/* mc_reduce_min_messages from the knowledge sets, as the bound applies it. */
static int64_t gossip_formula(int n, int k, const unsigned *know, unsigned needs)
{
    int64_t max_known = 0, incomplete = 0;
    int knows_some = 0;
    for (int i = 0; i < n; i++) {
        int64_t c = __builtin_popcount(know[i]);
        max_known = c > max_known ? c : max_known;
        if ((needs >> i & 1) && c < k) {
            incomplete++;
            knows_some |= c > 0;
        }
    }
    return mc_reduce_min_messages(k, max_known, incomplete, knows_some);
}

/* The reduction bound's message-count lemma: never above the true minimum on random small
 * cases, and equal to it on the textbook ones (all-reduce 2(n-1), reduce-scatter n-1,
 * reduce to a device without an addend k, broadcast of a complete node). */
static void test_reduce_messages_vs_bruteforce(void **state)
{
    (void)state;
    for (int n = 2; n <= 4; n++) {
        unsigned one[4], lacking[5] = {0}, full = (1u << n) - 1, bcast[5] = {full};
        for (int i = 0; i < n; i++)
            one[i] = lacking[i] = 1u << i;
        /* all-reduce, reduce-scatter (one element), reduce to node n (no addend) */
        assert_int_equal(gossip_bruteforce(n, n, one, full), 2 * (n - 1));
        assert_int_equal(gossip_formula(n, n, one, full), 2 * (n - 1));
        assert_int_equal(gossip_bruteforce(n, n, one, 1), n - 1);
        assert_int_equal(gossip_formula(n, n, one, 1), n - 1);
        assert_int_equal(gossip_bruteforce(n + 1, n, lacking, 1u << n), n);
        assert_int_equal(gossip_formula(n + 1, n, lacking, 1u << n), n);
        assert_int_equal(gossip_bruteforce(n + 1, n, bcast, (2u << n) - 2), n);
        assert_int_equal(gossip_formula(n + 1, n, bcast, (2u << n) - 2), n);
    }
    rc_rng_t rng = {12345};
    int tight = 0;
    for (int it = 0; it < 400; it++) {
        int n = (int)rc_range(&rng, 2, 5), k = (int)rc_range(&rng, 1, 4);
        unsigned know[5] = {0}, covered = 0, needs = 0;
        for (int i = 0; i < n; i++) {
            know[i] = (unsigned)rc_range(&rng, 0, (1 << k) - 1);
            if (rc_range(&rng, 0, 2) == 0) /* devices: one addend each */
                know[i] &= 1u << rc_range(&rng, 0, k - 1);
            covered |= know[i];
            needs |= (unsigned)rc_range(&rng, 0, 1) << i;
        }
        know[0] |= ((1u << k) - 1) & ~covered; /* every addend somewhere */
        if (!needs)
            needs = 1u << rc_range(&rng, 0, n - 1);
        int64_t exact = gossip_bruteforce(n, k, know, needs),
                bound = gossip_formula(n, k, know, needs);
        if (bound > exact)
            fail_msg("case %d: bound %lld > fewest messages %lld", it, (long long)bound,
                     (long long)exact);
        tight += bound == exact;
    }
    printf("reduction message bound: exact on %d of 400 random cases, never above\n", tight);
}

static void test_closure_hand(void **state)
{
    (void)state;
    double best = -1;
    /* no groups: 0 */
    int64_t off0[1] = {0};
    double bw2[2] = {1, 1};
    assert_int_equal(mc_bound_closure(0, NULL, off0, NULL, 2, bw2, &best), MC_OK);
    assert_true(best == 0);
    /* two single-host groups: 6 on host 0 (B 2), 1 on host 1 (B 1): X={0} gives 3 */
    double size[2] = {6, 1}, bw[2] = {2, 1};
    int64_t off[3] = {0, 1, 2}, hosts[2] = {0, 1};
    assert_int_equal(mc_bound_closure(2, size, off, hosts, 2, bw, &best), MC_OK);
    assert_true(close_rel(best, 3, 1e-12));
    /* a group held on both hosts only counts for X = {0, 1}: (6 + 1 + 9) / 3 */
    double size3[3] = {6, 1, 9};
    int64_t off3[4] = {0, 1, 2, 4}, hosts3[4] = {0, 1, 0, 1};
    assert_int_equal(mc_bound_closure(3, size3, off3, hosts3, 2, bw, &best), MC_OK);
    assert_true(close_rel(best, 16.0 / 3, 1e-12));
    assert_true(
        close_rel(mc_bound_closure_bruteforce(3, size3, off3, hosts3, 2, bw), 16.0 / 3, 1e-12));
}

/* ---- (2) the whole bound, recomputed from tiles ---- */

#define MAXH 14

#define MAXDEV (2 * RC_MAX_MESH + 64)

/* The relay term from a histogram: bytes[c] bytes need c copies (c < n) through one port:
 * min(D/bw + a1, a1 + a2 + y/bw), y the bytes with the most copies that must be relayed so
 * that at most bw·a2 bytes of straight copies remain (lib/plan/bound_relay.c). */
static double relay_hist(const double *bytes, int n, double bw, double a1, double a2)
{
    double direct = 0, room = bw * a2, y = 0;
    for (int c = 1; c < n; c++)
        direct += bytes[c] * c;
    if (direct <= 0)
        return 0;
    if (direct <= room)
        return direct / bw + a1;
    double left = direct;
    for (int c = n - 1; c >= 1 && left > room; c--) {
        double take = fmin(bytes[c], (left - room) / c);
        y += take;
        left -= take * c;
    }
    return fmin(direct / bw + a1, a1 + a2 + y / bw);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* The slow-start term from per-host histograms: host_k[h][k] bytes h lacks that k of its
 * devices need; `senders` hosts hold what others lack (lib/plan/bound_start.c). */
static double start_hist(double (*host_k)[MAXDEV + 1], int H, int senders, double b_in,
                         double b_out, double a, double ai)
{
    double c[MAXH], sum = 0, max_direct = 0;
    int n = 0;
    for (int h = 0; h < H; h++) {
        double r = 0, direct = 0, spared = 0, room = b_in * ai;
        for (int k = 1; k <= MAXDEV; k++) {
            double take = fmin(host_k[h][k] * k, room);
            r += host_k[h][k];
            direct += host_k[h][k] * k;
            spared += take / k;
            room -= take;
        }
        if (r > 0) {
            c[n++] = r - spared;
            sum += r - spared;
            max_direct = fmax(max_direct, direct);
        }
    }
    if (n == 0)
        return 0;
    double m = fmin(senders * b_out, n * b_in), prefix = 0;
    qsort(c, (size_t)n, sizeof *c, cmp_desc);
    double t_a = a + max_direct / b_in, t_b = a + ai + fmax(c[0] / b_in, sum / m);
    double u = c[0] / b_in - a;
    for (int j = 0; j < n; j++) {
        prefix += c[j];
        u = fmax(u, (prefix - m * a) / ((j + 1) * b_in));
    }
    if (t_a < a + ai)
        return t_a;
    return t_b < 2 * a + ai ? t_b : 2 * a + ai + fmax(u, 0);
}

/* The least T with bytes <= b1·(T - a1)+ + b2·(T - a2)+, by bisection (the two-path term,
 * computed independently of bound_paths.c's closed form). */
static double paths_bisect(double bytes, double b1, double a1, double b2, double a2)
{
    double lo = 0, hi = fmax(a1, a2) + bytes / fmax(b1, b2) + 1;
    for (int i = 0; i < 200; i++) {
        double t = (lo + hi) / 2;
        if (b1 * fmax(0, t - a1) + b2 * fmax(0, t - a2) >= bytes)
            hi = t;
        else
            lo = t;
    }
    return hi;
}

/* The NIC-loop term by bisection: the least T with Σ_d (R_d − x)⁺ + Σ_h max_{d in h}
 * (O_d − x)⁺ ≤ nic_in·(T − a_nic)⁺, x = b·(T − a)⁺ (bound_loops.c's); 0 without host-local
 * bytes. */
static double loops_bisect(const mc_topology_t *topo, const double *r, const double *o,
                           int64_t ndev, int H, double b, double a, double nic_in, double a_nic)
{
    double most[MAXH] = {0}, top = 0;
    int any = 0;
    for (int64_t d = 0; d < ndev; d++) {
        int h = (int)mc_topology_host_of(topo, d);
        most[h] = fmax(most[h], o[d]);
        any |= o[d] > 0;
        top = fmax(top, r[d]);
    }
    if (!any || b <= 0)
        return 0;
    double lo = 0, hi = a + top / b + 1;
    for (int i = 0; i < 200; i++) {
        double t = (lo + hi) / 2, x = b * fmax(0, t - a), left = 0;
        for (int64_t d = 0; d < ndev; d++)
            left += fmax(0, r[d] - x);
        for (int h = 0; h < H; h++)
            left += fmax(0, most[h] - x);
        if (left <= nic_in * fmax(0, t - a_nic))
            hi = t;
        else
            lo = t;
    }
    return hi;
}

/* The senders term by bisection: the least T with bytes <= b_early·(T − a)⁺ +
 * b_late·(T − a − a_min)⁺ + b_in·(T − a_nic)⁺ (bound_senders.c's, computed independently). */
static double senders_bisect(double bytes, double b_early, double b_late, double a, double a_min,
                             double b_in, double a_nic)
{
    double lo = 0, hi = a + a_min + a_nic + bytes / fmax(b_early + b_late, b_in) + 1;
    for (int i = 0; i < 200; i++) {
        double t = (lo + hi) / 2;
        if (b_early * fmax(0, t - a) + b_late * fmax(0, t - a - a_min) +
                b_in * fmax(0, t - a_nic) >=
            bytes)
            hi = t;
        else
            lo = t;
    }
    return hi;
}

static void test_bound_vs_bruteforce(void **state)
{
    (void)state;
    int checked = 0, closure_wins = 0, relay_wins = 0, port_wins = 0, cut_wins = 0, start_wins = 0,
        senders_wins = 0, loop_wins = 0;
    int64_t *emask = calloc((size_t)1 << MAXH, sizeof *emask);
    double *copies_of = calloc(((size_t)1 << MAXH) * (MAXH + 1), sizeof *copies_of);
    double(*host_k)[MAXDEV + 1] = calloc(MAXH, sizeof *host_k);
    double(*cut_u)[256] = calloc(MAXH, sizeof *cut_u);          /* per host: bytes by holder mask */
    double(*own_k)[MAXDEV + 1] = calloc(MAXDEV, sizeof *own_k); /* per device: by copies */
    assert_non_null(emask);
    assert_non_null(copies_of);
    assert_non_null(host_k);
    assert_non_null(cut_u);
    assert_non_null(own_k);
    for (uint64_t seed = 1; checked < 400 && seed < 20000; seed++) {
        rc_case_t c;
        char err[2048];
        if (rc_case_make(seed, 16, &c, err, sizeof err))
            fail_msg("seed %llu: %s", (unsigned long long)seed, err);
        int64_t H = mc_topology_hosts(c.topo), ndev = mc_topology_devices(c.topo);
        if (H > MAXH) {
            rc_case_free(&c);
            continue;
        }
        if (seed % 2) {
            /* slow NIC out, fast in, no latency: the host-set term decides more often */
            char text[256];
            snprintf(text, sizeof text,
                     "hosts %lld\ndevices_per_host %lld\nlink copy bandwidth=1TB/s latency=0\n"
                     "link intra bandwidth=%lldGB/s latency=0\n"
                     "nic count=1 in=400Gbit/s out=%lldGbit/s latency=0\n",
                     (long long)H, (long long)mc_topology_devices_per_host(c.topo),
                     (long long)(500 + seed % 7), (long long)(1 + seed % 5));
            mc_topology_destroy(c.topo);
            c.topo = NULL;
            assert_int_equal(mc_topology_parse(text, "slow-out.topo", &c.topo), MC_OK);
        }
        const mc_mesh_t *sm = mc_layout_mesh(c.src), *dm = mc_layout_mesh(c.dst);
        mc_box_t st[2 * RC_MAX_MESH + 64], dt[2 * RC_MAX_MESH + 64];
        char in_s[2 * RC_MAX_MESH + 64] = {0}, in_d[2 * RC_MAX_MESH + 64] = {0};
        assert_true(ndev <= 2 * RC_MAX_MESH + 64);
        for (int64_t i = 0; i < mc_mesh_size(sm); i++) {
            int64_t d = mc_mesh_device(sm, i);
            in_s[d] = 1;
            assert_int_equal(mc_layout_tile(c.src, d, &st[d]), MC_OK);
        }
        for (int64_t i = 0; i < mc_mesh_size(dm); i++) {
            int64_t d = mc_mesh_device(dm, i);
            in_d[d] = 1;
            assert_int_equal(mc_layout_tile(c.dst, d, &dt[d]), MC_OK);
        }
        double r_host[MAXH] = {0}, r_dev[2 * RC_MAX_MESH + 64] = {0},
               e_dev[2 * RC_MAX_MESH + 64] = {0}, c_dev[2 * RC_MAX_MESH + 64] = {0},
               o_dev[2 * RC_MAX_MESH + 64] = {0}; /* bytes of elements only d's host holds and
                                                     needs, per needer d */
        double elem = (double)mc_dtype_size(c.dtype);
        uint32_t early[MAXH] = {0}; /* per host: devices holding an element a mate needs */
        memset(emask, 0, ((size_t)1 << H) * sizeof *emask);
        memset(copies_of, 0, ((size_t)1 << H) * (MAXH + 1) * sizeof *copies_of);
        memset(host_k, 0, MAXH * sizeof *host_k);
        memset(cut_u, 0, MAXH * sizeof *cut_u);
        memset(own_k, 0, MAXDEV * sizeof *own_k);
        int64_t dph = mc_topology_devices_per_host(c.topo);
        assert_true(dph <= 8);
        int64_t x[MC_MAX_NDIM];
        uint32_t senders = 0; /* hosts holding elements that other hosts lack */
        for (int64_t e = 0; e < c.nelems; e++) {
            int64_t f = e;
            for (int d = c.ndim - 1; d >= 0; d--) {
                x[d] = f % c.shape[d];
                f /= c.shape[d];
            }
            uint32_t hold = 0, need = 0;
            int nholders = 0, nneeders = 0, k[MAXH] = {0}, held_in[MAXH] = {0};
            int64_t only = -1, only_in[MAXH];
            uint32_t in_host[MAXH] = {0};
            for (int64_t d = 0; d < ndev; d++) {
                int h = (int)mc_topology_host_of(c.topo, d);
                int holds = in_s[d] && rc_in_box(c.ndim, &st[d], x);
                int wants = in_d[d] && rc_in_box(c.ndim, &dt[d], x);
                if (holds) {
                    in_host[h] |= 1u << (d - h * dph);
                    hold |= 1u << h;
                    nholders++;
                    only = d;
                    held_in[h]++;
                    only_in[h] = d;
                }
                if (holds && wants)
                    c_dev[d] += elem;
                if (wants && !holds) {
                    need |= 1u << h;
                    k[h]++;
                    nneeders++;
                    r_dev[d] += elem;
                }
            }
            for (int h = 0; h < H; h++) {
                if ((need & ~hold) >> h & 1)
                    r_host[h] += elem;
                if (held_in[h] == 1 && (need >> h & 1))
                    own_k[only_in[h]][k[h]] += elem;
            }
            if (need & ~hold) {
                senders |= hold;
                emask[hold]++;
                copies_of[(size_t)hold * (MAXH + 1) + __builtin_popcount(need & ~hold)] += elem;
            }
            for (int h = 0; h < H; h++)
                if ((need & ~hold) >> h & 1)
                    host_k[h][k[h]] += elem;
            for (int h = 0; h < H; h++) /* holders in h by their index in h */
                if (need >> h & 1) {
                    cut_u[h][in_host[h]] += elem;
                    early[h] |= in_host[h]; /* they hold what a mate needs */
                }
            if (nholders == 1 && nneeders > 0)
                e_dev[only] += elem;
            if (need && need == hold && __builtin_popcount(hold) == 1)
                for (int64_t d = 0; d < ndev; d++)
                    if (in_d[d] && rc_in_box(c.ndim, &dt[d], x) &&
                        !(in_s[d] && rc_in_box(c.ndim, &st[d], x)))
                        o_dev[d] += elem;
        }
        double b_in = mc_topology_nic_in(c.topo), b_out = mc_topology_nic_out(c.topo);
        /* a host's NIC in is fed by the others' NICs out, and the reverse: of the P hosts with
         * a device of either mesh (a plan's edges join those devices; one host: no NIC) */
        int P = 0;
        for (int h = 0; h < H; h++) {
            int used = 0;
            for (int64_t d = 0; d < ndev; d++)
                used |= mc_topology_host_of(c.topo, d) == h && (in_s[d] || in_d[d]);
            P += used;
        }
        {
            double raw_in = b_in;
            b_in = fmin(b_in, (double)(P - 1) * b_out);
            b_out = fmin(b_out, (double)(P - 1) * raw_in);
        }
        mc_link_t nic = mc_topology_link(c.topo, MC_LINK_NIC);
        mc_link_t intra = mc_topology_link(c.topo, MC_LINK_INTRA);
        mc_link_t copy = mc_topology_link(c.topo, MC_LINK_COPY);
        double bound = 0, sum_r = 0, closure = 0;
        for (int h = 0; h < H; h++) {
            sum_r += r_host[h];
            if (r_host[h] > 0)
                bound = fmax(bound, r_host[h] / b_in + nic.latency);
        }
        if (sum_r > 0)
            bound = fmax(bound, sum_r / (b_out * (double)P) + nic.latency);
        for (uint32_t X = 1; X < (1u << H); X++) {
            double ex = 0;
            /* E(X): elements whose holder host set lies inside X */
            for (uint32_t m = X;; m = (m - 1) & X) {
                ex += (double)emask[m] * elem;
                if (m == 0)
                    break;
            }
            closure = fmax(closure, ex / (b_out * (double)__builtin_popcount(X)));
        }
        if (closure > bound)
            closure_wins++;
        if (closure > 0)
            bound = fmax(bound, closure + nic.latency);
        double relay = 0;
        for (uint32_t X = 1; X < (1u << H); X++)
            relay =
                fmax(relay, relay_hist(copies_of + (size_t)X * (MAXH + 1), MAXH + 1,
                                       b_out * __builtin_popcount(X), nic.latency, nic.latency));
        for (int h = 0; h < H; h++)
            relay =
                fmax(relay, relay_hist(host_k[h], MAXDEV + 1, b_in, nic.latency, intra.latency));
        relay_wins += relay > bound;
        bound = fmax(bound, relay);
        double start = start_hist(host_k, (int)H, __builtin_popcount(senders), b_in, b_out,
                                  nic.latency, intra.latency);
        start_wins += start > bound;
        bound = fmax(bound, start);
        double min_lat = fmin(intra.latency, nic.latency);
        /* device sets: U(D) over every set D of a host's devices, through D's out-ports and
         * the NIC, each its latency */
        double cut = 0;
        for (int h = 0; h < H; h++)
            for (uint32_t D = 0; D < (1u << dph); D++) {
                double u = 0, b_d = __builtin_popcount(D) * intra.bandwidth;
                for (uint32_t m = D;; m = (m - 1) & D) {
                    u += cut_u[h][m];
                    if (m == 0)
                        break;
                }
                if (u > 0 && b_d + b_in > 0)
                    cut = fmax(cut, paths_bisect(u, b_d, intra.latency, b_in, nic.latency));
            }
        cut_wins += cut > bound;
        bound = fmax(bound, cut);
        /* host ports: every set S of a host's devices takes its bytes through its own ports
         * plus the NIC (in: needing devices, out: alone-holding ones), S by enumeration */
        double ports = 0;
        for (int h = 0; h < H; h++)
            for (uint32_t S = 1; S < (1u << dph); S++) {
                double r_sum = 0, e_sum = 0;
                for (int j = 0; j < dph; j++)
                    if (S >> j & 1 && h * dph + j < ndev) {
                        r_sum += r_dev[h * dph + j];
                        e_sum += e_dev[h * dph + j];
                    }
                int n = __builtin_popcount(S);
                if (r_sum > 0)
                    ports = fmax(ports, paths_bisect(r_sum, n * intra.bandwidth, intra.latency,
                                                     b_in, nic.latency));
                if (e_sum > 0)
                    ports = fmax(ports, paths_bisect(e_sum, n * intra.bandwidth, intra.latency,
                                                     b_out, nic.latency));
            }
        port_wins += ports > bound;
        bound = fmax(bound, ports);
        double loops = loops_bisect(c.topo, r_dev, o_dev, ndev, (int)H, intra.bandwidth,
                                    intra.latency, (double)P * b_in, nic.latency);
        loop_wins += loops > bound;
        bound = fmax(bound, loops);
        /* senders: a host's needs leave its devices' out-ports, a hop later for those
         * holding nothing a mate needs, or enter its NIC; and they enter the needers'
         * in-ports, any subset's own, which before α_min only those early devices can feed */
        double out_ports = 0;
        for (int h = 0; h < H; h++) {
            double r_sum = 0;
            int n = 0;
            for (int j = 0; j < dph && h * dph + j < ndev; j++, n++)
                r_sum += r_dev[h * dph + j];
            int e = __builtin_popcount(early[h]);
            double a_min = fmin(intra.latency, nic.latency);
            if (r_sum > 0)
                out_ports = fmax(out_ports, senders_bisect(r_sum, e * intra.bandwidth,
                                                           (n - e) * intra.bandwidth, intra.latency,
                                                           a_min, b_in, nic.latency));
            for (uint32_t set = 1; set < 1u << n; set++) {
                double sum = 0;
                int k = 0;
                for (int j = 0; j < n; j++)
                    if (set >> j & 1 && r_dev[h * dph + j] > 0) {
                        sum += r_dev[h * dph + j];
                        k++;
                    }
                int fed = k < e ? k : e;
                if (sum > 0)
                    out_ports =
                        fmax(out_ports,
                             senders_bisect(sum, fed * intra.bandwidth, (k - fed) * intra.bandwidth,
                                            intra.latency, a_min, b_in, nic.latency));
            }
        }
        senders_wins += out_ports > bound;
        bound = fmax(bound, out_ports);
        double host_bw = mc_topology_host_bandwidth(c.topo), r_in_host[MAXH] = {0};
        for (int64_t d = 0; d < ndev; d++)
            r_in_host[mc_topology_host_of(c.topo, d)] += r_dev[d];
        for (int h = 0; h < H && host_bw > 0; h++)
            if (r_in_host[h] > 0)
                bound = fmax(bound, r_in_host[h] / (host_bw + b_in) + min_lat);
        for (int64_t d = 0; d < ndev; d++) {
            if (r_dev[d] > 0)
                bound = fmax(bound, paths_bisect(r_dev[d], intra.bandwidth, intra.latency, b_in,
                                                 nic.latency));
            if (e_dev[d] > 0)
                bound = fmax(bound, paths_bisect(e_dev[d], intra.bandwidth, intra.latency, b_out,
                                                 nic.latency));
            if (c_dev[d] > 0)
                bound = fmax(bound, c_dev[d] / copy.bandwidth + copy.latency);
            /* before the NIC latency only the own host's devices can have sent: d's alone-held
             * bytes go to its host mates straight or relayed once */
            double own = r_dev[d] > 0 ? r_dev[d] / intra.bandwidth + intra.latency : 0;
            own = fmax(own, relay_hist(own_k[d], MAXDEV + 1, intra.bandwidth, intra.latency,
                                       intra.latency));
            if (own > 0)
                bound = fmax(bound, fmin(nic.latency, own));
        }
        double lib = -1;
        if (mc_lower_bound(c.src, c.dst, c.topo, &lib) != MC_OK)
            fail_msg("seed %llu: mc_lower_bound: %s\n  case: %s", (unsigned long long)seed,
                     mc_last_error(), c.desc);
        if (!close_rel(lib, bound, 1e-9))
            fail_msg("seed %llu: mc_lower_bound %.17g, brute force %.17g (closure term "
                     "%.17g)\n  case: %s",
                     (unsigned long long)seed, lib, bound, closure, c.desc);
        /* and via the pieces: mc_bound_compute agrees with mc_lower_bound */
        mc_pieces_t *pieces = NULL;
        double via = -1;
        assert_int_equal(mc_pieces_compute(c.src, c.dst, &pieces), MC_OK);
        assert_int_equal(mc_bound_compute(pieces, c.topo, &via), MC_OK);
        mc_pieces_destroy(pieces);
        /* over every host of the topology (the whole cluster, where mc_lower_bound takes the
         * meshes' hosts): no higher */
        assert_true(P == H ? via == lib : via <= lib);
        rc_case_free(&c);
        checked++;
    }
    free(emask);
    free(copies_of);
    free(host_k);
    free(cut_u);
    free(own_k);
    printf("%d layout cases, the host-set term decided %d, relays beat the fluid terms %d, "
           "host ports %d, NIC loops %d, device sets %d, slow start %d, senders %d\n",
           checked, closure_wins, relay_wins, port_wins, loop_wins, cut_wins, start_wins,
           senders_wins);
    assert_true(checked >= 300 && closure_wins >= 30 && relay_wins >= 10 && port_wins >= 10 &&
                cut_wins >= 10 && loop_wins >= 1);
}

/* The reduction bound on the textbook cases, 4 hosts of one device (NIC B each way, latency
 * α): all-reduce 2(n-1)/n·S/B + α, reduce-scatter (n-1)/n·S/B + α; the flat reduce-scatter
 * plan gets within 7% of both (pipeline fill; 1.056 and 1.000 with meshcast's halved chunks). */
/* The two-path term by hand: g0038 of the scale benchmark (seed 2), one dgx-h100 device
 * that takes 4.6 MB from a host mate (450 GB/s, 3 us) or over the NIC (400 GB/s, 10 us):
 * x / 450 GB/s + 3 us = (4,587,520 - x) / 400 GB/s + 10 us at x = 3.91 MB, 11.691 us. Few
 * bytes never wait for the NIC; the order of the two ports does not matter. */
static void test_bound_paths_hand(void **state)
{
    (void)state;
    double t = mc_bound_paths(4587520, 450e9, 3e-6, 400e9, 10e-6);
    assert_true(fabs(t - (4587520 + 450e9 * 3e-6 + 400e9 * 10e-6) / 850e9) < 1e-15);
    assert_true(fabs(t - 11.6912e-6) < 1e-10);
    assert_true(fabs(mc_bound_paths(4587520, 400e9, 10e-6, 450e9, 3e-6) - t) < 1e-15);
    /* 1 MB: through the mate alone in 3 us + 2.22 us, before the NIC could deliver */
    assert_true(fabs(mc_bound_paths(1e6, 450e9, 3e-6, 400e9, 10e-6) - (3e-6 + 1e6 / 450e9)) <
                1e-15);
    /* exactly where the NIC starts to help: 450 GB/s x 7 us */
    assert_true(fabs(mc_bound_paths(3.15e6, 450e9, 3e-6, 400e9, 10e-6) - 10e-6) < 1e-15);
    assert_true(mc_bound_paths(0, 450e9, 3e-6, 400e9, 10e-6) == 0);
    /* one port only: its latency and rate */
    assert_true(fabs(mc_bound_paths(8e6, 0, 3e-6, 400e9, 10e-6) - 30e-6) < 1e-15);
}

static void test_reduce_bound_textbook(void **state)
{
    (void)state;
    mc_topology_t *t = NULL;
    assert_int_equal(mc_topology_parse("name h4\nhosts 4\ndevices_per_host 1\n"
                                       "link copy bandwidth=5GB/s latency=1us\n"
                                       "link intra bandwidth=2.5GB/s latency=5us\n"
                                       "nic count=1 in=1GB/s out=1GB/s latency=50us\n",
                                       "test", &t),
                     MC_OK);
    mc_mesh_t *m = NULL;
    int64_t shape[1] = {4}, tshape[2] = {4096, 1024};
    assert_int_equal(mc_mesh_create(1, shape, NULL, NULL, &m), MC_OK);
    const char *dsts[2] = {"[Replicate()]", "[Shard(0)]"};
    double want[2] = {1.5, 0.75}, bytes = 4096.0 * 1024 * 4;
    for (int i = 0; i < 2; i++) {
        mc_spec_t *ss = NULL, *ds = NULL;
        mc_layout_t *src = NULL, *dst = NULL;
        assert_int_equal(mc_spec_parse("[Partial()]", m, 2, &ss), MC_OK);
        assert_int_equal(mc_spec_parse(dsts[i], m, 2, &ds), MC_OK);
        assert_int_equal(mc_layout_create(2, tshape, MC_DTYPE_F32, m, ss, &src), MC_OK);
        assert_int_equal(mc_layout_create(2, tshape, MC_DTYPE_F32, m, ds, &dst), MC_OK);
        mc_plan_t *plan = NULL;
        assert_int_equal(mc_plan_create(src, dst, t, NULL, &plan), MC_OK);
        mc_plan_stats_t st;
        mc_plan_query(plan, &st);
        double b = want[i] * bytes / 1e9 + 50e-6;
        assert_true(fabs(st.lower_bound_s - b) < 1e-9 * b);
        printf("%s: bound %.6g s, estimate %.6g s\n", dsts[i], st.lower_bound_s, st.estimate_s);
        assert_true(st.estimate_s >= st.lower_bound_s && st.estimate_s < 1.07 * b);
        mc_plan_destroy(plan);
        mc_layout_destroy(src);
        mc_layout_destroy(dst);
        mc_spec_destroy(ss);
        mc_spec_destroy(ds);
    }
    mc_mesh_destroy(m);
    mc_topology_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closure_hand),
        cmocka_unit_test(test_closure_vs_bruteforce),
        cmocka_unit_test(test_bound_vs_bruteforce),
        cmocka_unit_test(test_reduce_messages_vs_bruteforce),
        cmocka_unit_test(test_reduce_bound_textbook),
        cmocka_unit_test(test_bound_paths_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
