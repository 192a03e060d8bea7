/* Event-driven α–β simulation of a plan (docs/planning.md).
 *
 * Every edge moves its flow in chunks, store-and-forward: chunk k may leave a relay once it
 * has arrived there. A chunk transfer holds a sender-side port (device out-port inside a
 * host, the host's NIC out across hosts) and a receiver-side port (device in-port / NIC in)
 * for bytes / bandwidth, and arrives one link latency after its last byte left: latency
 * delays a chunk but does not hold the port, as transports keep several messages in flight.
 * Ports are full-duplex and serve one chunk at a time.
 * When a sender port frees, it starts the highest-priority ready chunk whose receiver port
 * is free too (among the next chunks of its MC_QUEUE_FRONT best edges; else the one that can
 * begin soonest), as a NIC
 * serves whichever stream can make progress. Priority is the chunk's byte offset in its
 * flow, so concurrent flows progress at equal rates as over a fair transport. An edge sends
 * its chunks in order, so a port's queue holds one entry per edge with ready chunks (its
 * next one), not one per chunk: the queues stay as short as the edges. Copies between two
 * buffers of one device run on that device's copy engine, in parallel with the network.
 *
 * A host with a finite host bandwidth H (ranks copying through shared memory on the host's
 * CPUs) moves at most H bytes/s over all its intra-host transfers at once: each intra-host
 * chunk also books bytes / H of its host's time, in start order, and holds its ports until
 * that booking ends too. NIC chunks book nothing: the NIC's own rate limits them. A machine
 * bandwidth M (hosts emulated on one machine, whose cores do every host's copies) is one
 * more such booking, shared by the intra-host chunks of all hosts; with a machine message
 * cost, each of those chunks books that much more machine time (the cores' work per
 * message, whatever its size: waking the receiver, matching, bookkeeping). With a NIC
 * message cost, a NIC chunk holds both its NIC ports that much longer than its bytes take
 * (posting, completing and matching one message, whatever its size). A NIC edge
 * between crossbar hosts (lib/plan/crossbar.c) runs at the crossbar efficiency times the
 * NIC rate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "events.h"
#include "heap.h"
#include "plan_internal.h"
#include "topology/topology_internal.h"
#include "util/util.h"

/* EV_ARRIVE: a chunk arrived at the end of an edge, ready on each of its children in turn
 * (one event rather than one per child: they would have had the same time and consecutive
 * sequence numbers, so nothing could come between them). An event's item holds
 * (id << EV_BITS) | type: a port for EV_FREE, the edge for the others; which chunk arrived is
 * the edge's count of arrivals, as an edge's chunks arrive in order (each leaves its port
 * after the one before it, over one latency) and equal times pop in push order. */
enum { EV_ARRIVE, EV_FREE, EV_JOIN };
#define EV_BITS 2

/* An edge, 32 bytes (the simulator's largest array, read at random once per chunk: its size
 * is the simulation's cache misses and fresh pages). Edges, flows, resources and chunks of a
 * flow are below 2^31 (checked); what a reduction's edges need more is in sim_t's join and
 * arrived, and the host of an intra-host edge is its sender's. */
typedef struct {
    int32_t flow;           /* in sim.flows: its bytes and chunk */
    int32_t r_send, r_recv; /* resource indices: a device's out-port is the device */
    int32_t child0, nchild; /* children edges in sim.children */
    int32_t next, ready;    /* chunks [next, ready) have arrived and wait to be sent */
    int32_t link;           /* in sim.links: its latency and seconds per byte */
} sim_edge_t;

typedef struct {
    int64_t bytes, chunk; /* the flow's bytes and chunk_bytes */
} sim_flow_t;

/* The links an edge may take: intra-host, and a NIC one on the same rail or across them, at
 * the NIC rate or slowed by the crossbar (LINK_NIC + 1 for across rails, + 2 slowed). */
enum { LINK_INTRA, LINK_NIC, NLINKS = LINK_NIC + 4 };
typedef struct {
    double latency, inv_bw;
    double msg; /* port time per chunk besides its bytes (the NIC's message cost) */
} sim_link_t;

/* A combine of a reduction flow (docs/planning.md#reductions): chunk k of its result is
 * there once chunk k of each of its need gather edges arrived; then it is ready on the
 * edges that leave the combiner (its partial, or the reducer's result edges). */
