/* Progress in the background (MC_PROGRESS_THREAD, MESHCAST_PROGRESS=thread): started
 * reshards complete while the caller sleeps (its first mc_request_test already says done and
 * the bytes are right), in a 3-stage pipeline with both directions in flight; public calls
 * from several threads of one rank at once; a silent participant fails the request while
 * the caller computes; a wait returns as soon as its request is done while another request
 * stays in flight; a bad MESHCAST_PROGRESS is refused. Ranks are threads of an
 * mc_world_t (also run under TSan). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include "stage_case.h"
#include "util/util.h"

#define NCASES 4

typedef struct {
    mc_world_t *world;
    pthread_barrier_t *end;
    int rank;
    stage_case_t **cases;
    int silent;     /* starts nothing, sleeps past the others' timeout */
    int helpers;    /* test and wait from other threads at once */
    double compute; /* seconds slept between start and the first test */
    mc_status_t status, first[NCASES];
    char error[512];
} rank_t;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void *spin_test(void *arg)
{
    mc_status_t s;
    while ((s = mc_request_test(arg)) == MC_INPROGRESS)
        ;
    return (void *)(intptr_t)s;
}

static void *wait_one(void *arg)
{
    return (void *)(intptr_t)mc_request_wait(arg);
}

static void *rank_main(void *arg)
{
    rank_t *r = arg;
    mc_comm_params_t p = {.field_mask =
                              MC_COMM_PARAM_WORLD | MC_COMM_PARAM_TIMEOUT | MC_COMM_PARAM_PROGRESS,
                          .world = r->world,
                          .world_rank = r->rank,
                          .timeout_s = 1.0,
                          .progress = MC_PROGRESS_THREAD};
    mc_comm_t *comm = NULL;
    mc_request_t *req[NCASES] = {0};
    r->status = mc_comm_create(&p, &comm);
    if (!r->status && r->silent)
        sleep_s(2.5);
    for (int i = 0; i < NCASES && !r->status && !r->silent && r->cases[i]; i++)
        if (sc_takes_part(r->cases[i], r->rank))
            r->status = mc_reshard_start(comm, r->cases[i]->plan, r->cases[i]->sbuf,
                                         r->cases[i]->dbuf, NULL, &req[i]);
    sleep_s(r->compute); /* the caller computes; only the progress thread moves data */
    for (int i = 0; i < NCASES; i++)
        r->first[i] = req[i] ? mc_request_test(req[i]) : MC_OK;
    if (r->first[0] != MC_OK && r->first[0] != MC_INPROGRESS)
        snprintf(r->error, sizeof r->error, "%s", mc_last_error());
    if (r->helpers && !r->status) { /* two more threads call test and wait at once */
        pthread_t th[2] = {0};
        int n = 0;
        for (int i = 0; i < NCASES && n < 2; i++)
            if (req[i] && pthread_create(&th[n], NULL, n ? wait_one : spin_test, req[i]) == 0)
                n++;
        for (int i = NCASES - 1; i >= 0 && !r->status; i--)
            if (req[i])
                r->status = mc_request_wait(req[i]);
        for (int i = 0; i < n; i++) {
            void *ret;
            pthread_join(th[i], &ret);
            if (!r->status)
                r->status = (mc_status_t)(intptr_t)ret;
        }
    }
    for (int i = 0; i < NCASES && !r->status; i++)
        if (req[i])
            r->status = mc_request_wait(req[i]);
    if (r->status && !r->error[0])
        snprintf(r->error, sizeof r->error, "%s", mc_last_error());
    for (int i = 0; i < NCASES; i++)
        mc_request_free(req[i]);
    pthread_barrier_wait(r->end);
    mc_comm_destroy(comm);
    return NULL;
}

static void run_ranks(rank_t *ranks)
{
    pthread_t th[SC_RANKS];
    pthread_barrier_t end;
    mc_world_t *world;
    assert_int_equal(mc_world_create(SC_RANKS, &world), MC_OK);
    pthread_barrier_init(&end, NULL, SC_RANKS);
    for (int i = 0; i < SC_RANKS; i++) {
        ranks[i].world = world;
        ranks[i].end = &end;
        ranks[i].rank = i;
        assert_int_equal(pthread_create(&th[i], NULL, rank_main, &ranks[i]), 0);
    }
    for (int i = 0; i < SC_RANKS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&end);
    mc_world_destroy(world);
}

