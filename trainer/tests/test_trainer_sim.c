/* The step simulator (simulate.h): hand-worked steps with unit costs, the FLOP model's
 * parameter counts against real models, and — what makes the simulator worth trusting — its
 * programs equal the executor's for every schedule and both models, and a real step (threads
 * world, traced) computes in exactly that order on every rank. */
#include "optim.h"
#include "pipeline_internal.h"
#include "simulate.h"
#include "tiny.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

enum { MICRO = 4, B = 2, BLOCKS = 6 };

/* Fixed op costs (no FLOP part), every reshard `comm` seconds (0: the planner's estimate). */
static tr_sim_costs unit_costs(double f, double b, double comm)
{
    tr_sim_costs c = {0};
    c.fixed[TR_OP_F] = f;
    c.fixed[TR_OP_B] = b;
    c.fixed[TR_OP_I] = c.fixed[TR_OP_W] = b / 2;
    c.comm = comm;
    return c;
}

static int buckets = 2;      /* --dp-buckets */
static const char *topology; /* --topology (NULL: cpu-testbed, one host per rank) */
static tr_bucket last_buckets[8];
static int nlast_buckets;

static double sim_step(tr_arch arch, int blocks, mc_sched_kind_t kind, int ranks, int micro, int dp,
                       const int *tp, tr_sim_costs costs)
{
    char err[256];
    tr_sim_config cfg = {.model = tiny_config(arch, blocks),
                         .micro_batch = B,
                         .ranks = ranks,
                         .microbatches = micro,
                         .dp = dp,
                         .dp_buckets = buckets,
                         .tp = tp,
                         .kind = kind,
                         .strategy = MC_STRATEGY_MESHCAST,
                         .sender = MC_SENDER_LB_SIZE,
                         .sums_strategy = -1,
                         .topology = topology,
                         .costs = costs};
    tr_sim *s = NULL;
    tr_sim_result r;
    if (tr_sim_create(&cfg, &s, err, sizeof(err)) || tr_sim_run(s, &r, err, sizeof(err)))
        fail_msg("simulator: %s", err);
    const tr_program *g = tr_sim_program(s); /* pipeline rank 0's buckets */
    nlast_buckets = g->nbuckets[0] < 8 ? g->nbuckets[0] : 8;
    if (nlast_buckets)
        memcpy(last_buckets, g->buckets[0], (size_t)nlast_buckets * sizeof(tr_bucket));
    tr_sim_free(s);
    return r.step_s;
}

/* GPipe, 2 ranks, 2 microbatches, F = 1, B = 2, every reshard c = 0.5 (2 blocks: each
 * stage is the embedding or head and one block); the costs' fixed `comm` holds the links
 * for all of c, and cpu-testbed's NICs have no burst. A reshard goes when both sides have
 * started it (the receivers start at the top of the step). By hand:
 *   rank 0: F0 [0,1]  F1 [1,2]                        wait; B0 [6,8]  wait; B1 [8,10]
 *   act0 on the wire [1,1.5], act1 [2,2.5]
 *   rank 1: wait; F0 [1.5,2.5]  F1 [2.5,3.5]  B0 [3.5,5.5]  B1 [5.5,7.5]
 *   grad0 [5.5,6], grad1 [7.5,8]
 * step = 10 = 3F + 3B + 2c. With 1 microbatch (1f1b): F [0,1], act [1,1.5], F [1.5,2.5],
 * B [2.5,4.5], grad [4.5,5], B [5,7]: 7 = 2F + 2B + 2c. */
static void test_hand_gpipe(void **state)
{
    (void)state;
    tr_sim_costs c = unit_costs(1.0, 2.0, 0.5);
    assert_float_equal(sim_step(TR_ARCH_GPT, 2, MC_SCHED_GPIPE, 2, 2, 1, NULL, c), 10.0, 1e-9);
    assert_float_equal(sim_step(TR_ARCH_GPT, 2, MC_SCHED_1F1B, 2, 1, 1, NULL, c), 7.0, 1e-9);
    /* the network is one wire per direction: with c = 1.5 act1 waits for act0
     * (act0 [1,2.5], act1 [2.5,4]); rank 1: F0 [2.5,3.5], F1 [4,5], B0 [5,7], B1 [7,9];
     * grad0 [7,8.5], grad1 [9,10.5]; rank 0: B0 [8.5,10.5], B1 [10.5,12.5] */
    c.comm = 1.5;
    assert_float_equal(sim_step(TR_ARCH_GPT, 2, MC_SCHED_GPIPE, 2, 2, 1, NULL, c), 12.5, 1e-9);
}