typedef struct {
    int64_t need;
    int64_t *count;         /* per chunk: gather edges arrived */
    int64_t child0, nchild; /* edges in sim.join_children */
} sim_join_t;

/* The simulator's largest arrays, kept between the simulations of one planning call
 * (mc_sim_scratch_t): taken afresh, each simulation of a large plan faulted its pages in
 * again, which on a virtual machine cost about a sixth of a plan's time. */
struct mc_sim_scratch {
    sim_flow_t *flows;
    sim_edge_t *edges;
    int32_t *children; /* as many as edges */
    int64_t flows_cap, edges_cap;
    mc_queue_t *waiting; /* nres queues, cleared before each use */
    int64_t nres;
    mc_events_t events;
};

typedef struct {
    const mc_plan_t *plan;
    int64_t ndev;
    sim_flow_t *flows;
    sim_edge_t *edges;
    int32_t *children;
    sim_link_t links[NLINKS];
    int64_t njoins;
    sim_join_t *joins;
    int64_t *join_children, *join_counts;
    /* per edge, only for plans with reductions (else NULL): the combine a gather edge's
     * chunks arrive at (else -1), the chunks whose arrival there was handled (an edge's
     * chunks arrive in order), and whether it leaves a combine (its chunks come from it) */
    int32_t *join;
    int64_t *arrived;
    char *fed;
    mc_events_t *events;
    mc_queue_t *waiting; /* per resource: edges with ready chunks that need it as sender port */
    double *free_at;     /* per resource: time it becomes free */
    char *busy;          /* per sender resource */
    double *host_free;   /* per host: end of its booked time */
    double inv_host;     /* seconds per byte of host bandwidth; 0 when unlimited */
    double machine_free; /* end of the machine's booked time */
    double inv_machine;  /* seconds per byte of machine bandwidth; 0 when unlimited */
    double machine_msg;  /* machine seconds per intra-host chunk */
    double makespan;
    double *work; /* per resource: seconds of transfers it has yet to start */
    double limit; /* stop once the makespan is sure to exceed this */
    int stopped;  /* ... which happened: makespan holds a floor above limit */
} sim_t;

static int64_t nchunks(const mc_flow_t *f)
{
    return (f->bytes + f->chunk_bytes - 1) / f->chunk_bytes;
}

static double chunk_bytes(const sim_flow_t *f, int64_t k)
{
    int64_t rest = f->bytes - k * f->chunk;
    return (double)(rest < f->chunk ? rest : f->chunk);
}

static mc_status_t push_event(sim_t *s, double t, int type, int64_t id)
{
    return mc_events_push(s->events, t, id << EV_BITS | type);
}

/* Queues edge e's next chunk at its sender port, keyed by the chunk's offset, ties by the
 * edge; the item carries the receiver port (low 32 bits), which the lookahead reads, and the
 * edge's flow (high 32 bits), which try_start prefetches (the chunk is the edge's next). */
static mc_status_t queue_edge(sim_t *s, int64_t e)
{
    const sim_edge_t *se = &s->edges[e];
    double offset = (double)se->next * (double)s->flows[se->flow].chunk;
    int64_t a = (int64_t)se->flow << 32 | se->r_recv;
    return mc_queue_push(&s->waiting[se->r_send], (mc_heap_item_t){offset, e, a});
}

/* count more chunks of edge e arrived at its sender; the edge joins its port's queue if it
 * had none waiting. */
static mc_status_t make_ready(sim_t *s, int64_t e, int64_t count)
{
    sim_edge_t *se = &s->edges[e];
    int idle = se->next == se->ready;
    se->ready += count;
    return idle ? queue_edge(s, e) : MC_OK;
}

/* Books bytes of a shared bandwidth (inv seconds per byte, 0 = unlimited) plus fixed
 * seconds from start on, after its last booking *free_at; returns until, or the booking's
 * end if later. */
static double book(double *free_at, double inv, double fixed, double start, double bytes,
                   double until)
{
    if (inv <= 0)
        return until;
    *free_at = (*free_at > start ? *free_at : start) + bytes * inv + fixed;
    return *free_at > until ? *free_at : until;
}

