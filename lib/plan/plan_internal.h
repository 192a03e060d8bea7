/* The plan type and the planner's internal interfaces. A plan is pure data: pieces, and
 * for each piece the flows (sub-boxes) that move it, each along a forest of edges rooted at
 * holders. Programs for ranks are compiled from it (lib/exec) without changing it. */
#ifndef MC_PLAN_INTERNAL_H
#define MC_PLAN_INTERNAL_H

#include "layouts/layout_internal.h"
#include "layouts/pieces.h"
#include "meshcast/plan.h"
#include "topology/topology_internal.h"

/* The least chunk mc_plan_set_chunks gives a flow; strategies model a hop's pipeline fill
 * with it. */
#define MC_PLAN_MIN_CHUNK_BYTES (256 << 10)
#define MC_PLAN_MAX_CHUNK_BYTES (4 << 20)

typedef struct {
    int64_t from, to; /* device ids; from holds the flow's box, or received it earlier */
} mc_edge_t;

typedef struct {
    int64_t piece; /* index into plan->pieces */
    mc_box_t box;  /* sub-box of the piece's box */
    int64_t bytes;
    int64_t chunk_bytes; /* pipeline chunk, a multiple of the element size, > 0 */
    int64_t edge0;       /* first edge in plan->edges */
    int64_t nedges;      /* edges in parent-before-child order */
    /* Reduction flows (partial source): the first ngather edges (gather edges) form a tree
     * into the reducer, the 'to' of the last one: edge X -> Y brings Y X's partial (X's own
     * addend combined with what X's gather edges brought it, which come before; none: the
     * addend alone). The other edges fan the result out from the reducer
     * (lib/plan/reduce_tree.c gives the order of combination). */
    int64_t ngather;
} mc_flow_t;

struct mc_plan {
    /* Unique among the process's plans, never reused (unlike the plan's address): the key
     * under which communicators cache the plan's programs. */
    uint64_t id;
    mc_plan_params_t params;
    mc_layout_t *src, *dst;
    mc_topology_t *topo;
    mc_pieces_t *pieces;
    int64_t nflows, flows_cap;
    mc_flow_t *flows;
    int64_t nedges, edges_cap;
    mc_edge_t *edges;
    mc_plan_stats_t stats;
    /* mc_plan_set_chunks's chunk times this when > 0: meshcast's reductions try smaller
     * chunks than its formula and keep what the simulator finds faster. */
    double chunk_scale;
    /* The largest chunk mc_plan_set_chunks's formula may choose when > 0 (else 4 MiB), and
     * the least too when below MC_PLAN_MIN_CHUNK_BYTES: meshcast's copies try smaller caps
     * and keep what the simulator finds faster. */
    int64_t chunk_cap;
    /* The most chunk transfers mc_plan_set_chunks keeps the plan within when > 0, else
     * MC_PLAN_MAX_CHUNKS: meshcast raises it for a kept plan whose chunks that cap grew,
     * within its work budget (strategy_meshcast.c, try_more_chunks). */
    int64_t max_chunks;
};

/* Building flows. mc_plan_add_flow opens a flow; mc_plan_add_edge appends to the last. */
/* Grows the plan's flow and edge arrays to hold at least flows and edges (a build that knows
 * its size up front, so they are not grown and copied piece by piece). */
mc_status_t mc_plan_reserve(mc_plan_t *plan, int64_t flows, int64_t edges);
mc_status_t mc_plan_add_flow(mc_plan_t *plan, int64_t piece, const mc_box_t *box);
mc_status_t mc_plan_add_edge(mc_plan_t *plan, int64_t from, int64_t to);
/* Appends a gather edge (an addend to the reducer) to the last flow, before its other edges. */
mc_status_t mc_plan_add_gather(mc_plan_t *plan, int64_t from, int64_t to);

/* Strategies fill plan->flows from plan->pieces (chunk sizes are set afterwards). */
mc_status_t mc_strategy_send_recv(mc_plan_t *plan);
mc_status_t mc_strategy_local_allgather(mc_plan_t *plan);
/* local_allgather's plan, with spread (meshcast's candidate) its crossings sent from the
 * holder whose NIC is free first and its needing hosts visited in turn from the holder's on. */