/* The planner's estimate of one reshard between layouts on the executor's placement
 * (cpu-testbed, one host per rank: world rank w on device 4w), or on topology `name`. */
static double estimate_on(const char *name, int mdim, const int64_t *mshape, const int64_t *ids,
                          const char *from, const char *to, int64_t rows, int64_t cols, int hosts)
{
    mc_topology_t *topo;
    mc_mesh_t *mesh;
    mc_spec_t *a, *b;
    mc_layout_t *la, *lb;
    mc_plan_t *plan;
    mc_plan_stats_t st;
    const int64_t shape[2] = {rows, cols};
    assert_int_equal(mc_topology_load(name, &topo), MC_OK);
    assert_int_equal(mc_topology_set_hosts(topo, hosts), MC_OK);
    assert_int_equal(mc_mesh_create(mdim, mshape, ids, NULL, &mesh), MC_OK);
    assert_int_equal(mc_spec_parse(from, mesh, 2, &a), MC_OK);
    assert_int_equal(mc_spec_parse(to, mesh, 2, &b), MC_OK);
    assert_int_equal(mc_layout_create(2, shape, MC_DTYPE_F32, mesh, a, &la), MC_OK);
    assert_int_equal(mc_layout_create(2, shape, MC_DTYPE_F32, mesh, b, &lb), MC_OK);
    assert_int_equal(mc_plan_create(la, lb, topo, NULL, &plan), MC_OK);
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    mc_plan_destroy(plan);
    mc_layout_destroy(la);
    mc_layout_destroy(lb);
    mc_spec_destroy(a);
    mc_spec_destroy(b);
    mc_mesh_destroy(mesh);
    mc_topology_destroy(topo);
    return st.estimate_s;
}

static double estimate(int mdim, const int64_t *mshape, const int64_t *ids, const char *from,
                       const char *to, int64_t rows, int64_t cols, int hosts)
{
    return estimate_on("cpu-testbed", mdim, mshape, ids, from, to, rows, cols, hosts);
}

/* The planner's estimate of a [rows, cols] f32 S0R from a one-device mesh on device 0 to one
 * on device 1 of topology `name` (the simulator's boundary reshard with one rank per host). */
static double estimate2(const char *name, int64_t rows, int64_t cols)
{
    const int64_t mesh[2] = {1, 1}, src[1] = {0}, dst[1] = {1}, shape[2] = {rows, cols};
    mc_topology_t *topo;
    mc_mesh_t *a, *b;
    mc_spec_t *sa, *sb;
    mc_layout_t *la, *lb;
    mc_plan_t *plan;
    mc_plan_stats_t st;
    mc_plan_params_t pp = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER,
                           .strategy = MC_STRATEGY_MESHCAST,
                           .sender = MC_SENDER_LB_SIZE};
    assert_int_equal(mc_topology_load(name, &topo), MC_OK);
    assert_int_equal(mc_mesh_create(2, mesh, src, NULL, &a), MC_OK);
    assert_int_equal(mc_mesh_create(2, mesh, dst, NULL, &b), MC_OK);
    assert_int_equal(mc_spec_parse("S0R", a, 2, &sa), MC_OK);
    assert_int_equal(mc_spec_parse("S0R", b, 2, &sb), MC_OK);
    assert_int_equal(mc_layout_create(2, shape, MC_DTYPE_F32, a, sa, &la), MC_OK);
    assert_int_equal(mc_layout_create(2, shape, MC_DTYPE_F32, b, sb, &lb), MC_OK);
    assert_int_equal(mc_plan_create(la, lb, topo, &pp, &plan), MC_OK);
    assert_int_equal(mc_plan_query(plan, &st), MC_OK);
    mc_plan_destroy(plan);
    mc_layout_destroy(la);
    mc_layout_destroy(lb);
    mc_spec_destroy(sa);
    mc_spec_destroy(sb);
    mc_mesh_destroy(a);
    mc_mesh_destroy(b);
    mc_topology_destroy(topo);
    return st.estimate_s;
}

/* A .topo of 2 one-device hosts whose NIC runs `rate` with `latency` and `burst`; the caller
 * removes the file. */