/* Starts at most one chunk on sender resource r at time t. */
static mc_status_t try_start(sim_t *s, int64_t r, double t)
{
    mc_queue_t *w = &s->waiting[r];
    int best = -1;
    mc_status_t st;
    if (s->busy[r] || w->nfront == 0)
        return MC_OK;
    double best_start = 0;
    for (int i = 0; i < w->nfront; i++) {
        double start = s->free_at[(uint32_t)w->front[i].a];
        start = start > t ? start : t;
        if (best < 0 || start < best_start) {
            best_start = start;
            best = i;
        }
        if (start <= t)
            break;
    }
    mc_heap_item_t chosen = mc_queue_remove(w, best);
    if (w->nfront > 0) { /* the port's likely next chunk, read when it frees */
        __builtin_prefetch(&s->edges[w->front[0].tie]);
        __builtin_prefetch(&s->flows[w->front[0].a >> 32]);
    }
    sim_edge_t *e = &s->edges[chosen.tie];
    const sim_link_t *link = &s->links[e->link];
    int64_t k = e->next++;
    if (e->next < e->ready && (st = queue_edge(s, chosen.tie)))
        return st;
    double bytes = chunk_bytes(&s->flows[e->flow], k);
    double held = bytes * link->inv_bw + link->msg, busy_until = best_start + held;
    /* an intra-host chunk (its sender port a device's) books its host's and the machine's
     * shared bandwidth, where they are limited (book changes nothing where they are not) */
    if (r < s->ndev && (s->inv_host > 0 || s->inv_machine > 0)) {
        int64_t host = mc_host_of(s->plan->topo, r);
        busy_until = book(&s->machine_free, s->inv_machine, s->machine_msg, best_start, bytes,
                          book(&s->host_free[host], s->inv_host, 0, best_start, bytes, busy_until));
    }
    double arrival = busy_until + link->latency;
    s->free_at[e->r_recv] = busy_until;
    s->free_at[r] = busy_until;
    s->busy[r] = 1;
    if (arrival > s->makespan)
        s->makespan = arrival;
    /* both ports serve their other transfers one at a time after this one */
    s->work[r] -= held;
    s->work[e->r_recv] -= held;
    double rest = s->work[r] > s->work[e->r_recv] ? s->work[r] : s->work[e->r_recv];
    if (busy_until + rest > s->limit || s->makespan > s->limit) {
        s->stopped = 1;
        s->makespan = busy_until + rest > s->makespan ? busy_until + rest : s->makespan;
        return MC_OK;
    }
    if ((st = push_event(s, busy_until, EV_FREE, r)))
        return st;
    if (s->join && s->join[chosen.tie] >= 0)
        return push_event(s, arrival, EV_JOIN, chosen.tie);
    return e->nchild ? push_event(s, arrival, EV_ARRIVE, chosen.tie) : MC_OK;
}

/* Events between two looks at every port's remaining transfers (an idle port's floor grows
 * with the clock, which try_start's look at the ports it starts does not see). */
#define CHECK_EVERY 512

/* Stops the simulation if some port's remaining transfers cannot end by the limit: they
 * start at t or later, and once the port is free. */
static void stop_check(sim_t *s, int64_t nres, double t)
{
    double worst = s->makespan;
    for (int64_t r = 0; r < nres; r++) {
        double end = (s->free_at[r] > t ? s->free_at[r] : t) + s->work[r];
        worst = end > worst ? end : worst;
    }
    if (worst > s->limit) {
        s->stopped = 1;
        s->makespan = worst;
    }
}

/* Fills flows[], edges[] (ports, links) and the children lists: an edge's parent is the last
 * edge of its flow into its sender, found in the flow's own edges, and its children are
 * listed among its flow's own slots of children[] (a flow has fewer children than edges). */