mc_status_t mc_local_allgather_build(mc_plan_t *plan, int spread);
/* At most how many flows and edges (together) local_allgather's plan of the pieces has. */
mc_status_t mc_local_allgather_most(const mc_pieces_t *ps, const mc_topology_t *topo, double *size);
mc_status_t mc_strategy_broadcast(mc_plan_t *plan);
mc_status_t mc_strategy_meshcast(mc_plan_t *plan);
/* Direct sends with a NIC share of the pieces a needer's own host holds, when other hosts
 * hold them too (one of meshcast's candidates); with parts, and a port per NIC, a share of
 * up to 4 MB in 256 KiB parts from several holders; *built = 0 when there is nothing to move
 * (with parts: nothing cut in parts). */
mc_status_t mc_strategy_nic_split(mc_plan_t *plan, int parts, int *built);
/* Multi-tree broadcast over hosts (lib/plan/multitree.c): every piece cut into at most k
 * stripes of at least min_stripe bytes, each sent down its own tree over the hosts that need
 * it, every host forwarding at most as many stripes' copies as there are stripes. */
mc_status_t mc_strategy_multitree(mc_plan_t *plan, int k, int64_t min_stripe);
/* The trees of mc_strategy_multitree for k stripes over n needing hosts (0..n-1) fed by
 * `roots` holder hosts: for stripe j, order[j*n + q] is the host at position q and
 * parent[j*n + q] its parent's position (< q), or -1 - r for holder host r. The first
 * min(roots, n) positions hang off the roots (one each per stripe, or in turn); every host
 * forwards at most k copies in all, each stripe's forwarders taken in turn from a cycle over
 * the hosts that starts at start. */
mc_status_t mc_multitree_shape(int64_t n, int64_t roots, int k, int64_t start, int64_t *order,
                               int64_t *parent);
/* Reductions (partial source), naive: every addend to one device, combined, then sent. */
mc_status_t mc_strategy_reduce_naive(mc_plan_t *plan);
/* Reductions, reduce-scatter + all-gather: one stripe per reducer candidate. Flags:
 * hierarchical: results cross each needing host's NIC once, then fan out inside it;
 * precombine: a stripe's addends on another host than the reducer's are combined in that
 * host first, so that one partial crosses its NIC (never for avg); per host: one reducer
 * candidate per host (fewer, larger stripes). */
enum { MC_RS_HIERARCHICAL = 1, MC_RS_PRECOMBINE = 2, MC_RS_PER_HOST = 4 };
mc_status_t mc_strategy_reduce_scatter(mc_plan_t *plan, unsigned flags);

/* The combine tree of a reduction flow (lib/plan/reduce_tree.c). Combiners come children
 * first, the reducer last; each combines inputs in[in0 .. in0 + nin), ordered by their
 * least addend index: v >= 0 is addend v (the holder's own tile), v < 0 the partial of
 * combiner -v - 1. */
typedef struct {
    int64_t device;
    int64_t out_edge; /* the gather edge (index in the flow) taking its partial on; -1: reducer */
    int64_t in0, nin;
    int64_t least; /* least addend index it combines */
} mc_combiner_t;
typedef struct {
    int64_t ncomb, nin;
    mc_combiner_t *comb;
    int64_t *in;
    int64_t *edge; /* per input: the gather edge (index in the flow) bringing it; -1: own */
} mc_reduce_tree_t;
/* Checks flow fi's gather edges (every addend exactly once, a tree into the reducer, each
 * sender holding an addend and sending once, after its inputs) and builds its tree. */
mc_status_t mc_reduce_tree(const mc_plan_t *plan, int64_t fi, mc_reduce_tree_t *out);
void mc_reduce_tree_free(mc_reduce_tree_t *t);
/* The reducer of a reduction flow (-1 for a copy flow). */
int64_t mc_flow_reducer(const mc_plan_t *plan, const mc_flow_t *f);

/* Rewrites the flows (and their edges) so that flow i is the old flow index[i], in the
 * plan's own arrays (lib/plan/order.c); index must be a permutation of 0..nflows-1. */
mc_status_t mc_plan_permute_flows(mc_plan_t *plan, const int64_t *index);
/* The sending and receiving hosts of flow i's first NIC crossing into *from and *to; 0 (and
 * both -1) when it crosses none (lib/plan/order.c). */
int mc_flow_first_crossing(const mc_plan_t *plan, int64_t i, int64_t *from, int64_t *to);
/* Numbers the marked (non-zero) entries of mark[0..n) 0, 1, ... in place, the others -1;
 * returns how many were marked (lib/plan/order.c). */