static void make_pipeline(stage_case_t *c, stage_case_t **list)
{
    assert_int_equal(sc_make(&c[0], 0, 1, "S0R", "RS0", "meshcast", 1), 0);
    assert_int_equal(sc_make(&c[1], 1, 2, "RS1", "S0S1", "send_recv", 2), 0);
    assert_int_equal(sc_make(&c[2], 2, 1, "S0R", "RR", "broadcast_lb_size", 3), 0);
    assert_int_equal(sc_make(&c[3], 1, 0, "RS0", "S1R", "meshcast", 4), 0);
    for (int i = 0; i < NCASES; i++)
        list[i] = &c[i];
}

/* Start, sleep, and the first test already finds every request done, bytes exact. */
static void test_done_without_calls(void **state)
{
    (void)state;
    stage_case_t c[NCASES], *list[NCASES], *none[NCASES] = {0};
    make_pipeline(c, list);
    rank_t ranks[SC_RANKS] = {{0}};
    for (int k = 0; k < SC_RANKS; k++) {
        ranks[k].cases = k < 3 ? list : none;
        ranks[k].compute = 0.5;
    }
    run_ranks(ranks);
    for (int k = 0; k < SC_RANKS; k++) {
        assert_int_equal(ranks[k].status, MC_OK);
        for (int i = 0; i < NCASES; i++)
            assert_int_equal(ranks[k].first[i], MC_OK);
    }
    for (int i = 0; i < NCASES; i++) {
        assert_int_equal(sc_wrong(&c[i]), 0);
        sc_free(&c[i]);
    }
}

/* No sleep: test and wait race the progress thread from three threads of each rank. */
static void test_calls_from_threads(void **state)
{
    (void)state;
    for (int round = 0; round < 5; round++) {
        stage_case_t c[NCASES], *list[NCASES], *none[NCASES] = {0};
        make_pipeline(c, list);
        rank_t ranks[SC_RANKS] = {{0}};
        for (int k = 0; k < SC_RANKS; k++) {
            ranks[k].cases = k < 3 ? list : none;
            ranks[k].helpers = 1;
        }
        run_ranks(ranks);
        for (int k = 0; k < SC_RANKS; k++)
            assert_int_equal(ranks[k].status, MC_OK);
        for (int i = 0; i < NCASES; i++) {
            assert_int_equal(sc_wrong(&c[i]), 0);
            sc_free(&c[i]);
        }
    }
}

/* Rank 1 never starts 0->1: while rank 0 computes, its progress thread times out, asks
 * rank 1, and fails the request naming it; ranks 2 and 3 finish 2->3. */
static void test_silent_participant(void **state)
{
    (void)state;
    stage_case_t a, b;
    assert_int_equal(sc_make(&a, 0, 1, "S0R", "RS0", "meshcast", 5), 0);
    assert_int_equal(sc_make(&b, 2, 3, "S0R", "RS0", "send_recv", 6), 0);
    stage_case_t *la[NCASES] = {&a}, *lb[NCASES] = {&b};
    rank_t ranks[SC_RANKS] = {{0}};
    ranks[0].cases = ranks[1].cases = la;
    ranks[2].cases = ranks[3].cases = lb;
    ranks[0].compute = 2.2; /* past the 1 s timeout and the probe's grace */
    ranks[1].silent = 1;
    run_ranks(ranks);
    assert_int_equal(ranks[0].first[0], MC_ERR_TIMEOUT);
    assert_non_null(strstr(ranks[0].error, "rank 1 does not answer"));
    printf("rank 0: %s\n", ranks[0].error);
    assert_int_equal(ranks[2].status, MC_OK);
    assert_int_equal(ranks[3].status, MC_OK);
    assert_int_equal(sc_wrong(&b), 0);
    sc_free(&a);
    sc_free(&b);
}

typedef struct {
    mc_world_t *world;
    int rank;
    stage_case_t *fwd, *back; /* 0->1, then 1->0 */
    double waited;            /* rank 0: seconds in its wait for fwd */
    mc_status_t status;
} pending_rank_t;

/* Rank 0 starts fwd and its side of back, then waits for fwd; rank 1 finishes fwd, computes
 * 2 s, and only then starts back. Ranks 2 and 3 take no part. */