static void write_topo(char *path, const char *rate, const char *latency, const char *burst)
{
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f,
            "name hand\nhosts 2\ndevices_per_host 1\nlink copy bandwidth=1GB/s latency=0\n"
            "link intra bandwidth=1GB/s latency=0\nnic count=1 in=%s out=%s latency=%s burst=%s\n",
            rate, rate, latency, burst);
    assert_int_equal(fclose(f), 0);
}

/* The latencies do not hold the links. On a NIC of 1000 B/s and 0.5 s latency, one
 * activation ([B x seq, C] = 16 x 16 f32 = 1024 B) plans to e = 0.5 + 1.024 s; its fixed
 * part f is the same plan for one element per device (0.5 + 0.004 s) and the rest, h = e -
 * f = 1.02 s, holds the sender's out and the receiver's in side. GPipe as above (F = 1,
 * B = 2, 2 microbatches), with 1 < h < 2:
 *   rank 0: F0 [0,1]  F1 [1,2]; act0 holds 0->1 [1, 1+h], arrives 1+h+f; act1 ready at 2,
 *           the link free at 1+h > 2: holds [1+h, 1+2h], arrives 1+2h+f
 *   rank 1: F0 [1+h+f, 2+h+f]  F1 [1+2h+f, 2+2h+f]  B0 .. 4+2h+f  B1 .. 6+2h+f
 *           grad0 holds 1->0 [4+2h+f, 4+3h+f], arrives 4+3h+2f; grad1 ready at 6+2h+f,
 *           after the link is free (h < 2): arrives 6+3h+2f
 *   rank 0: B0 [4+3h+2f, 6+3h+2f]  B1 [6+3h+2f, 8+3h+2f]
 * step = 8 + 3h + 2f (12.068 s); were the whole estimate to hold the link (the rule before),
 * 8 + 3e (12.572 s). */
static void test_hand_latency(void **state)
{
    (void)state;
    char path[] = "/tmp/meshcast-sim-XXXXXX.topo";
    write_topo(path, "1000B/s", "0.5s", "0");
    const double e = estimate2(path, B * 8, 16), f = estimate2(path, 1, 1), h = e - f;
    assert_true(h > 1.0 && h < 2.0 && f >= 0.5);
    topology = path;
    assert_float_equal(sim_step(TR_ARCH_GPT, 2, MC_SCHED_GPIPE, 2, 2, 1, NULL, unit_costs(1, 2, 0)),
                       8.0 + 3.0 * h + 2.0 * f, 1e-9);
    unlink(path);
}

/* A shaped NIC's token bucket: a link that idled saves credit (idle time, up to burst / rate)
 * and a transfer uses it at once; a queued transfer finds none (the link never idled). The
 * NIC runs 1 MB/s with a 1 MB burst: credit up to 1 s on each side. GPipe as above, every
 * reshard holding c seconds (the costs' comm).
 * c = 1.5: act0 at 1 uses the full credit: holds [1, 1.5], both sides' credit 0 at 1.5; act1
 *   at 2 finds 0.5 s saved (idle [1.5, 2]) on both sides: [2, 3]. Rank 1: F0 [1.5,2.5]
 *   F1 [3,4] B0 [4,6] B1 [6,8]; 1->0 unused: grad0 at 6 [6, 6.5], grad1 at 8 with 1.5 s idle,
 *   credit back to 1: [8, 8.5]; rank 0: B0 [6.5,8.5] B1 [8.5,10.5]. step 10.5 (12.5 without).
 * c = 3: act0 [1, 3] (credit 1); act1 ready at 2 queues until 3 with no credit: [3, 6].
 *   Rank 1: F0 [3,4] F1 [6,7] B0 [7,9] B1 [9,11]; grad0 at 9 (credit 1) [9, 11]; grad1 at 11
 *   queues on nothing but the link just ran: credit 0, [11, 14]; rank 0: B0 [11,13]
 *   B1 [14,16]. step 16 (18 without: act [1,4] [4,7], F [4,5] [7,8], B [8,10] [10,12],
 *   grad [10,13] [13,16], B [13,15] [16,18]). */