int64_t mc_rank_marked(int64_t *mark, int64_t n);
/* Reorders flows like the rounds of an all-to-all (lib/plan/order.c). */
mc_status_t mc_plan_order_rounds(mc_plan_t *plan);
/* Reorders flows by the share of their host pair's bytes before them, then like the rounds
 * of an all-to-all (lib/plan/order_bytes.c). */
mc_status_t mc_plan_order_bytes(mc_plan_t *plan);
/* Reorders flows in rounds that are matchings of sending and receiving hosts, the busiest
 * first, greedy or (maximum) maximum matchings (lib/plan/order_matchings.c); *rounds (may be
 * NULL) gets the number of rounds of NIC flows. Allocates hosts^2 counters. */
mc_status_t mc_plan_order_matchings(mc_plan_t *plan, int maximum, int64_t *rounds);

/* The flow size of equal stripes (lib/plan/stripes_equal.c): the least size s such that the
 * flows of at most s bytes carry at least share of the plan's bytes. */
double mc_stripes_equal_size(const mc_plan_t *plan, double share);
/* Into out (a plan with plan's pieces and topology and no flows), plan's flows each cut into
 * round(bytes / size) stripes, at least 1 (mc_box_split_even), each along the flow's edges,
 * ordered like the rounds of an all-to-all; *built is 0, and out left empty, where that
 * changes no flow, makes more than max_edges edges, or plan is a reduction. */
mc_status_t mc_plan_stripes_equal(const mc_plan_t *plan, double size, int64_t max_edges,
                                  mc_plan_t *out, int *built);

/* Box helpers. */
int64_t mc_box_volume(const mc_box_t *box, int ndim);
/* Cuts box into at most k stripes along its outermost dim of extent >= 2 (k capped by
 * that extent); returns the number written to out (>= 1). */
int mc_box_split(const mc_box_t *box, int ndim, int k, mc_box_t *out);
/* The same along the outermost dim that cuts k stripes within 1/8 of their mean size, else
 * the dim whose largest stripe is least (lib/plan/box_split_even.c). */
int mc_box_split_even(const mc_box_t *box, int ndim, int k, mc_box_t *out);
/* The same as mc_box_split, except that where k is at least twice that extent each of its
 * rows is cut along the next dim of extent >= 2 into k / rows stripes (each still one run of
 * memory per row: lib/plan/box_split_even.c). */
int mc_box_split_deep(const mc_box_t *box, int ndim, int k, mc_box_t *out);
/* The dim along which mc_box_split_deep cuts box's rows again for k stripes, -1 where it
 * cuts as mc_box_split does. */
int mc_box_deep_dim(const mc_box_t *box, int ndim, int k);
/* Whether every flow of plan is its piece's box or a cut of it along the piece's outermost
 * dim of extent >= 2 only (mc_box_split's stripes). */
int mc_stripes_outer(const mc_plan_t *plan);
/* Whether mc_box_split_even may cut some piece of plan (mc_box_split's stripes, as many per
 * piece as mc_box_split made) otherwise. */
int mc_stripes_uneven(const mc_plan_t *plan);

/* Cost model of one edge: link class, bandwidth and latency (docs/planning.md). Inline:
 * the planner asks it several times per edge of every candidate. */
static inline mc_link_class_t mc_edge_class(const mc_topology_t *topo, int64_t from, int64_t to)
{
    if (from == to)
        return MC_LINK_COPY;
    return mc_host_of(topo, from) == mc_host_of(topo, to) ? MC_LINK_INTRA : MC_LINK_NIC;
}

/* Chooses chunk_bytes for every flow (explicit param or √(s·α·B/(L−1)) clamped). */
mc_status_t mc_plan_set_chunks(mc_plan_t *plan);
/* Fills the byte and message counts and peak staging in plan->stats. */
mc_status_t mc_plan_count(mc_plan_t *plan);
/* Per plan edge: 1 where the crossbar rule (lib/plan/crossbar.c) slows it to E times the NIC
 * rate. *slow is NULL when the topology's crossbar is off (no line, or E = 1). */
mc_status_t mc_crossbar_edges(const mc_plan_t *plan, char **slow);
/* Event-driven α–β simulation of the plan; returns seconds. */
mc_status_t mc_plan_simulate(const mc_plan_t *plan, double *seconds);
/* The same, but once the estimate is sure to exceed limit (a port's remaining transfers
 * cannot end by then) it stops and returns a floor under the estimate that exceeds limit:
 * a candidate that cannot win need not be simulated to the end. */