static mc_status_t build_edges(sim_t *s)
{
    const mc_plan_t *plan = s->plan;
    const mc_topology_t *topo = plan->topo;
    int64_t ndev = mc_topology_devices(topo), nhost = mc_topology_hosts(topo);
    int64_t *last_in = mc_calloc((size_t)ndev, sizeof *last_in);
    int32_t *parent = NULL; /* per edge of the flow: its parent, or -1 */
    int64_t parent_cap = 0;
    char *slow = NULL; /* crossbar transfers */
    mc_status_t st = MC_OK;
    if (!last_in) {
        st = MC_ERR_NOMEM;
        goto out;
    }
    if ((st = mc_crossbar_edges(plan, &slow)))
        goto out;
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA);
    mc_link_t nic = mc_topology_link(topo, MC_LINK_NIC);
    /* pooled: one port per host at the NICs' summed rate; with affinity one per NIC */
    int64_t nports = nhost * mc_topology_nic_ports(topo);
    double inv_nic = mc_topology_nic_port_seconds_per_byte(topo);
    s->links[LINK_INTRA] = (sim_link_t){intra.latency, 1.0 / intra.bandwidth, 0};
    for (int64_t fi = 0; fi < plan->nflows; fi++) {
        const mc_flow_t *f = &plan->flows[fi];
        s->flows[fi] = (sim_flow_t){f->bytes, f->chunk_bytes};
        if (f->nedges > parent_cap) {
            free(parent);
            parent_cap = f->nedges;
            if (!(parent = malloc((size_t)parent_cap * sizeof *parent))) {
                st = MC_ERR_NOMEM;
                goto out;
            }
        }
        int64_t red = f->ngather ? mc_flow_reducer(plan, f) : -1;
        for (int64_t j = 0; j < f->nedges; j++) {
            int64_t g = f->edge0 + j;
            const mc_edge_t *pe = &plan->edges[g];
            sim_edge_t *e = &s->edges[g];
            const sim_link_t *link;
            e->flow = (int32_t)fi;
            e->nchild = e->next = e->ready = 0;
            /* last_in holds (edge + 1) of the device's incoming edge in this flow */
            int64_t in = last_in[pe->from];
            parent[j] = in > f->edge0 ? (int32_t)(in - 1) : -1;
            if (j < f->ngather || (f->ngather && pe->from == red))
                parent[j] = -1; /* a combine's input or output: joins (build_joins) */
            if (parent[j] >= 0)
                s->edges[parent[j]].nchild++;
            last_in[pe->to] = g + 1;
            if (mc_edge_class(topo, pe->from, pe->to) == MC_LINK_NIC) {
                double extra = mc_topology_nic_extra_latency(topo, pe->from, pe->to);
                int slowed = slow && slow[g];
                e->r_send = (int32_t)(2 * ndev + mc_topology_nic_port(topo, pe->from));
                e->r_recv = (int32_t)(2 * ndev + nports + mc_topology_nic_port(topo, pe->to));
                e->link = LINK_NIC + (extra != 0) + 2 * slowed;
                s->links[e->link] =
                    (sim_link_t){nic.latency + extra,
                                 slowed ? inv_nic / topo->crossbar_eff : inv_nic, topo->nic_msg_s};
            } else {
                e->r_send = (int32_t)pe->from;
                e->r_recv = (int32_t)(ndev + pe->to);
                e->link = LINK_INTRA;
            }
            link = &s->links[e->link];
            double held = (double)f->bytes * link->inv_bw + (double)nchunks(f) * link->msg;
            s->work[e->r_send] += held;
            s->work[e->r_recv] += held;
        }
        /* the children of each edge, in edge order, from the flow's first slot on */
        int64_t off = f->edge0;
        for (int64_t j = 0; j < f->nedges; j++) {
            sim_edge_t *e = &s->edges[f->edge0 + j];
            e->child0 = (int32_t)off;
            off += e->nchild;
            e->nchild = 0;
        }
        for (int64_t j = 0; j < f->nedges; j++)
            if (parent[j] >= 0) {
                sim_edge_t *p = &s->edges[parent[j]];
                s->children[p->child0 + p->nchild++] = (int32_t)(f->edge0 + j);
            }
    }
out:
    free(slow);
    free(last_in);
    free(parent);
    return st;
}

/* The combines of reduction flows: one per device that gather edges go to, in each flow;
 * its inputs are those edges, its outputs the edges leaving that device in the gather
 * phase, or the result edges when it is the reducer. Edge roots: gather edges from devices
 * that combine nothing (ready at the start). */
