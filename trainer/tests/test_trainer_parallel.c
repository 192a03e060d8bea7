/* The data- and tensor-parallel oracle: the same seed, data and model trained in one
 * process (tr_train_step) and by the executor with every pipeline rank a mesh of D replicas x
 * T tensor-parallel ranks (threads world; each replica runs its share of the microbatches,
 * its gradients are summed by a meshcast Partial -> Replicate reshard; the Megatron-split
 * blocks sum their partial products by reshards too) give the same per-step losses within
 * 1e-5 relative over 10 steps: 1, 2 and 4 pipeline ranks x dp 1/2 x tp 1/2 (and tp 2,1
 * and 1,2: a different degree per pipeline rank), every schedule, every strategy (rotated,
 * see oracle()), GPT and U-transformer. Reduction order changes the float sums, so the losses are
 * close, not always equal. Prints the matrix: the largest relative difference per case. */
#include "optim.h"
#include "pipeline.h"
#include "tiny.h"
#include "train.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

enum {
    STEPS = 10,
    MICRO = 8,
    B = 1,
    BLOCKS = 6,
    MAXW = 16
}; /* dp 2 x 4 ranks interleaved: 4 per replica */
static const uint64_t SEED = 5, DATA_SEED = 9;
static const float LR = 3e-3f;
static int dp_buckets;           /* tr_pipe_config.dp_buckets of the runs (0: the default, 2) */
static float last_losses[STEPS]; /* rank 0's losses of the last run */

typedef struct {
    tr_arch arch;
    mc_sched_kind_t kind;
    const char *strategy;
    int ranks, dp;
    const int *tp;
    mc_world_t *world;
    int rank;
    float loss[STEPS];
    int rc;
    char err[256];
} rank_run;

static void reference(tr_arch arch, float *loss)
{
    tr_config cfg = tiny_config(arch, BLOCKS);
    tr_model *m = tr_model_create(&cfg, SEED);
    tr_acts *a = tr_acts_create(m, B);
    tr_adamw o;
    tr_data d = tiny_corpus(cfg.seq, DATA_SEED);
    int tokens[MICRO * B * 8], targets[MICRO * B * 8];
    assert_non_null(a);
    assert_int_equal(tr_adamw_init(&o, m->params.total, LR), 0);
    for (int s = 0; s < STEPS; s++)
        loss[s] = tr_train_step(m, a, &o, &d, MICRO * B, tokens, targets);
    tr_adamw_free(&o);
    tr_data_free(&d);
    tr_acts_free(m, a);
    tr_model_free(m);
}

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
                         .ranks = r->ranks,
                         .dp = r->dp,
                         .tp = r->tp,
                         .microbatches = MICRO,
                         .micro_batch = B,
                         .dp_buckets = dp_buckets};
    mc_comm_t *comm = NULL;
    tr_model *m = tr_model_create(&cfg, SEED);
    tr_data d = tiny_corpus(cfg.seq, DATA_SEED);
    tr_adamw o = {0};
    tr_pipe *p = NULL;
    int tokens[MICRO * B * 8], targets[MICRO * B * 8];
    r->rc = -1;
    if (mc_comm_create(&cp, &comm) || !m || tr_adamw_init(&o, m->params.total, LR) ||
        mc_strategy_parse(r->strategy, &pc.strategy, &pc.sender)) {
        snprintf(r->err, sizeof(r->err), "setup: %s", mc_last_error());
        goto out;
    }
    if (tr_pipe_create(m, &o, comm, &pc, &p, r->err, sizeof(r->err)))
        goto out;
    for (int s = 0; s < STEPS; s++) {
        tr_pipe_stats st;
        tr_data_train_batch(&d, MICRO * B, cfg.seq, tokens, targets);
        if (tr_pipe_step(p, tokens, targets, &st, r->err, sizeof(r->err)))
            goto out;
        r->loss[s] = st.loss;
    }
    r->rc = 0;
out:
    tr_pipe_free(p);
    mc_comm_destroy(comm);
    tr_adamw_free(&o);
    tr_data_free(&d);
    tr_model_free(m);
    return NULL;
}

/* Largest relative difference from the reference over the steps; fails on an error. */
static double run_case(tr_arch arch, mc_sched_kind_t kind, const char *strategy, int ranks, int dp,
                       const int *tp, const float *want)
{
    int n = 0;
    for (int r = 0; r < ranks; r++)
        n += dp * tp[r];
    rank_run r[MAXW];
    pthread_t th[MAXW];
    mc_world_t *world;
    assert_true(n <= MAXW);
    assert_int_equal(mc_world_create(n, &world), MC_OK);
    for (int i = 0; i < n; i++) {
        r[i] = (rank_run){.arch = arch,
                          .kind = kind,
                          .strategy = strategy,
                          .ranks = ranks,
                          .dp = dp,
                          .tp = tp,
                          .world = world,
                          .rank = i};
        assert_int_equal(pthread_create(&th[i], NULL, rank_main, &r[i]), 0);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    mc_world_destroy(world);
    memcpy(last_losses, r[0].loss, sizeof(last_losses));
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        if (r[i].rc)
            fail_msg("%s %s p %d dp %d tp %d,%d %s, rank %d: %s",
                     arch == TR_ARCH_GPT ? "gpt" : "utransformer", mc_sched_kind_name(kind), ranks,
                     dp, tp[0], tp[ranks - 1], strategy, i, r[i].err);
        for (int s = 0; s < STEPS; s++) {
            double rel = fabs((double)r[i].loss[s] - want[s]) / fabs((double)want[s]);
            worst = rel > worst ? rel : worst;
        }
    }
    return worst;
}

static const char *const strategies[] = {"send_recv", "broadcast", "meshcast"};