mc_status_t mc_plan_simulate_within(const mc_plan_t *plan, double limit, double *seconds);
/* The simulator's largest arrays, for a planner that simulates many candidates in turn to
 * reuse (mc_plan_simulate_reusing): their pages stay mapped between simulations. */
typedef struct mc_sim_scratch mc_sim_scratch_t;
mc_sim_scratch_t *mc_sim_scratch_new(void); /* NULL: out of memory */
void mc_sim_scratch_free(mc_sim_scratch_t *scratch);
/* mc_plan_simulate_within with scratch's arrays (NULL: arrays of its own). */
mc_status_t mc_plan_simulate_reusing(const mc_plan_t *plan, double limit, mc_sim_scratch_t *scratch,
                                     double *seconds);
/* A floor under mc_plan_simulate's estimate, without simulating: the longest of the
 * busiest port's transfer time (a port serves one chunk at a time), every root-to-edge
 * path's latencies plus the flow's bytes over the path's slowest hop (every chunk crosses
 * it, after the first has come through the hops before it), and the copies. */
mc_status_t mc_plan_floor(const mc_plan_t *plan, double *seconds);
/* Lower bound (docs/planning.md) from pieces and topology. */
mc_status_t mc_bound_compute(const mc_pieces_t *pieces, const mc_topology_t *topo, double *seconds);

/* Fewest messages that bring every incomplete needer the combination of k addends, when
 * nodes start knowing at most max_known of them (lib/plan/bound_reduce.c). */
int64_t mc_reduce_min_messages(int64_t k, int64_t max_known, int64_t incomplete_needers,
                               int needer_knows_some);

/* Max over non-empty host sets X of E(X)/B_out(X) where E(X) sums the sizes of groups whose
 * holder hosts all lie in X: exact, by Dinkelbach iterations of a parametric min-cut.
 * Group g has size[g] bytes and holder hosts hosts[off[g] .. off[g+1]). */
mc_status_t mc_bound_closure(int64_t ngroups, const double *size, const int64_t *off,
                             const int64_t *hosts, int64_t nhosts, const double *bout,
                             double *best);
/* Same by enumerating every subset (tests only; nhosts <= 20). */
double mc_bound_closure_bruteforce(int64_t ngroups, const double *size, const int64_t *off,
                                   const int64_t *hosts, int64_t nhosts, const double *bout);

/* Max over hosts h and sets D of h's devices of paths(U(D); |D|·b_intra, a_intra; b_in,
 * a_nic), in seconds: U(D) the bytes of pieces that devices of h lack and need whose holders in
 * h all lie in D (lib/plan/bound_ports.c). Skips hosts that cannot exceed floor (then *best
 * may be 0). */
mc_status_t mc_bound_device_cut(const mc_pieces_t *pieces, const mc_topology_t *topo,
                                double b_intra, double a_intra, double b_in, double a_nic,
                                double floor, double *best);

/* Bytes that must reach `copies` places through one port of bw bytes/s, each copy straight
 * (alpha1 after it leaves the port) or relayed (alpha1 + alpha2 after the port sent it
 * once): the fewest seconds until every copy arrived (lib/plan/bound_relay.c). Reorders
 * items (most copies first, stably). */
typedef struct {
    double bytes;
    int64_t copies;
} mc_relay_item_t;
mc_status_t mc_bound_relay(mc_relay_item_t *items, int64_t n, double bw, double alpha1,
                           double alpha2, double *seconds);

/* The least T with bytes <= b1·(T − a1)⁺ + b2·(T − a2)⁺: bytes through two ports, each
 * delivering its link latency after it passed them (lib/plan/bound_paths.c). */
double mc_bound_paths(double bytes, double b1, double a1, double b2, double a2);
/* The least T with bytes <= Σ_i rate[i]·(T − start[i])⁺, exactly (the sum is piecewise
 * linear), for at most MC_BOUND_RAMPS_MAX ramps in any order. A rate may be negative where the
 * sum still never falls: a window that closes, as min(w, (T − s)⁺) = (T − s)⁺ − (T − s − w)⁺
 * (lib/plan/bound_paths.c). */
#define MC_BOUND_RAMPS_MAX 8
double mc_bound_ramps(double bytes, const double *rate, const double *start, int n);