static mc_status_t build_joins(sim_t *s)
{
    const mc_plan_t *plan = s->plan;
    int64_t ndev = mc_topology_devices(plan->topo), nj = 0, nchild = 0, ncount = 0;
    int64_t first = 0;
    while (first < plan->nflows && !plan->flows[first].ngather)
        first++;
    if (first == plan->nflows)
        return MC_OK;                                            /* no reduction: no combines */
    int64_t *join_of = mc_calloc((size_t)ndev, sizeof *join_of); /* join + 1, this flow */
    int64_t *stamp = mc_calloc((size_t)ndev, sizeof *stamp);
    s->join = mc_malloc((size_t)plan->nedges + 1, sizeof *s->join);
    s->arrived = mc_calloc((size_t)plan->nedges + 1, sizeof *s->arrived);
    s->fed = mc_calloc((size_t)plan->nedges + 1, 1);
    mc_status_t st = MC_OK;
    if (!join_of || !stamp || !s->join || !s->arrived || !s->fed) {
        st = MC_ERR_NOMEM;
        goto out;
    }
    for (int64_t g = 0; g < plan->nedges; g++)
        s->join[g] = -1;
    for (int pass = 0; pass < 2; pass++) { /* count, then fill */
        nj = nchild = ncount = 0;
        for (int64_t fi = 0; fi < plan->nflows; fi++) {
            const mc_flow_t *f = &plan->flows[fi];
            if (!f->ngather) /* not a reduction: no combines, no device stamped below */
                continue;
            int64_t red = mc_flow_reducer(plan, f), base = nj;
            for (int64_t j = 0; j < f->ngather; j++) {
                int64_t to = plan->edges[f->edge0 + j].to;
                if (stamp[to] != pass * plan->nflows + fi + 1) {
                    stamp[to] = pass * plan->nflows + fi + 1;
                    join_of[to] = ++nj;
                    if (pass)
                        s->joins[nj - 1] = (sim_join_t){.count = s->join_counts + ncount};
                    ncount += nchunks(f);
                }
                if (pass) {
                    s->join[f->edge0 + j] = (int32_t)(join_of[to] - 1);
                    s->joins[join_of[to] - 1].need++;
                }
            }
            /* outputs: the edges leaving a combining device in the gather phase, and the
             * reducer's result edges; counted per join, then placed in edge order */
            for (int step = 0; step < 1 + pass; step++) {
                for (int64_t x = base; pass && step == 1 && x < nj; x++) {
                    s->joins[x].child0 = nchild;
                    nchild += s->joins[x].nchild;
                    s->joins[x].nchild = 0;
                }
                for (int64_t j = 0; j < f->nedges; j++) {
                    int64_t from = plan->edges[f->edge0 + j].from;
                    if (stamp[from] != pass * plan->nflows + fi + 1 ||
                        (j >= f->ngather && from != red))
                        continue;
                    sim_join_t *jn = pass ? &s->joins[join_of[from] - 1] : NULL;
                    if (!pass)
                        nchild++;
                    else if (step == 0)
                        jn->nchild++;
                    else
                        s->join_children[jn->child0 + jn->nchild++] = f->edge0 + j;
                    if (pass)
                        s->fed[f->edge0 + j] = 1;
                }
            }
        }
        if (pass == 0) {
            s->njoins = nj;
            s->joins = mc_calloc((size_t)nj + 1, sizeof *s->joins);
            s->join_children = mc_calloc((size_t)nchild + 1, sizeof *s->join_children);
            s->join_counts = mc_calloc((size_t)ncount + 1, sizeof *s->join_counts);
            if (!s->joins || !s->join_children || !s->join_counts) {
                st = MC_ERR_NOMEM;
                goto out;
            }
        }
    }
out:
    free(join_of);
    free(stamp);
    return st;
}

/* Chunk k of a gather edge arrived at its combine: when it was the last input, the
 * combined chunk is ready on the combine's outputs. */
static mc_status_t join_arrived(sim_t *s, int64_t j, int64_t k, double t)
{
    sim_join_t *jn = &s->joins[j];
    if (++jn->count[k] < jn->need)
        return MC_OK;
    mc_status_t st = MC_OK;
    for (int64_t c = 0; c < jn->nchild && !st; c++) {
        int64_t e = s->join_children[jn->child0 + c];
        if (!(st = make_ready(s, e, 1)))
            st = try_start(s, s->edges[e].r_send, t);
    }
    return st;
}