static void test_hand_burst(void **state)
{
    (void)state;
    char path[] = "/tmp/meshcast-sim-XXXXXX.topo";
    write_topo(path, "1MB/s", "0", "1MB");
    topology = path;
    assert_float_equal(
        sim_step(TR_ARCH_GPT, 2, MC_SCHED_GPIPE, 2, 2, 1, NULL, unit_costs(1, 2, 1.5)), 10.5, 1e-9);
    assert_float_equal(sim_step(TR_ARCH_GPT, 2, MC_SCHED_GPIPE, 2, 2, 1, NULL, unit_costs(1, 2, 3)),
                       16.0, 1e-9);
    unlink(path);
    char plain[] = "/tmp/meshcast-sim-XXXXXX.topo";
    write_topo(plain, "1MB/s", "0", "0"); /* no burst: the links as before */
    topology = plain;
    assert_float_equal(
        sim_step(TR_ARCH_GPT, 2, MC_SCHED_GPIPE, 2, 2, 1, NULL, unit_costs(1, 2, 1.5)), 12.5, 1e-9);
    assert_float_equal(sim_step(TR_ARCH_GPT, 2, MC_SCHED_GPIPE, 2, 2, 1, NULL, unit_costs(1, 2, 3)),
                       18.0, 1e-9);
    unlink(plain);
}

/* After a test that set a topology file (also when it failed). */
static int no_topology(void **state)
{
    (void)state;
    topology = NULL;
    return 0;
}

/* One pipeline rank of 2 tp ranks, 1 microbatch, 2 blocks: F and B each run 2 sums per
 * block, so step = F + B + 8 s, s the planner's RRP0 -> RR of one [B*T, C] activation. */
static void test_hand_tp_sum(void **state)
{
    (void)state;
    const tr_config cfg = tiny_config(TR_ARCH_GPT, 2);
    const int64_t mesh[1] = {2}, ids[2] = {0, 4};
    const double s = estimate(1, mesh, ids, "RRP0", "RR", B * cfg.seq, cfg.dmodel, 2);
    const int tp[1] = {2};
    assert_true(s > 0);
    assert_float_equal(sim_step(TR_ARCH_GPT, 2, MC_SCHED_1F1B, 1, 1, 1, tp, unit_costs(1, 2, 0)),
                       3.0 + 8.0 * s, 1e-12);
}

/* Two replicas of one pipeline rank, a microbatch each: with --dp-buckets 1, step = F + B +
 * the gradient sum, the planner's S1RP0 -> S1R of the packed gradients ([1, params]). With
 * 2 buckets the backward runs in two parts (the fixed cost with the top one: B [1,3], then
 * the lower part, 0 long), each bucket's sum starting after its part, one after the other
 * on the mesh: step = 3 + s(top bucket) + s(lower bucket), which weigh about half the
 * parameters each. And the FLOP model's parameter count is the model's, whole and as a tp
 * share. */
static void test_hand_dp_sum(void **state)
{
    (void)state;
    const tr_config cfg = tiny_config(TR_ARCH_UTRANSFORMER, 3);
    tr_model *m = tr_model_create(&cfg, 1);
    assert_non_null(m);
    assert_float_equal(tr_sim_mparams(&cfg, 0, m->nlayers, 1) * 1e6, (double)m->params.total, 0.5);
    const int tp[5] = {2, 2, 2, 2, 2}, rank[5] = {0, 1, 1, 1, 0};
    tr_model *part = tr_model_create_part(m, tp, rank);
    assert_non_null(part);
    assert_float_equal(tr_sim_mparams(&cfg, 0, m->nlayers, 2) * 1e6, (double)part->params.total,
                       0.5);
    const int64_t mesh[2] = {2, 1}, ids[2] = {0, 4};
    const double s = estimate(2, mesh, ids, "S1RP0", "S1R", 1, m->params.total, 2);
    buckets = 1;
    assert_float_equal(
        sim_step(TR_ARCH_UTRANSFORMER, 3, MC_SCHED_1F1B, 1, 2, 2, NULL, unit_costs(1, 2, 0)),
        3.0 + s, 1e-12);
    buckets = 2;
    const double step =
        sim_step(TR_ARCH_UTRANSFORMER, 3, MC_SCHED_1F1B, 1, 2, 2, NULL, unit_costs(1, 2, 0));
    assert_int_equal(nlast_buckets, 2);
    double want = 3.0, half = 0.0;
    for (int b = 0; b < 2; b++) {
        const tr_bucket *k = &last_buckets[b];
        const double n = tr_sim_mparams(&cfg, k->first, k->last, 1) * 1e6;
        want += estimate(2, mesh, ids, "S1RP0", "S1R", 1, (int64_t)(n + 0.5), 2);
        half += b == 0 ? n / m->params.total : 0.0;
    }
    assert_int_equal(last_buckets[0].last, m->nlayers); /* the top bucket first */
    assert_int_equal(last_buckets[1].first, 0);
    assert_int_equal(last_buckets[1].last, last_buckets[0].first);
    assert_true(half > 0.3 && half < 0.7);
    assert_float_equal(step, want, 1e-12);
    tr_model_free(part);
    tr_model_free(m);
}

