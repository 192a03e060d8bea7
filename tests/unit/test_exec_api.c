/* The execution API's contract: bad arguments, several reshards in flight on one
 * communicator, plan mismatch detected at start on every rank, a silent peer failing the
 * request within the timeout with a message naming it, a failed communicator refusing
 * new work, and requests outliving their communicator (tested, waited for and freed after
 * mc_comm_destroy; ASan checks they touch nothing freed). Ranks are threads sharing an
 * mc_world_t. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "meshcast/meshcast.h"
#include "util/util.h"

typedef struct {
    mc_layout_t *src, *dst;
    mc_topology_t *topo;
    mc_plan_t *plan;
    int64_t nsrc, ndst;
    mc_buffer_t *sbuf, *dbuf;
} case_t;

/* f32 64x48 tensor, src 2x2 mesh on devices 0-3, dst 4x1 mesh on 4-7 (2 hosts of 4). */
static void case_make(case_t *c, const char *src_spec, const char *dst_spec, const char *strategy)
{
    mc_mesh_t *sm, *dm;
    mc_spec_t *ss, *ds;
    int64_t shape[2] = {64, 48};
    memset(c, 0, sizeof *c);
    assert_int_equal(mc_mesh_parse("2x2", NULL, 0, &sm), MC_OK);
    assert_int_equal(mc_mesh_parse("4x1", NULL, 4, &dm), MC_OK);
    assert_int_equal(mc_spec_parse(src_spec, sm, 2, &ss), MC_OK);
    assert_int_equal(mc_spec_parse(dst_spec, dm, 2, &ds), MC_OK);
    assert_int_equal(mc_layout_create(2, shape, MC_DTYPE_F32, sm, ss, &c->src), MC_OK);
    assert_int_equal(mc_layout_create(2, shape, MC_DTYPE_F32, dm, ds, &c->dst), MC_OK);
    mc_mesh_destroy(sm);
    mc_mesh_destroy(dm);
    mc_spec_destroy(ss);
    mc_spec_destroy(ds);
    assert_int_equal(mc_topology_load("p3.8xlarge", &c->topo), MC_OK);
    assert_int_equal(mc_topology_set_hosts(c->topo, 2), MC_OK);
    mc_plan_params_t p = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER};
    assert_int_equal(mc_strategy_parse(strategy, &p.strategy, &p.sender), MC_OK);
    assert_int_equal(mc_plan_create(c->src, c->dst, c->topo, &p, &c->plan), MC_OK);
    c->nsrc = c->ndst = 4;
    c->sbuf = calloc(4, sizeof *c->sbuf);
    c->dbuf = calloc(4, sizeof *c->dbuf);
    for (int i = 0; i < 4; i++) {
        c->sbuf[i].ptr = malloc(64 * 48 * 4);
        c->dbuf[i].ptr = calloc(64 * 48, 4);
        assert_int_equal(mc_pattern_fill(c->src, i, 7, c->sbuf[i].ptr), MC_OK);
    }
}

static int64_t case_wrong(const case_t *c)
{
    int64_t total = 0;
    for (int i = 0; i < 4; i++) {
        int64_t w = 0;
        assert_int_equal(mc_pattern_check(c->dst, 4 + i, 7, c->dbuf[i].ptr, &w), MC_OK);
        total += w;
    }
    return total;
}