/* Local copies run on each device's copy engine, one after another. */
static mc_status_t copy_time(const mc_plan_t *plan, double *worst)
{
    int64_t ndev = mc_topology_devices(plan->topo);
    double *t = mc_calloc((size_t)ndev, sizeof *t);
    mc_link_t copy = mc_topology_link(plan->topo, MC_LINK_COPY);
    if (!t)
        return MC_ERR_NOMEM;
    *worst = 0;
    for (int64_t i = 0; i < plan->pieces->npieces; i++) {
        const mc_piece_t *p = &plan->pieces->pieces[i];
        for (int j = 0; j < p->nself; j++) {
            double *d = &t[p->self[j]];
            *d += copy.latency + (double)p->bytes / copy.bandwidth;
            *worst = *d > *worst ? *d : *worst;
        }
    }
    free(t);
    return MC_OK;
}

mc_status_t mc_plan_floor(const mc_plan_t *plan, double *seconds)
{
    const mc_topology_t *topo = plan->topo;
    int64_t ndev = mc_topology_devices(topo),
            nports = mc_topology_hosts(topo) * mc_topology_nic_ports(topo);
    double *t = mc_calloc((size_t)(2 * ndev + 2 * nports), sizeof *t);
    /* per edge of a flow: latencies and the slowest hop's seconds per byte from the flow's
     * root (each edge's are written before a later edge of its flow reads them as its
     * parent's: arrays for the longest flow, not for the plan's edges) */
    int64_t most = 1;
    for (int64_t fi = 0; fi < plan->nflows; fi++)
        most = plan->flows[fi].nedges > most ? plan->flows[fi].nedges : most;
    double *alpha = malloc((size_t)most * sizeof *alpha);
    double *inv = malloc((size_t)most * sizeof *inv);
    int64_t *last_in = mc_calloc((size_t)ndev, sizeof *last_in);
    if (!t || !alpha || !inv || !last_in) {
        free(t);
        free(alpha);
        free(inv);
        free(last_in);
        return MC_ERR_NOMEM;
    }
    mc_link_t intra = mc_topology_link(topo, MC_LINK_INTRA),
              nic = mc_topology_link(topo, MC_LINK_NIC);
    double inv_nic = mc_topology_nic_port_seconds_per_byte(topo), inv_intra = 1.0 / intra.bandwidth;
    double worst = 0;
    for (int64_t fi = 0; fi < plan->nflows; fi++) {
        const mc_flow_t *f = &plan->flows[fi];
        double bytes = (double)f->bytes;
        for (int64_t j = 0; j < f->nedges; j++) {
            int64_t g = f->edge0 + j;
            const mc_edge_t *e = &plan->edges[g];
            int cross = mc_edge_class(topo, e->from, e->to) == MC_LINK_NIC;
            double *out = cross ? &t[2 * ndev + mc_topology_nic_port(topo, e->from)] : &t[e->from];
            double *in = cross ? &t[2 * ndev + nports + mc_topology_nic_port(topo, e->to)]
                               : &t[ndev + e->to];
            double hop = cross ? inv_nic : inv_intra;
            *out += bytes * hop;
            *in += bytes * hop;
            /* the parent edge, as the simulator finds it: the last one into the sender (its
             * place in the flow) */
            int64_t parent = last_in[e->from] > f->edge0 ? last_in[e->from] - 1 - f->edge0 : -1;
            last_in[e->to] = g + 1;
            alpha[j] = (parent >= 0 ? alpha[parent] : 0) +
                       (cross ? nic.latency + mc_topology_nic_extra_latency(topo, e->from, e->to)
                              : intra.latency);
            inv[j] = parent >= 0 && inv[parent] > hop ? inv[parent] : hop;
            double path = alpha[j] + bytes * inv[j];
            worst = *out > worst ? *out : worst;
            worst = *in > worst ? *in : worst;
            worst = path > worst ? path : worst;
        }
    }
    free(t);
    free(alpha);
    free(inv);
    free(last_in);
    double copies = 0;
    mc_status_t st = copy_time(plan, &copies);
    *seconds = worst > copies ? worst : copies;
    if (*seconds > 0)
        *seconds += topo->reshard_s;
    return st;
}