static void print_tp(const int *tp, int ranks, char *out, size_t len)
{
    int uniform = 1;
    for (int r = 1; r < ranks; r++)
        uniform &= tp[r] == tp[0];
    if (uniform)
        snprintf(out, len, "%d", tp[0]);
    else
        snprintf(out, len, "%d,%d", tp[0], tp[1]);
}

static void check(tr_arch arch, mc_sched_kind_t kind, int s, int ranks, int dp, const int *tp,
                  const float *want)
{
    char t[16];
    print_tp(tp, ranks, t, sizeof(t));
    double rel = run_case(arch, kind, strategies[s], ranks, dp, tp, want);
    printf("  %-3d %-3d %-4s %-17s %-10s %.1e\n", ranks, dp, t,
           ranks > 1 ? mc_sched_kind_name(kind) : "-", strategies[s], rel);
    fflush(stdout);
    assert_true(rel <= 1e-5);
}

/* The matrix: pipeline 1/2/4 ranks x tp 1/2 x dp 1/2 (up to 16 ranks), every
 * schedule, every strategy. Each (ranks, dp, tp) cell runs every schedule once, the
 * strategy rotating with the schedule and the cell (a Latin-square cover: every cell sees
 * every strategy at least twice, every schedule sees every strategy), which keeps the
 * test under a minute; one pipeline rank has no schedule and runs every strategy. Then a
 * different tp per pipeline rank (2,1 and 1,2) with every strategy. */
static void oracle(tr_arch arch)
{
    static const mc_sched_kind_t kinds[] = {
        MC_SCHED_GPIPE, MC_SCHED_1F1B,  MC_SCHED_EAGER_1F1B, MC_SCHED_INTERLEAVED_1F1B,
        MC_SCHED_ZB_H1, MC_SCHED_ZB_H2, MC_SCHED_ZB_V};
    static const int ones[4] = {1, 1, 1, 1}, twos[4] = {2, 2, 2, 2};
    static const int tp21[2] = {2, 1}, tp12[2] = {1, 2};
    float want[STEPS];
    reference(arch, want);
    printf("%s: reference losses %.6f .. %.6f; largest relative difference per run:\n",
           arch == TR_ARCH_GPT ? "gpt" : "utransformer", want[0], want[STEPS - 1]);
    printf("  %-3s %-3s %-4s %-17s %-10s %s\n", "p", "dp", "tp", "schedule", "strategy", "rel");
    int cell = 0;
    for (int ranks = 1; ranks <= 4; ranks *= 2)
        for (int dp = 1; dp <= 2; dp++)
            for (int t = 1; t <= 2; t++, cell++) {
                const int *tp = t == 1 ? ones : twos;
                if (ranks == 1 && dp == 1 && t == 1)
                    continue; /* the reference itself */
                if (ranks == 1) {
                    for (int s = 0; s < 3; s++)
                        check(arch, MC_SCHED_1F1B, s, ranks, dp, tp, want);
                    continue;
                }
                for (int k = 0; k < 7; k++)
                    check(arch, kinds[k], (k + cell) % 3, ranks, dp, tp, want);
            }
    for (int s = 0; s < 3; s++) {
        check(arch, MC_SCHED_EAGER_1F1B, s, 2, 1, tp21, want);
        check(arch, MC_SCHED_1F1B, s, 2, 2, tp12, want);
    }
}

static void test_gpt(void **state)
{
    (void)state;
    oracle(TR_ARCH_GPT);
}

static void test_utransformer(void **state)
{
    (void)state;
    oracle(TR_ARCH_UTRANSFORMER);
}

/* The data-parallel sums in buckets (--dp-buckets 1, 2, 3, 8: one blocking sum; buckets of
 * each stage's layers started as its last backward finishes them, that backward run in parts)
 * give the same losses bit for bit — each element is summed over the replicas in one order
 * whatever the buckets — and one process's within 1e-5. 1 and 2 pipeline ranks, a B schedule
 * and a split I/W one (the buckets start after W), tp 1 and 2,1, both models. */
static void test_buckets(void **state)
{
    (void)state;
    static const int one[2] = {1, 1}, mixed[2] = {2, 1}, counts[4] = {1, 2, 3, 8};
    static const struct {
        mc_sched_kind_t kind;
        int ranks;
        const int *tp;
    } cases[] = {{MC_SCHED_1F1B, 1, one},
                 {MC_SCHED_1F1B, 2, one},
                 {MC_SCHED_ZB_H1, 2, one},
                 {MC_SCHED_EAGER_1F1B, 2, mixed}};
    for (int a = 0; a < 2; a++) {
        const tr_arch arch = a ? TR_ARCH_UTRANSFORMER : TR_ARCH_GPT;
        float want[STEPS], first[STEPS];
        reference(arch, want);
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
            printf("  %-13s p %d %-11s tp %d,%d dp 2, buckets", a ? "utransformer" : "gpt",
                   cases[k].ranks, mc_sched_kind_name(cases[k].kind), cases[k].tp[0],
                   cases[k].tp[cases[k].ranks - 1]);
            for (int b = 0; b < 4; b++) {
                dp_buckets = counts[b];
                double rel = run_case(arch, cases[k].kind, strategies[(k + b) % 3], cases[k].ranks,
                                      2, cases[k].tp, want);
                assert_true(rel <= 1e-5);
                if (b == 0)
                    memcpy(first, last_losses, sizeof(first));
                else
                    assert_memory_equal(first, last_losses, sizeof(first));
                printf(" %d: %.1e", counts[b], rel);
            }
            printf("  (bit for bit)\n");
        }
    }
    dp_buckets = 0;
}

int main(void)
{
    tr_blas_single_thread();
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_gpt),
                                       cmocka_unit_test(test_utransformer),
                                       cmocka_unit_test(test_buckets)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
