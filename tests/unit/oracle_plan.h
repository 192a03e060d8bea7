/* A bare plan for the bound oracles (test_bound_oracle, test_bound_reduce_oracle,
 * slab_oracle.h), which add every flow themselves: its pieces, from a 1-D i32 tensor of len
 * elements on a source mesh (ndim axes of shape src_shape over src_ids, spec src_spec) to a
 * 1-D destination mesh of ndst devices dst_ids (spec dst_spec), on topo, which the plan then
 * owns. Include after cmocka.h. */
#ifndef MESHCAST_TEST_ORACLE_PLAN_H
#define MESHCAST_TEST_ORACLE_PLAN_H

#include <stdlib.h>
#include "plan/plan_internal.h"

typedef struct {
    mc_plan_t *plan;
    mc_mesh_t *sm, *dm;
    mc_spec_t *ss, *ds;
} oracle_plan_t;

static void oracle_plan_make(oracle_plan_t *o, mc_topology_t *topo, int64_t len, int ndim,
                             const int64_t *src_shape, const int64_t *src_ids, const char *src_spec,
                             int64_t ndst, const int64_t *dst_ids, const char *dst_spec)
{
    int64_t shape[1] = {len}, dst_shape[1] = {ndst};
    mc_layout_t *src = NULL, *dst = NULL;
    *o = (oracle_plan_t){0};
    assert_int_equal(mc_mesh_create(ndim, src_shape, src_ids, NULL, &o->sm), MC_OK);
    assert_int_equal(mc_mesh_create(1, dst_shape, dst_ids, NULL, &o->dm), MC_OK);
    assert_int_equal(mc_spec_parse(src_spec, o->sm, 1, &o->ss), MC_OK);
    assert_int_equal(mc_spec_parse(dst_spec, o->dm, 1, &o->ds), MC_OK);
    assert_int_equal(mc_layout_create(1, shape, MC_DTYPE_I32, o->sm, o->ss, &src), MC_OK);
    assert_int_equal(mc_layout_create(1, shape, MC_DTYPE_I32, o->dm, o->ds, &dst), MC_OK);
    o->plan = calloc(1, sizeof *o->plan);
    assert_non_null(o->plan);
    o->plan->src = src;
    o->plan->dst = dst;
    o->plan->topo = topo;
    assert_int_equal(mc_pieces_compute(src, dst, &o->plan->pieces), MC_OK);
}

static void oracle_plan_free(oracle_plan_t *o)
{
    mc_plan_destroy(o->plan);
    mc_spec_destroy(o->ss);
    mc_spec_destroy(o->ds);
    mc_mesh_destroy(o->sm);
    mc_mesh_destroy(o->dm);
}

#endif