/* An op costs fixed + per_gflop x its stage's forward GFLOP, over --sim-speed. */
static void test_flop_costs(void **state)
{
    (void)state;
    const tr_config cfg = tiny_config(TR_ARCH_GPT, 2);
    tr_sim_costs c = unit_costs(0, 0, 1e-9);
    c.per_gflop[TR_OP_F] = 1.0;
    c.per_gflop[TR_OP_B] = 2.0;
    const double g = tr_sim_gflop(&cfg, B, 0, 4, 1);
    assert_true(g > 0);
    assert_float_equal(sim_step(TR_ARCH_GPT, 2, MC_SCHED_1F1B, 1, 1, 1, NULL, c), 3.0 * g, 1e-15);
    /* a block of 16 wide, 8 long: 8 x 2 x (24 x 16^2 + 4 x 8 x 16 + 30 x 16) flops */
    assert_float_equal(tr_sim_gflop(&cfg, B, 1, 2, 1), 16.0 * (6144 + 512 + 480) * 1e-9, 1e-18);
}

/* --- the simulator's programs against the executor's, and a real traced step --- */

typedef struct {
    tr_arch arch;
    mc_sched_kind_t kind;
    int dp;
    mc_world_t *world;
    int rank, rc, nprog, ncompute;
    instr_t prog[512];
    int compute[256]; /* the action of every compute event of the traced step, in order */
    char err[256];
} rank_run;

static void *rank_main(void *arg)
{
    rank_run *r = arg;
    tr_config cfg = tiny_config(r->arch, BLOCKS);
    mc_comm_params_t cp = {.field_mask =
                               MC_COMM_PARAM_WORLD | MC_COMM_PARAM_PROGRESS | MC_COMM_PARAM_TIMEOUT,
                           .world = r->world,
                           .world_rank = r->rank,
                           .progress = MC_PROGRESS_THREAD,
                           .timeout_s = 30};
    tr_pipe_config pc = {.kind = r->kind,
                         .ranks = 2,
                         .dp = r->dp,
                         .microbatches = MICRO,
                         .micro_batch = B,
                         .strategy = MC_STRATEGY_MESHCAST,
                         .sender = MC_SENDER_LB_SIZE,
                         .trace = 1};
    mc_comm_t *comm = NULL;
    tr_model *m = tr_model_create(&cfg, 3);
    tr_data d = tiny_corpus(cfg.seq, 4);
    tr_adamw o = {0};
    tr_pipe *p = NULL;
    int tokens[MICRO * B * 8], targets[MICRO * B * 8];
    tr_pipe_stats st;
    r->rc = -1;
    if (mc_comm_create(&cp, &comm) || !m || tr_adamw_init(&o, m->params.total, 1e-3f)) {
        snprintf(r->err, sizeof(r->err), "setup: %s", mc_last_error());
        goto out;
    }
    if (tr_pipe_create(m, &o, comm, &pc, &p, r->err, sizeof(r->err)))
        goto out;
    tr_data_train_batch(&d, MICRO * B, cfg.seq, tokens, targets);
    if (tr_pipe_step(p, tokens, targets, &st, r->err, sizeof(r->err)))
        goto out;
    r->nprog = p->nprog < 512 ? p->nprog : 512;
    memcpy(r->prog, p->prog, (size_t)r->nprog * sizeof(instr_t));
    for (int i = 0; i < p->nev && r->ncompute < 256; i++) /* compute: the instruction */
        if (p->ev[i].kind == EV_COMPUTE)
            r->compute[r->ncompute++] = p->prog[p->ev[i].index].index;
    r->rc = 0;
out:
    tr_pipe_free(p);
    mc_comm_destroy(comm);
    tr_adamw_free(&o);
    tr_data_free(&d);
    tr_model_free(m);
    return NULL;
}