mc_status_t mc_plan_simulate(const mc_plan_t *plan, double *seconds)
{
    return mc_plan_simulate_reusing(plan, INFINITY, NULL, seconds);
}

mc_status_t mc_plan_simulate_within(const mc_plan_t *plan, double limit, double *seconds)
{
    return mc_plan_simulate_reusing(plan, limit, NULL, seconds);
}

mc_sim_scratch_t *mc_sim_scratch_new(void)
{
    return mc_calloc(1, sizeof(mc_sim_scratch_t));
}

/* Frees the scratch's port queues. */
static void waiting_free(mc_sim_scratch_t *x)
{
    for (int64_t r = 0; x->waiting && r < x->nres; r++)
        mc_queue_free(&x->waiting[r]);
    free(x->waiting);
    x->waiting = NULL;
    x->nres = 0;
}

/* Frees the scratch's arrays, leaving it empty. */
static void scratch_clear(mc_sim_scratch_t *x)
{
    waiting_free(x);
    mc_events_free(&x->events);
    free(x->flows);
    free(x->edges);
    free(x->children);
    memset(x, 0, sizeof *x);
}

void mc_sim_scratch_free(mc_sim_scratch_t *x)
{
    if (x)
        scratch_clear(x);
    free(x);
}

/* Room in x for the plan's flows and edges and nres empty port queues, and an empty event
 * queue (what the arrays held is left: build_edges writes every field it reads). */
static mc_status_t scratch_fit(mc_sim_scratch_t *x, int64_t nflows, int64_t nedges, int64_t nres)
{
    /* grown to twice the need: pages never touched cost nothing, and a plan a little larger
     * than the last then finds them mapped */
    if (nflows + 1 > x->flows_cap) {
        free(x->flows);
        x->flows_cap = 2 * (nflows + 1);
        if (!(x->flows = mc_malloc((size_t)x->flows_cap, sizeof *x->flows))) {
            x->flows_cap = 0;
            return MC_ERR_NOMEM;
        }
    }
    if (nedges + 1 > x->edges_cap) {
        /* edges aligned to cache lines, two to a line */
        free(x->edges);
        free(x->children);
        x->children = NULL;
        x->edges_cap = 2 * (nedges + 1);
        size_t bytes = (size_t)x->edges_cap * sizeof *x->edges;
        if (!(x->edges = aligned_alloc(64, (bytes + 63) / 64 * 64)) ||
            !(x->children = mc_malloc((size_t)x->edges_cap, sizeof *x->children))) {
            x->edges_cap = 0;
            return MC_ERR_NOMEM;
        }
        mc_advise_huge(x->edges, bytes);
    }
    if (nres != x->nres) {
        waiting_free(x);
        if (!(x->waiting = mc_calloc((size_t)nres, sizeof *x->waiting)))
            return MC_ERR_NOMEM;
        x->nres = nres;
    }
    for (int64_t r = 0; r < nres; r++)
        mc_queue_clear(&x->waiting[r]);
    mc_events_clear(&x->events);
    return MC_OK;
}