/* The host-port term: max over hosts h and j of paths(the j largest bytes[d] of h's devices
 * summed; j·b1, a1; min(b2, j·b2_port), a2): what a device's own port (b1) cannot carry by T
 * comes through its host's NIC (b2), which the host's devices share, and through at most
 * their own NIC ports (b2_port each; b2 where the NICs are pooled)
 * (lib/plan/bound_host_ports.c). */
mc_status_t mc_bound_host_ports(const mc_topology_t *topo, const double *bytes, double b1,
                                double a1, double b2, double b2_port, double a2, double *seconds);

/* The NIC-loop term: the least T with Σ_d (r_dev[d] − x)⁺ + Σ_h max_{d in h} (o_dev[d] − x)⁺
 * ≤ nic_in·(T − a_nic)⁺, x = b_intra·(T − a_intra)⁺: bytes a device's in-port cannot carry
 * arrive over a NIC, and those of pieces that only its host holds and needs (o_dev) arrived
 * at another host first; nic_in is every host's NIC in summed (lib/plan/bound_loops.c). */
mc_status_t mc_bound_loops(const mc_topology_t *topo, const double *r_dev, const double *o_dev,
                           double b_intra, double a_intra, double nic_in, double a_nic,
                           double *seconds);

/* The senders term: per host h, the least T with Σ_{d in h} need[d] ≤ Σ_{d in h}
 * b_intra·(T − a_intra − (early[d] ? 0 : a_min))⁺ + b_in·(T − a_nic)⁺: what h's devices need
 * leaves a device's out-port of h or enters h's NIC, and a device holding nothing a mate
 * needs forwards only what it received; and the same into the in-ports of the k neediest
 * needers, for every k (lib/plan/bound_senders.c). */
mc_status_t mc_bound_senders(const mc_topology_t *topo, const double *need, const char *early,
                             double b_intra, double a_intra, double a_min, double b_in,
                             double a_nic, double *seconds);

/* The slow-start term: needing hosts' lacking pieces as items grouped per host
 * (items[off[h] .. off[h+1]), copies: the host's devices that need it), senders the hosts
 * holding pieces others lack (lib/plan/bound_start.c). Reorders items within each host. */
mc_status_t mc_bound_start(mc_relay_item_t *items, const int64_t *off, int64_t nhosts,
                           int64_t senders, double b_in, double b_out, double a_nic, double a_intra,
                           double *seconds);

/* The rails term: max over hosts h of α_nic + min(α_intra, α_nic) + Q_h / (2 bin[h]), Q_h the
 * bytes of pieces h lacks that some needer in h gets from no holder on its rail (a crossing
 * to it pays a hop or the spine); 0 unless topo is rail-optimized, and for partial sources
 * (lib/plan/bound_rails.c). */
mc_status_t mc_bound_rails(const mc_pieces_t *pieces, const mc_topology_t *topo, const double *bin,
                           double *seconds);
/* The rails-out term: max over hosts A of the least T with E_A <= Σ_j B_j·(T − α_nic −
 * [j ∈ U_A]·min(α_intra, α_nic))⁺, E_A the bytes only A holds that other hosts need and U_A
 * A's NIC ports on whose rail none of their needers sits (those bytes land on a device that
 * passes them on, or cross the spine); 0 unless topo is rail-optimized, and for partial
 * sources (lib/plan/bound_rails_out.c). */
mc_status_t mc_bound_rails_out(const mc_pieces_t *pieces, const mc_topology_t *topo,
                               double *seconds);
/* The rails-in term: the least T by which each needer that no holder's rail reaches can take
 * its bytes through its host's NIC ports, each port with its own latency windows
 * (lib/plan/bound_rails_in.c). */
mc_status_t mc_bound_rails_in(const mc_pieces_t *pieces, const mc_topology_t *topo,
                              double *seconds);

/* Membership tests on a piece's sorted holder / needer lists. */
int mc_piece_needs(const mc_piece_t *p, int64_t device);
int mc_piece_holds(const mc_piece_t *p, int64_t device);
/* Addend index that device holds of piece p (-1: none). */
int64_t mc_piece_addend(const mc_piece_t *p, int64_t device);
/* Whether device has flow f's bytes before the flow runs: a holder of a copy piece (a
 * holder of one addend of several does not have the combined bytes). */
int mc_flow_rooted_at(const mc_plan_t *plan, const mc_flow_t *f, int64_t device);
#endif