static void *pending_main(void *arg)
{
    pending_rank_t *r = arg;
    mc_comm_params_t p = {.field_mask =
                              MC_COMM_PARAM_WORLD | MC_COMM_PARAM_TIMEOUT | MC_COMM_PARAM_PROGRESS,
                          .world = r->world,
                          .world_rank = r->rank,
                          .timeout_s = 20.0,
                          .progress = MC_PROGRESS_THREAD};
    mc_comm_t *comm = NULL;
    mc_request_t *f = NULL, *b = NULL;
    mc_status_t s = mc_comm_create(&p, &comm);
    if (r->rank >= 2) { /* outside both reshards */
        r->status = s;
        mc_comm_destroy(comm);
        return NULL;
    }
    if (!s)
        s = mc_reshard_start(comm, r->fwd->plan, r->fwd->sbuf, r->fwd->dbuf, NULL, &f);
    if (!s && r->rank == 0)
        s = mc_reshard_start(comm, r->back->plan, r->back->sbuf, r->back->dbuf, NULL, &b);
    double t0 = mc_now();
    if (!s)
        s = mc_request_wait(f);
    r->waited = mc_now() - t0;
    if (!s && r->rank == 1) {
        sleep_s(2.0);
        s = mc_reshard_start(comm, r->back->plan, r->back->sbuf, r->back->dbuf, NULL, &b);
    }
    if (!s)
        s = mc_request_wait(b);
    r->status = s;
    mc_request_free(f);
    mc_request_free(b);
    mc_comm_destroy(comm);
    return NULL;
}

/* The progress thread kept the lock while any request was in flight, so a caller woken in
 * its wait got it back only once the communicator was idle: here, after rank 1's 2 s. */
static void test_wait_beside_pending(void **state)
{
    (void)state;
    stage_case_t fwd, back;
    assert_int_equal(sc_make(&fwd, 0, 1, "S0R", "RS0", "send_recv", 7), 0);
    assert_int_equal(sc_make(&back, 1, 0, "S0R", "RS0", "send_recv", 8), 0);
    mc_world_t *world;
    assert_int_equal(mc_world_create(SC_RANKS, &world), MC_OK);
    pending_rank_t r[SC_RANKS];
    pthread_t th[SC_RANKS];
    for (int i = 0; i < SC_RANKS; i++) {
        r[i] = (pending_rank_t){.world = world, .rank = i, .fwd = &fwd, .back = &back};
        assert_int_equal(pthread_create(&th[i], NULL, pending_main, &r[i]), 0);
    }
    for (int i = 0; i < SC_RANKS; i++)
        pthread_join(th[i], NULL);
    mc_world_destroy(world);
    printf("rank 0 waited %.3f s for its done request\n", r[0].waited);
    assert_int_equal(r[0].status, MC_OK);
    assert_int_equal(r[1].status, MC_OK);
    assert_true(r[0].waited < 1.0);
    assert_int_equal(sc_wrong(&fwd), 0);
    assert_int_equal(sc_wrong(&back), 0);
    sc_free(&fwd);
    sc_free(&back);
}

static void test_setting(void **state)
{
    (void)state;
    mc_world_t *world;
    mc_comm_t *comm = NULL;
    assert_int_equal(mc_world_create(1, &world), MC_OK);
    mc_comm_params_t p = {.field_mask = MC_COMM_PARAM_WORLD, .world = world};
    setenv("MESHCAST_PROGRESS", "threads", 1);
    assert_int_equal(mc_comm_create(&p, &comm), MC_ERR_INVALID);
    assert_non_null(strstr(mc_last_error(), "MESHCAST_PROGRESS='threads'"));
    setenv("MESHCAST_PROGRESS", "thread", 1);
    assert_int_equal(mc_comm_create(&p, &comm), MC_OK);
    mc_comm_destroy(comm);
    unsetenv("MESHCAST_PROGRESS");
    p.field_mask |= MC_COMM_PARAM_PROGRESS;
    p.progress = (mc_progress_mode_t)7;
    assert_int_equal(mc_comm_create(&p, &comm), MC_ERR_INVALID);
    mc_world_destroy(world);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_done_without_calls),
        cmocka_unit_test(test_calls_from_threads),
        cmocka_unit_test(test_silent_participant),
        cmocka_unit_test(test_wait_beside_pending),
        cmocka_unit_test(test_setting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