static void case_free(case_t *c)
{
    for (int i = 0; i < 4; i++) {
        free(c->sbuf[i].ptr);
        free(c->dbuf[i].ptr);
    }
    free(c->sbuf);
    free(c->dbuf);
    mc_plan_destroy(c->plan);
    mc_topology_destroy(c->topo);
    mc_layout_destroy(c->src);
    mc_layout_destroy(c->dst);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    case_t c;
    case_make(&c, "S0R", "S0R", "meshcast");
    mc_comm_t *comm;
    mc_request_t *req = (mc_request_t *)&c; /* must stay untouched on failure */
    assert_int_equal(mc_comm_create(NULL, &comm), MC_OK);
    assert_int_equal(mc_comm_nranks(comm), 1);
    assert_string_equal(mc_comm_transport_name(comm), "local");
    assert_int_equal(mc_reshard_start(NULL, c.plan, c.sbuf, c.dbuf, NULL, &req), MC_ERR_INVALID);
    assert_int_equal(mc_reshard_start(comm, NULL, c.sbuf, c.dbuf, NULL, &req), MC_ERR_INVALID);
    assert_int_equal(mc_reshard_start(comm, c.plan, NULL, c.dbuf, NULL, &req), MC_ERR_INVALID);
    assert_non_null(strstr(mc_last_error(), "src"));
    void *keep = c.dbuf[2].ptr;
    c.dbuf[2].ptr = NULL;
    assert_int_equal(mc_reshard_start(comm, c.plan, c.sbuf, c.dbuf, NULL, &req), MC_ERR_INVALID);
    assert_non_null(strstr(mc_last_error(), "dst buffer of mesh index 2"));
    c.dbuf[2].ptr = keep;
    c.sbuf[1].memory = MC_MEMORY_CUDA;
    assert_int_equal(mc_reshard_start(comm, c.plan, c.sbuf, c.dbuf, NULL, &req),
                     MC_ERR_UNSUPPORTED);
    assert_non_null(strstr(mc_last_error(), "host and CUDA buffers mixed"));
    c.sbuf[1].memory = (mc_memory_t)7;
    assert_int_equal(mc_reshard_start(comm, c.plan, c.sbuf, c.dbuf, NULL, &req), MC_ERR_INVALID);
    assert_non_null(strstr(mc_last_error(), "unknown memory kind 7"));
    c.sbuf[1].memory = MC_MEMORY_HOST;
    mc_reshard_params_t rp = {.field_mask = MC_RESHARD_PARAM_CHUNK_BYTES, .chunk_bytes = 0};
    assert_int_equal(mc_reshard_start(comm, c.plan, c.sbuf, c.dbuf, &rp, &req), MC_ERR_INVALID);
    assert_ptr_equal(req, (mc_request_t *)&c);
    assert_int_equal(mc_request_test(NULL), MC_ERR_INVALID);
    assert_int_equal(mc_request_wait(NULL), MC_ERR_INVALID);
    mc_request_free(NULL);
    mc_comm_destroy(NULL);
    mc_comm_params_t p = {.field_mask = MC_COMM_PARAM_TIMEOUT, .timeout_s = 0};
    assert_int_equal(mc_comm_create(&p, &comm), MC_ERR_INVALID);
    p = (mc_comm_params_t){.field_mask = MC_COMM_PARAM_BOOTSTRAP,
                           .bootstrap = MC_BOOTSTRAP_THREADS};
    mc_comm_t *other = NULL;
    assert_int_equal(mc_comm_create(&p, &other), MC_ERR_INVALID);
    assert_non_null(strstr(mc_last_error(), "world"));
    /* the good call still works, and the result is right */
    assert_int_equal(mc_reshard(comm, c.plan, c.sbuf, c.dbuf, NULL), MC_OK);
    assert_int_equal(case_wrong(&c), 0);
    mc_comm_destroy(comm);
    case_free(&c);
}

typedef struct {
    mc_world_t *world;
    int rank;
    case_t *a, *b; /* two reshards in flight (b may be NULL) */
    int skip;      /* this rank never starts (a silent peer) */
    int destroy;   /* destroys the communicator right after the starts */
    mc_status_t status;
    char error[512];
    double seconds;
} rank_t;

static void *rank_main(void *arg)
{
    rank_t *r = arg;
    mc_comm_params_t p = {.field_mask = MC_COMM_PARAM_WORLD | MC_COMM_PARAM_TIMEOUT,
                          .world = r->world,
                          .world_rank = r->rank,
                          .timeout_s = 1.0};
    mc_comm_t *comm = NULL;
    mc_request_t *ra = NULL, *rb = NULL;
    double t0 = mc_now();
    r->status = mc_comm_create(&p, &comm);
    if (!r->status && r->skip) {
        struct timespec ts = {2, 500000000};
        nanosleep(&ts, NULL); /* silent for longer than the others' timeout */
        mc_comm_destroy(comm);
        return NULL;
    }
    if (!r->status)
        r->status = mc_reshard_start(comm, r->a->plan, r->a->sbuf, r->a->dbuf, NULL, &ra);
    if (!r->status && r->b)
        r->status = mc_reshard_start(comm, r->b->plan, r->b->sbuf, r->b->dbuf, NULL, &rb);
    if (!r->status && r->destroy) { /* the requests outlive it: failed, or done already */
        mc_comm_destroy(comm);
        comm = NULL;
        r->status = mc_request_test(ra);
        assert_int_equal(mc_request_wait(ra), r->status);
        assert_int_not_equal(r->status, MC_INPROGRESS);
    }
    if (!r->status && rb) {
        while ((r->status = mc_request_test(rb)) == MC_INPROGRESS)
            ;
    }
    if (!r->status && ra)
        r->status = mc_request_wait(ra);
    if (r->status)
        snprintf(r->error, sizeof r->error, "%s", mc_last_error());
    r->seconds = mc_now() - t0;
    if (r->status && comm) { /* a failed comm refuses new work */
        mc_request_t *again = NULL;
        mc_status_t s = mc_reshard_start(comm, r->a->plan, r->a->sbuf, r->a->dbuf, NULL, &again);
        if (s == MC_OK)
            mc_request_free(again);
    }
    mc_request_free(ra);
    mc_request_free(rb);
    mc_comm_destroy(comm);
    return NULL;
}

