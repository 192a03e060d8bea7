/* Planning cross-mesh resharding: strategies, lower bound, cost-model estimate, output. */
#ifndef MESHCAST_PLAN_H
#define MESHCAST_PLAN_H

#include <stdint.h>
#include <stdio.h>
#include "meshcast/layout.h"
#include "meshcast/status.h"
#include "meshcast/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    MC_STRATEGY_SEND_RECV,       /* every needer gets every piece straight from a holder */
    MC_STRATEGY_LOCAL_ALLGATHER, /* cross each host once in stripes, then all-gather inside */
    MC_STRATEGY_BROADCAST,       /* one broadcast tree per piece from one holder (Alpa) */
    MC_STRATEGY_MESHCAST,        /* multi-source load-balanced pipelined chains (ours) */
    MC_STRATEGY_COUNT
} mc_strategy_t;

typedef enum {
    MC_SENDER_FIRST,   /* first holder (Alpa no_loadbalance) */
    MC_SENDER_LB_SIZE, /* hosts as single NICs, greedy least-loaded by bytes */
    MC_SENDER_LB_ORDER /* randomized greedy over rounds of host-disjoint tasks */
} mc_sender_choice_t;

/* Names used on the command line: "send_recv", "local_allgather", "broadcast"
 * (= broadcast with lb_size), "broadcast_first", "broadcast_lb_size", "broadcast_lb_order",
 * "meshcast". */
mc_status_t mc_strategy_parse(const char *name, mc_strategy_t *strategy,
                              mc_sender_choice_t *sender);
const char *mc_strategy_name(mc_strategy_t strategy, mc_sender_choice_t sender);

enum {
    MC_PLAN_PARAM_STRATEGY = 1u << 0,
    MC_PLAN_PARAM_SENDER = 1u << 1,
    MC_PLAN_PARAM_CHUNK_BYTES = 1u << 2,
    MC_PLAN_PARAM_SEED = 1u << 3
};

typedef struct {
    uint64_t field_mask;       /* MC_PLAN_PARAM_* bits of the fields that are set */
    mc_strategy_t strategy;    /* default MC_STRATEGY_MESHCAST */
    mc_sender_choice_t sender; /* default MC_SENDER_LB_SIZE (broadcast only) */
    int64_t chunk_bytes;       /* pipeline chunk; default 0 = chosen per flow; chunks grow
                                  so that a plan has at most MC_PLAN_MAX_CHUNKS */
    uint64_t seed;             /* randomized choices (lb_order); default 1 */
} mc_plan_params_t;

/* Most chunks (sends after chunking) in a plan, beyond one per message: chunk sizes grow
 * to respect it, so planning time (meshcast simulates its candidates chunk by chunk) does
 * not grow with the tensor's bytes. */
#define MC_PLAN_MAX_CHUNKS ((int64_t)1 << 15)
/* meshcast's kept plan may have up to this many, as its work budget allows, where the cap
 * above grew its chunks and the plan misses its target (docs/planning.md, "more chunks"). */
#define MC_PLAN_MAX_REFINED_CHUNKS ((int64_t)1 << 18)
/* Most deliveries (a piece to a device that needs it) a plan may have: an all-gather over
 * 1,024 devices (1,047,552) fits; meshcast plans it in about 1 s and 170 MB (planning time
 * grows with deliveries: 2^16 in about 0.1-0.3 s). */
#define MC_PLAN_MAX_DELIVERIES ((int64_t)1 << 20)
typedef struct mc_plan mc_plan_t;

/* Plans moving a tensor from src to dst layout (same shape and dtype) on a cluster.
 * Every device id of both meshes must exist in topo. params may be NULL (defaults). */
mc_status_t mc_plan_create(const mc_layout_t *src, const mc_layout_t *dst,
                           const mc_topology_t *topo, const mc_plan_params_t *params,
                           mc_plan_t **out);
void mc_plan_destroy(mc_plan_t *plan);

typedef struct {
    int64_t pieces;             /* boxes with one holder set and one needer set */
    int64_t flows;              /* sub-boxes each sent along one tree */
    int64_t messages;           /* point-to-point sends (tree edges) before chunking */
    int64_t chunks;             /* sends after chunking */
    int64_t nic_bytes;          /* bytes through host NICs (counted once per crossing) */
    int64_t intra_host_bytes;   /* bytes over device-to-device links inside hosts */
    int64_t local_bytes;        /* bytes copied within one device (src and dst buffer) */
    int64_t peak_staging_bytes; /* most temporary bytes any one device needs */
    double estimate_s;          /* event-driven α–β simulation of the plan */
    double lower_bound_s;       /* lower bound for any plan (docs/planning.md) */
    double plan_ms;             /* wall time spent planning */
    int valid;                  /* 1 when the plan validator accepted the plan */
} mc_plan_stats_t;

mc_status_t mc_plan_query(const mc_plan_t *plan, mc_plan_stats_t *out);

/* Re-checks the plan: every needer gets every byte it needs exactly once, from a device
 * that has it then; nothing goes where it is neither needed nor forwarded. */
mc_status_t mc_plan_validate(const mc_plan_t *plan);

typedef enum { MC_FORMAT_TEXT, MC_FORMAT_JSON, MC_FORMAT_DOT } mc_format_t;
mc_status_t mc_plan_write(const mc_plan_t *plan, mc_format_t format, FILE *out);

/* The lower bound alone, without building a plan. */
mc_status_t mc_lower_bound(const mc_layout_t *src, const mc_layout_t *dst,
                           const mc_topology_t *topo, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