mc_status_t mc_plan_simulate_reusing(const mc_plan_t *plan, double limit, mc_sim_scratch_t *scratch,
                                     double *seconds)
{
    mc_sim_scratch_t own = {0};
    mc_sim_scratch_t *x = scratch ? scratch : &own;
    int64_t ndev = mc_topology_devices(plan->topo), nhost = mc_topology_hosts(plan->topo);
    int64_t nres = 2 * ndev + 2 * nhost * mc_topology_nic_ports(plan->topo);
    /* the floor is compared with a margin for the rounding of the work sums */
    sim_t s = {.plan = plan, .ndev = ndev, .limit = (limit - plan->topo->reshard_s) * (1 + 1e-9)};
    mc_status_t st = MC_OK;
    int64_t most_chunks = 0;
    for (int64_t fi = 0; fi < plan->nflows; fi++)
        most_chunks =
            nchunks(&plan->flows[fi]) > most_chunks ? nchunks(&plan->flows[fi]) : most_chunks;
    /* sim_edge_t's int32_t indices and chunk counts */
    if (nres > INT32_MAX || plan->nedges > INT32_MAX || plan->nflows > INT32_MAX ||
        most_chunks > INT32_MAX)
        return mc_error(MC_ERR_INVALID, "plan too large to simulate");
    /* the largest arrays uncleared: build_edges writes every field of each flow and edge,
     * and children up to their count (calloc would clear them first, 6% of some plans'
     * instructions) */
    if (scratch_fit(x, plan->nflows, plan->nedges, nres)) {
        st = mc_error(MC_ERR_NOMEM, "out of memory simulating the plan");
        goto out;
    }
    s.flows = x->flows;
    s.edges = x->edges;
    s.children = x->children;
    s.waiting = x->waiting;
    s.events = &x->events;
    s.free_at = mc_calloc((size_t)nres, sizeof *s.free_at);
    s.busy = mc_calloc((size_t)nres, 1);
    s.host_free = mc_calloc((size_t)nhost, sizeof *s.host_free);
    s.work = mc_calloc((size_t)nres, sizeof *s.work);
    double host_bw = mc_topology_host_bandwidth(plan->topo);
    s.inv_host = host_bw > 0 ? 1.0 / host_bw : 0;
    s.inv_machine = plan->topo->machine_bw > 0 ? 1.0 / plan->topo->machine_bw : 0;
    s.machine_msg = plan->topo->machine_msg_s;
    if (!s.free_at || !s.busy || !s.host_free || !s.work) {
        st = mc_error(MC_ERR_NOMEM, "out of memory simulating the plan");
        goto out;
    }
    if ((st = build_edges(&s)) || (st = build_joins(&s)))
        goto out;
    for (int64_t fi = 0; fi < plan->nflows; fi++) {
        const mc_flow_t *f = &plan->flows[fi];
        for (int64_t j = 0; j < f->nedges; j++) {
            int64_t g = f->edge0 + j;
            /* reduction flows start at the holders of the addends that combine nothing */
            int root = f->ngather ? j < f->ngather && !s.fed[g]
                                  : mc_flow_rooted_at(plan, f, plan->edges[g].from);
            if (root && (st = make_ready(&s, g, nchunks(f))))
                goto out;
        }
    }
    for (int64_t r = 0; r < nres && !s.stopped; r++)
        if ((st = try_start(&s, r, 0.0)))
            goto out;
    for (int64_t count = 1; s.events->n > 0 && !s.stopped; count++) {
        mc_event_t ev;
        if ((st = mc_events_pop(s.events, &ev)))
            goto out;
        if (count % CHECK_EVERY == 0 && s.limit < INFINITY)
            stop_check(&s, nres, ev.t);
        int64_t id = ev.a >> EV_BITS;
        int type = (int)(ev.a & ((1 << EV_BITS) - 1));
        if (type == EV_FREE) {
            s.busy[id] = 0;
            st = try_start(&s, id, ev.t);
        } else if (type == EV_JOIN) {
            st = join_arrived(&s, s.join[id], s.arrived[id]++, ev.t);
        } else {
            const sim_edge_t *pe = &s.edges[id];
            for (int64_t c = 0; c < pe->nchild; c++) /* their misses at once, not in turn */
                __builtin_prefetch(&s.edges[s.children[pe->child0 + c]]);
            for (int64_t c = 0; c < pe->nchild && !st && !s.stopped; c++) {
                int64_t child = s.children[pe->child0 + c];
                if (!(st = make_ready(&s, child, 1)))
                    st = try_start(&s, s.edges[child].r_send, ev.t);
            }
        }
        if (st)
            goto out;
    }
    double copies = 0;
    if ((st = copy_time(plan, &copies)))
        goto out;
    *seconds = s.makespan > copies || s.stopped ? s.makespan : copies;
    if (*seconds > 0) /* a reshard's fixed cost, once whatever its hops */
        *seconds += plan->topo->reshard_s;
out:
    if (!scratch)
        scratch_clear(&own);
    free(s.free_at);
    free(s.busy);
    free(s.host_free);
    free(s.work);
    free(s.joins);
    free(s.join_children);
    free(s.join_counts);
    free(s.join);
    free(s.arrived);
    free(s.fed);
    return st;
}