/* 2 pipeline ranks, each of dp replicas (world rank w: pipeline rank w / dp). */
static void same_order(tr_arch arch, mc_sched_kind_t kind, int dp)
{
    const char *name = arch == TR_ARCH_GPT ? "gpt" : "utransformer";
    const int n = 2 * dp;
    rank_run r[4];
    pthread_t th[4];
    mc_world_t *world;
    assert_int_equal(mc_world_create(n, &world), MC_OK);
    for (int i = 0; i < n; i++) {
        r[i] = (rank_run){.arch = arch, .kind = kind, .dp = dp, .world = world, .rank = i};
        assert_int_equal(pthread_create(&th[i], NULL, rank_main, &r[i]), 0);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    mc_world_destroy(world);

    char err[256];
    tr_sim_config cfg = {.model = tiny_config(arch, BLOCKS),
                         .micro_batch = B,
                         .ranks = 2,
                         .microbatches = MICRO,
                         .dp = dp,
                         .kind = kind,
                         .strategy = MC_STRATEGY_MESHCAST,
                         .sender = MC_SENDER_LB_SIZE,
                         .sums_strategy = -1,
                         .costs = unit_costs(1, 2, 0)};
    tr_sim *s = NULL;
    tr_sim_result res;
    if (tr_sim_create(&cfg, &s, err, sizeof(err)) || tr_sim_run(s, &res, err, sizeof(err)))
        fail_msg("%s %s: simulator: %s", name, mc_sched_kind_name(kind), err);
    const tr_program *g = tr_sim_program(s);
    for (int w = 0; w < n; w++) {
        const int i = w / dp; /* the pipeline rank */
        if (r[w].rc)
            fail_msg("%s %s rank %d: %s", name, mc_sched_kind_name(kind), w, r[w].err);
        /* the whole program: compute (in parts), starts, waits, dp sums, optimizer, in order */
        assert_int_equal(r[w].nprog, g->nprog[i]);
        assert_memory_equal(r[w].prog, g->prog[i], (size_t)g->nprog[i] * sizeof(instr_t));
        /* the real step computed in the program's order */
        int k = 0;
        const mc_sched_action_t *acts;
        size_t nacts;
        tr_sim_actions(s, i, &acts, &nacts);
        for (int j = 0; j < g->nprog[i]; j++) {
            if (g->prog[i][j].kind != IN_COMPUTE)
                continue;
            char want[64], got[64];
            assert_true(k < r[w].ncompute);
            tr_program_compute_name(&acts[g->prog[i][j].index], NULL, want, sizeof(want));
            tr_program_compute_name(&acts[r[w].compute[k]], NULL, got, sizeof(got));
            if (strcmp(want, got))
                fail_msg("%s %s rank %d op %d: simulated %s, ran %s", name,
                         mc_sched_kind_name(kind), w, k, want, got);
            k++;
        }
        assert_int_equal(k, r[w].ncompute);
    }
    printf("  %-13s %-17s dp %d: same program and compute order on every rank (%d + %d "
           "instructions, %d transfers, %d + %d dp buckets)\n",
           name, mc_sched_kind_name(kind), dp, g->nprog[0], g->nprog[1], g->nx, g->nbuckets[0],
           g->nbuckets[1]);
    tr_sim_free(s);
}

static void test_executor_order(void **state)
{
    (void)state;
    static const mc_sched_kind_t kinds[] = {
        MC_SCHED_GPIPE, MC_SCHED_1F1B,  MC_SCHED_EAGER_1F1B, MC_SCHED_INTERLEAVED_1F1B,
        MC_SCHED_ZB_H1, MC_SCHED_ZB_H2, MC_SCHED_ZB_V};
    for (int a = 0; a < 2; a++)
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
            same_order(a ? TR_ARCH_UTRANSFORMER : TR_ARCH_GPT, kinds[k], 1);
    /* with replicas: the gradient sums in buckets, the last backward of a stage in parts */
    same_order(TR_ARCH_GPT, MC_SCHED_1F1B, 2);
    same_order(TR_ARCH_UTRANSFORMER, MC_SCHED_ZB_H1, 2);
    same_order(TR_ARCH_UTRANSFORMER, MC_SCHED_INTERLEAVED_1F1B, 2);
}

int main(void)
{
    tr_blas_single_thread();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_hand_gpipe),
                                       cmocka_unit_test_teardown(test_hand_latency, no_topology),
                                       cmocka_unit_test_teardown(test_hand_burst, no_topology),
                                       cmocka_unit_test(test_hand_tp_sum),
                                       cmocka_unit_test(test_hand_dp_sum),
                                       cmocka_unit_test(test_flop_costs),
                                       cmocka_unit_test(test_executor_order)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