static void run_ranks(rank_t *ranks, int n)
{
    pthread_t th[8];
    mc_world_t *world;
    assert_int_equal(mc_world_create(n, &world), MC_OK);
    for (int i = 0; i < n; i++) {
        ranks[i].world = world;
        ranks[i].rank = i;
        pthread_create(&th[i], NULL, rank_main, &ranks[i]);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    mc_world_destroy(world);
}

static void test_two_in_flight(void **state)
{
    (void)state;
    case_t a, b;
    case_make(&a, "S0R", "RS0", "meshcast");
    case_make(&b, "RR", "S0R", "broadcast_lb_size");
    rank_t ranks[4] = {{0}};
    for (int i = 0; i < 4; i++) {
        ranks[i].a = &a;
        ranks[i].b = &b;
    }
    run_ranks(ranks, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(ranks[i].status, MC_OK);
    assert_int_equal(case_wrong(&a), 0);
    assert_int_equal(case_wrong(&b), 0);
    case_free(&a);
    case_free(&b);
}

static void test_mismatch(void **state)
{
    (void)state;
    case_t a, other;
    case_make(&a, "S0R", "RS0", "meshcast");
    case_make(&other, "S0R", "RS0", "send_recv");
    rank_t ranks[4] = {{0}};
    for (int i = 0; i < 4; i++)
        ranks[i].a = i == 2 ? &other : &a;
    run_ranks(ranks, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ranks[i].status, MC_ERR_MISMATCH);
        assert_non_null(strstr(ranks[i].error, "plans differ"));
        assert_true(ranks[i].seconds < 0.5); /* at start, not after the timeout */
    }
    case_free(&a);
    case_free(&other);
}

static void test_silent_peer(void **state)
{
    (void)state;
    case_t a;
    case_make(&a, "S0R", "RS0", "meshcast");
    rank_t ranks[4] = {{0}};
    for (int i = 0; i < 4; i++)
        ranks[i].a = &a;
    ranks[3].skip = 1;
    run_ranks(ranks, 4);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ranks[i].status, MC_ERR_TIMEOUT);
        /* every rank names the silent one, also those that waited on a healthy rank */
        assert_non_null(strstr(ranks[i].error, "rank 3 does not answer"));
        assert_true(ranks[i].seconds < 1.0 + 1.5);
        printf("rank %d failed after %.2f s: %s\n", i, ranks[i].seconds, ranks[i].error);
    }
    case_free(&a);
}

static void test_free_after_destroy(void **state)
{
    (void)state;
    case_t c;
    case_make(&c, "S0R", "RS0", "meshcast");
    mc_comm_t *comm;
    mc_request_t *done, *running;
    assert_int_equal(mc_comm_create(NULL, &comm), MC_OK);
    assert_int_equal(mc_reshard_start(comm, c.plan, c.sbuf, c.dbuf, NULL, &done), MC_OK);
    assert_int_equal(mc_request_wait(done), MC_OK);
    assert_int_equal(mc_reshard_start(comm, c.plan, c.sbuf, c.dbuf, NULL, &running), MC_OK);
    mc_comm_destroy(comm); /* one rank: the copies finish first */
    assert_int_equal(mc_request_test(done), MC_OK);
    assert_int_equal(mc_request_test(running), MC_OK);
    assert_int_equal(mc_request_wait(running), MC_OK);
    mc_request_free(running);
    mc_request_free(done);
    assert_int_equal(case_wrong(&c), 0);
    /* several ranks: destroyed with the reshard in flight, it fails (or had finished) */
    rank_t ranks[4] = {{0}};
    for (int i = 0; i < 4; i++) {
        ranks[i].a = &c;
        ranks[i].destroy = 1;
    }
    run_ranks(ranks, 4);
    for (int i = 0; i < 4; i++)
        if (ranks[i].status)
            printf("rank %d: %s\n", i, ranks[i].error);
    case_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_arguments),      cmocka_unit_test(test_two_in_flight),
        cmocka_unit_test(test_mismatch),           cmocka_unit_test(test_silent_peer),
        cmocka_unit_test(test_free_after_destroy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
