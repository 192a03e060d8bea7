/* The program compiler: one rank's share of a plan, as ops with chunk-level dependencies. */
#include <stdlib.h>
#include <string.h>
#include "exec/program.h"
#include "layouts/layout_internal.h"
#include "util/util.h"

/* Message ids from here up are reserved for the plan-fingerprint exchange. */
#define MC_MSG_ID_LIMIT 0xFFFFFF00LL
/* Bytes per worker task. At least strided.c's MC_STREAM_MIN_BYTES (16 MiB): a copy shorter
 * than that uses cached stores (~10 GB/s here against ~17 streaming), so 4 MiB tasks ran
 * a one-rank plan of large pieces at ~0.6 of memcpy (benchmarks/exec_speed.c). */
#define POOL_TASK_BYTES (16LL << 20)

int mc_device_rank(int64_t device, int nranks, int64_t ndevices)
{
    return (int)((__int128)device * nranks / ndevices);
}

int mc_device_owner(const mc_topology_t *topo, int nranks, int64_t device_id)
{
    int64_t n = topo ? mc_topology_devices(topo) : 0;
    if (n <= 0 || nranks < 1 || device_id < 0 || device_id >= n)
        return -1;
    return mc_device_rank(device_id, nranks, n);
}

/* FNV-1a, 64-bit: ranks compare plans by this hash when a reshard starts. */
static void hash_i64(uint64_t *h, int64_t v)
{
    const unsigned char *p = (const unsigned char *)&v;
    for (size_t i = 0; i < sizeof v; i++) {
        *h ^= p[i];
        *h *= 1099511628211ULL;
    }
}

static void hash_box(uint64_t *h, const mc_box_t *b, int ndim)
{
    for (int d = 0; d < ndim; d++) {
        hash_i64(h, b->lo[d]);
        hash_i64(h, b->hi[d]);
    }
}

static void hash_layout(uint64_t *h, const mc_layout_t *l)
{
    hash_i64(h, l->ndim);
    hash_i64(h, l->dtype);
    for (int d = 0; d < l->ndim; d++)
        hash_i64(h, l->shape[d]);
    hash_i64(h, l->mesh->ndim);
    for (int d = 0; d < l->mesh->ndim; d++)
        hash_i64(h, l->mesh->shape[d]);
    for (int64_t i = 0; i < l->mesh->size; i++)
        hash_i64(h, l->mesh->devices[i]);
    for (int d = 0; d < l->spec->tensor_ndim; d++) {
        hash_i64(h, l->spec->naxes[d]);
        for (int k = 0; k < l->spec->naxes[d]; k++)
            hash_i64(h, l->spec->axes[d][k]);
    }
}

static mc_region_t region(mc_at_t at, int64_t index, const mc_box_t *box)
{
    return (mc_region_t){.at = at, .index = index, .box = *box};
}

typedef struct {
    mc_program_t *p;
    int64_t ops_cap, children_cap, roots_cap, staging_cap, inputs_cap;
    mc_box_t *src_tiles, *dst_tiles; /* per mesh index */
    /* The current flow's devices -> the op that brought the flow there (-1: none yet), an
     * open-addressing table of at_mask + 1 slots, at least 4 per edge of the flow: device
     * ids may be large and sparse, so no array indexed by device. */
    struct at_slot {
        int64_t dev, op;
    } * at;
    int64_t at_cap, at_mask;
    /* The current flow's gather phase: (parent op, child op) pairs, as its combine tree
     * says (flattened), and per gather edge the RECV that brought its input here (-1). */
    int64_t *links, nlinks, links_cap;
    int64_t *recv_op, recv_cap;
} builder_t;

/* Empties the table for a flow of nedges edges (it touches at most 2 * nedges + 1 devices). */
static mc_status_t at_reset(builder_t *b, int64_t nedges)
{
    int64_t n = 8;
    while (n < 4 * (nedges + 1))
        n *= 2;
    if (n > b->at_cap) {
        struct at_slot *grown = realloc(b->at, (size_t)n * sizeof *grown);
        if (!grown)
            return mc_error(MC_ERR_NOMEM, "out of memory compiling a flow of %lld edges",
                            (long long)nedges);
        b->at = grown;
        b->at_cap = n;
    }
    b->at_mask = n - 1;
    for (int64_t i = 0; i < n; i++)
        b->at[i] = (struct at_slot){-1, -1};
    return MC_OK;
}

/* The op that brought the current flow to device dev (a new slot holds -1). */
static int64_t *at(builder_t *b, int64_t dev)
{
    uint64_t i = ((uint64_t)dev * 0x9E3779B97F4A7C15ULL) >> 20;
    for (;; i++) {
        struct at_slot *slot = &b->at[i & (uint64_t)b->at_mask];
        if (slot->dev == dev)
            return &slot->op;
        if (slot->dev < 0) {
            slot->dev = dev;
            return &slot->op;
        }
    }
}

static mc_status_t push_i64(int64_t **items, int64_t *cap, int64_t *n, int64_t v, const char *what)
{
    mc_status_t s = mc_grow((void **)items, cap, *n, sizeof **items, 64, what);
    if (!s)
        (*items)[(*n)++] = v;
    return s;
}

static mc_status_t add_op(builder_t *b, const mc_op_t *op)
{
    mc_program_t *p = b->p;
    mc_status_t s = mc_grow((void **)&p->ops, &b->ops_cap, p->nops, sizeof *op, 64, "ops");
    if (s)
        return s;
    p->ops[p->nops++] = *op;
    p->units += op->nchunks;
    if (op->flow >= 0 && op->kind != MC_OP_SEND && !op->gather)
        *at(b, op->to_dev) = p->nops - 1;
    if (op->from_holder && op->kind != MC_OP_RECV)
        return push_i64(&p->roots, &b->roots_cap, &p->nroots, p->nops - 1, "roots");
    return MC_OK;
}

/* Where device dev keeps flow f's box: its source tile when it holds the piece, its
 * destination tile when it needs it, else the staging buffer of the op that delivered the
 * flow to it (none yet: index -1). */
static mc_region_t region_of(const mc_plan_t *plan, builder_t *b, const mc_flow_t *f,
                             const mc_piece_t *piece, int64_t dev)
{
    if (mc_flow_rooted_at(plan, f, dev))
        return region(MC_AT_SRC, mc_mesh_find(plan->src->mesh, dev), &f->box);
    if (mc_piece_needs(piece, dev))
        return region(MC_AT_DST, mc_mesh_find(plan->dst->mesh, dev), &f->box);
    int64_t by = *at(b, dev);
    return region(MC_AT_STAGING, by >= 0 ? b->p->ops[by].dst.index : -1, &f->box);
}

/* Links op parent -> op child in the current flow's gather phase. */
static mc_status_t link(builder_t *b, int64_t parent, int64_t child)
{
    mc_status_t s = push_i64(&b->links, &b->links_cap, &b->nlinks, parent, "links");
    return s ? s : push_i64(&b->links, &b->links_cap, &b->nlinks, child, "links");
}

/* Combiner ci of flow fi's tree, on this rank: the COMBINE of its inputs in the tree's
 * order, each read where it is (a holder's tile on this rank, a RECV's staging buffer, or
 * the staging buffer of another COMBINE here), into the destination tile when it is the
 * reducer and needs the piece, else a staging buffer. comb_op[ci] gets the op. */
static mc_status_t compile_combine(const mc_plan_t *plan, builder_t *b, int64_t fi,
                                   const mc_reduce_tree_t *t, int64_t ci, int64_t *comb_op,
                                   int64_t nchunks, int64_t chunk)
{
    mc_program_t *p = b->p;
    const mc_flow_t *f = &plan->flows[fi];
    const mc_piece_t *piece = &plan->pieces->pieces[f->piece];
    const mc_combiner_t *c = &t->comb[ci];
    mc_status_t s = mc_grow((void **)&p->inputs, &b->inputs_cap, p->ninputs + c->nin,
                            sizeof *p->inputs, 64, "combine inputs");
    if (s)
        return s;
    int reducer = c->out_edge < 0;
    mc_op_t op = {.kind = MC_OP_COMBINE,
                  .flow = fi,
                  .peer = p->rank,
                  .from_dev = c->device,
                  .to_dev = c->device,
                  .bytes = f->bytes,
                  .chunk_bytes = chunk,
                  .nchunks = nchunks,
                  .msg0 = -1,
                  .gather = !reducer, /* a partial, not the flow's result */
                  .in0 = p->ninputs,
                  .nin = c->nin,
                  .src = region(MC_AT_STAGING, -1, &f->box)};
    int64_t me = p->nops;
    for (int64_t i = 0; i < c->nin; i++) {
        int64_t v = t->in[c->in0 + i], j = t->edge[c->in0 + i];
        int64_t from = j < 0 ? c->device : plan->edges[f->edge0 + j].from, up = -1;
        mc_region_t *in = &p->inputs[op.in0 + i];
        if (j >= 0 && b->recv_op[j] >= 0)
            up = b->recv_op[j];
        else if (v < 0)
            up = comb_op[-v - 1]; /* a partial combined on this rank */
        if (up >= 0) {
            *in = p->ops[up].dst;
            op.nwait++;
            if ((s = link(b, up, me)))
                return s;
        } else {
            *in = region(MC_AT_SRC, mc_mesh_find(plan->src->mesh, from), &f->box);
        }
    }
    op.from_holder = op.nwait == 0; /* every input on this rank from the start: a root */
    p->ninputs += c->nin;
    if (reducer && mc_piece_needs(piece, c->device)) {
        op.dst = region(MC_AT_DST, mc_mesh_find(plan->dst->mesh, c->device), &f->box);
    } else {
        op.dst = region(MC_AT_STAGING, p->nstaging, &f->box);
        if ((s = push_i64(&p->staging_bytes, &b->staging_cap, &p->nstaging, f->bytes,
                          "staging buffers")))
            return s;
    }
    comb_op[ci] = me;
    return add_op(b, &op);
}

/* Whether op c reads the flow where another op of it delivered it (not the gather phase,
 * linked as its combine tree says, nor a RECV). */
static int reads_parent(const mc_op_t *c)
{
    return c->kind != MC_OP_RECV && c->kind != MC_OP_COMBINE && !c->gather;
}

/* Children of the ops of the flow that starts at op first: the gather phase's links, and
 * the ops that read where an op writes, found through at(), the op that delivered the flow
 * to each device (edges are parent-first and a device receives a flow once, so a child
 * always comes after its parent); the result leaves the reducer from its COMBINE. Counted
 * first, so that each op's children are contiguous. */
static mc_status_t link_children(builder_t *b, int64_t first)
{
    mc_program_t *p = b->p;
    int64_t total = 0;
    for (int64_t k = first; k < p->nops; k++)
        p->ops[k].nchildren = 0;
    for (int64_t i = 0; i < b->nlinks; i += 2)
        p->ops[b->links[i]].nchildren++;
    for (int64_t k = first; k < p->nops; k++) {
        const mc_op_t *c = &p->ops[k];
        if (reads_parent(c) && *at(b, c->from_dev) >= 0)
            p->ops[*at(b, c->from_dev)].nchildren++;
    }
    for (int64_t k = first; k < p->nops; k++) {
        p->ops[k].child0 = p->nchildren + total;
        total += p->ops[k].nchildren;
        p->ops[k].nchildren = 0; /* counts again as they are filled in */
    }
    for (int64_t i = 0; i < total; i++) {
        mc_status_t s = push_i64(&p->children, &b->children_cap, &p->nchildren, -1, "children");
        if (s)
            return s;
    }
    for (int64_t i = 0; i < b->nlinks; i += 2) {
        mc_op_t *up = &p->ops[b->links[i]];
        p->children[up->child0 + up->nchildren++] = b->links[i + 1];
    }
    for (int64_t k = first; k < p->nops; k++) {
        const mc_op_t *c = &p->ops[k];
        if (reads_parent(c) && *at(b, c->from_dev) >= 0) {
            mc_op_t *up = &p->ops[*at(b, c->from_dev)];
            p->children[up->child0 + up->nchildren++] = k;
        }
    }
    return MC_OK;
}

/* The gather phase of reduction flow fi on this rank: per gather edge X -> Y, X's COMBINE
 * first when X is a combiner here, then a SEND (X here) or RECV (Y here) of X's partial
 * unless both are here (Y's COMBINE reads it in place); last the reducer's COMBINE. */
static mc_status_t compile_gather(const mc_plan_t *plan, builder_t *b, int64_t fi, int64_t nchunks,
                                  int64_t chunk, int64_t *msg)
{
    mc_program_t *p = b->p;
    const mc_flow_t *f = &plan->flows[fi];
    mc_reduce_tree_t t;
    mc_status_t s = mc_reduce_tree(plan, fi, &t);
    if (s)
        return s;
    int64_t *comb_op = mc_calloc((size_t)t.ncomb, sizeof *comb_op);
    int64_t *out_comb = mc_calloc((size_t)f->ngather, sizeof *out_comb); /* edge -> combiner */
    if (!comb_op || !out_comb ||
        (s = mc_grow((void **)&b->recv_op, &b->recv_cap, f->ngather, sizeof *b->recv_op, 64,
                     "gather receives"))) {
        s = s ? s : MC_ERR_NOMEM;
        goto out;
    }
    for (int64_t j = 0; j < f->ngather; j++)
        out_comb[j] = b->recv_op[j] = -1;
    for (int64_t ci = 0; ci < t.ncomb; ci++) {
        comb_op[ci] = -1;
        if (t.comb[ci].out_edge >= 0)
            out_comb[t.comb[ci].out_edge] = ci;
    }
    for (int64_t j = 0; j < f->ngather && !s; j++) {
        const mc_edge_t *e = &plan->edges[f->edge0 + j];
        int64_t msg0 = *msg, ci = out_comb[j];
        *msg += nchunks;
        int rf = mc_device_rank(e->from, p->nranks, p->ndevices);
        int rt = mc_device_rank(e->to, p->nranks, p->ndevices);
        if (nchunks == 0 || (rf != p->rank && rt != p->rank))
            continue;
        if (ci >= 0 && rf == p->rank &&
            (s = compile_combine(plan, b, fi, &t, ci, comb_op, nchunks, chunk)))
            break;
        if (rf == rt) /* the partial or addend is read in place by the COMBINE at e->to */
            continue;
        mc_op_t op = {.flow = fi,
                      .from_dev = e->from,
                      .to_dev = e->to,
                      .bytes = f->bytes,
                      .chunk_bytes = chunk,
                      .nchunks = nchunks,
                      .msg0 = msg0,
                      .gather = 1,
                      .kind = rf == p->rank ? MC_OP_SEND : MC_OP_RECV,
                      .peer = rf == p->rank ? rt : rf};
        if (op.kind == MC_OP_SEND) {
            /* an addend from the holder's own tile, a partial from its COMBINE's buffer */
            op.from_holder = ci < 0;
            op.src = ci < 0 ? region(MC_AT_SRC, mc_mesh_find(plan->src->mesh, e->from), &f->box)
                            : p->ops[comb_op[ci]].dst;
            if (ci >= 0 && (s = link(b, comb_op[ci], p->nops)))
                break;
        } else {
            /* a gathered input waits for the combine in a staging buffer of its own */
            op.dst = region(MC_AT_STAGING, p->nstaging, &f->box);
            b->recv_op[j] = p->nops;
            if ((s = push_i64(&p->staging_bytes, &b->staging_cap, &p->nstaging, f->bytes,
                              "staging buffers")))
                break;
        }
        s = add_op(b, &op);
    }
    int64_t red = mc_flow_reducer(plan, f);
    if (!s && nchunks > 0 && mc_device_rank(red, p->nranks, p->ndevices) == p->rank)
        s = compile_combine(plan, b, fi, &t, t.ncomb - 1, comb_op, nchunks, chunk);
out:
    free(comb_op);
    free(out_comb);
    mc_reduce_tree_free(&t);
    return s;
}

/* The ops of flow fi that touch this rank; *msg counts message ids over every rank. */
static mc_status_t compile_flow(const mc_plan_t *plan, builder_t *b, int64_t fi,
                                int64_t chunk_override, int64_t *msg)
{
    mc_program_t *p = b->p;
    const mc_flow_t *f = &plan->flows[fi];
    const mc_piece_t *piece = &plan->pieces->pieces[f->piece];
    int64_t chunk = chunk_override > 0 ? chunk_override : f->chunk_bytes;
    if (chunk % p->elem_size)
        chunk += p->elem_size - chunk % p->elem_size;
    int64_t nchunks = f->bytes > 0 ? (f->bytes + chunk - 1) / chunk : 0;
    int64_t first = p->nops;
    b->nlinks = 0;
    mc_status_t s = at_reset(b, f->nedges);
    if (s || (f->ngather > 0 && (s = compile_gather(plan, b, fi, nchunks, chunk, msg))))
        return s;
    for (int64_t j = f->ngather; j < f->nedges; j++) {
        const mc_edge_t *e = &plan->edges[f->edge0 + j];
        int64_t msg0 = *msg;
        *msg += nchunks;
        int rf = mc_device_rank(e->from, p->nranks, p->ndevices);
        int rt = mc_device_rank(e->to, p->nranks, p->ndevices);
        if ((rf != p->rank && rt != p->rank) || nchunks == 0)
            continue;
        mc_op_t op = {.flow = fi,
                      .from_dev = e->from,
                      .to_dev = e->to,
                      .bytes = f->bytes,
                      .chunk_bytes = chunk,
                      .nchunks = nchunks,
                      .msg0 = msg0,
                      .child0 = 0};
        op.kind = rf != rt ? (rf == p->rank ? MC_OP_SEND : MC_OP_RECV) : MC_OP_LOCAL_COPY;
        op.peer = op.kind == MC_OP_SEND ? rt : rf;
        op.from_holder = mc_flow_rooted_at(plan, f, e->from);
        if (op.kind != MC_OP_RECV)
            op.src = region_of(plan, b, f, piece, e->from);
        if (op.kind != MC_OP_SEND) {
            op.dst = region_of(plan, b, f, piece, e->to);
            if (op.dst.at == MC_AT_STAGING && op.dst.index < 0) {
                op.dst.index = p->nstaging;
                if ((s = push_i64(&p->staging_bytes, &b->staging_cap, &p->nstaging, f->bytes,
                                  "staging buffers")))
                    return s;
            }
        }
        if (op.kind != MC_OP_RECV && op.src.at == MC_AT_STAGING && op.src.index < 0)
            return mc_error(MC_ERR_INTERNAL,
                            "flow %lld: device %lld forwards bytes it never "
                            "received",
                            (long long)fi, (long long)e->from);
        if ((s = add_op(b, &op)))
            return s;
    }
    return link_children(b, first);
}

/* Devices that hold and need a piece copy it between their own two tiles. */
static mc_status_t compile_self_copies(const mc_plan_t *plan, builder_t *b)
{
    mc_program_t *p = b->p;
    for (int64_t i = 0; i < plan->pieces->npieces; i++) {
        const mc_piece_t *piece = &plan->pieces->pieces[i];
        for (int k = 0; k < piece->nself; k++) {
            int64_t dev = piece->self[k];
            if (mc_device_rank(dev, p->nranks, p->ndevices) != p->rank || piece->bytes == 0)
                continue;
            mc_op_t op = {.kind = MC_OP_LOCAL_COPY,
                          .flow = -1,
                          .peer = p->rank,
                          .from_dev = dev,
                          .to_dev = dev,
                          .bytes = piece->bytes,
                          .chunk_bytes = piece->bytes,
                          .nchunks = 1,
                          .msg0 = -1,
                          .from_holder = 1,
                          .child0 = p->nchildren,
                          .src = region(MC_AT_SRC, mc_mesh_find(plan->src->mesh, dev), &piece->box),
                          .dst =
                              region(MC_AT_DST, mc_mesh_find(plan->dst->mesh, dev), &piece->box)};
            mc_status_t s = add_op(b, &op);
            if (s)
                return s;
        }
    }
    return MC_OK;
}

/* Devices of a Partial destination other than addend 0 get the op's identity. */
static mc_status_t compile_fills(const mc_plan_t *plan, builder_t *b)
{
    mc_program_t *p = b->p;
    const mc_mesh_t *mesh = plan->dst->mesh;
    for (int64_t i = 0; p->dst_reduce != MC_REDUCE_NONE && i < mesh->size; i++) {
        int64_t dev = mesh->devices[i];
        const mc_box_t *tile = &b->dst_tiles[i];
        int64_t bytes = mc_box_volume(tile, p->ndim) * p->elem_size;
        if (mc_device_rank(dev, p->nranks, p->ndevices) != p->rank || bytes == 0 ||
            mc_layout_addend_index(plan->dst, i) == 0)
            continue;
        mc_region_t r = region(MC_AT_DST, i, tile);
        mc_op_t op = {.kind = MC_OP_FILL,
                      .flow = -1,
                      .peer = p->rank,
                      .from_dev = dev,
                      .to_dev = dev,
                      .bytes = bytes,
                      .chunk_bytes = bytes,
                      .nchunks = 1,
                      .msg0 = -1,
                      .from_holder = 1,
                      .child0 = p->nchildren,
                      .src = r,
                      .dst = r};
        mc_status_t s = add_op(b, &op);
        if (s)
            return s;
    }
    return MC_OK;
}

static mc_status_t compile_tiles(const mc_layout_t *l, mc_box_t **out)
{
    int64_t n = l->mesh->size;
    mc_box_t *tiles = mc_calloc((size_t)n, sizeof *tiles);
    if (!tiles)
        return MC_ERR_NOMEM;
    for (int64_t i = 0; i < n; i++)
        mc_layout_tile(l, l->mesh->devices[i], &tiles[i]);
    *out = tiles;
    return MC_OK;
}

/* The region's box inside its tile (or staging buffer), and its tile marked used. */
static void shape_region(builder_t *b, mc_region_t *g)
{
    mc_program_t *p = b->p;
    const mc_box_t *tile = &g->box;
    if (g->at == MC_AT_SRC) {
        tile = &b->src_tiles[g->index];
        p->src_used[g->index] = 1;
    } else if (g->at == MC_AT_DST) {
        tile = &b->dst_tiles[g->index];
        p->dst_used[g->index] = 1;
    }
    mc_strided_shape(&g->shape, tile, &g->box, p->ndim, (size_t)p->elem_size);
}

/* Every region an op reads or writes gets its shape; staging buffers their offsets. */
static mc_status_t shape_regions(builder_t *b)
{
    mc_program_t *p = b->p;
    p->src_used = mc_calloc((size_t)p->src_mesh_size + 1, 1);
    p->dst_used = mc_calloc((size_t)p->dst_mesh_size + 1, 1);
    p->staging_off = mc_calloc((size_t)p->nstaging + 1, sizeof *p->staging_off);
    if (!p->src_used || !p->dst_used || !p->staging_off)
        return MC_ERR_NOMEM;
    for (int64_t i = 0; i < p->nstaging; i++)
        p->staging_off[i + 1] = p->staging_off[i] + p->staging_bytes[i];
    for (int64_t i = 0; i < p->nops; i++) {
        mc_op_t *op = &p->ops[i];
        if (op->kind != MC_OP_RECV && op->kind != MC_OP_COMBINE)
            shape_region(b, &op->src);
        if (op->kind != MC_OP_SEND)
            shape_region(b, &op->dst);
    }
    for (int64_t i = 0; i < p->ninputs; i++)
        shape_region(b, &p->inputs[i]);
    return MC_OK;
}

/* One past the last op of the flow that op i belongs to (a whole-piece copy stands alone). */
static int64_t flow_end(const mc_program_t *p, int64_t i)
{
    int64_t end = i + 1;
    while (end < p->nops && p->ops[i].flow >= 0 && p->ops[end].flow == p->ops[i].flow)
        end++;
    return end;
}

static mc_status_t add_task(mc_program_t *p, int64_t *cap, mc_task_t t)
{
    mc_status_t s = mc_grow((void **)&p->tasks, cap, p->ntasks, sizeof t, 64, "tasks");
    if (!s)
        p->tasks[p->ntasks++] = t;
    return s;
}

/* One rank: the worker pool's tasks of about POOL_TASK_BYTES. Big flows are cut into byte
 * ranges (each range runs the flow's edges in order), small consecutive flows grouped. */
static mc_status_t make_tasks(mc_program_t *p)
{
    int64_t cap = 0, i = 0;
    mc_status_t s;
    while (i < p->nops) {
        int64_t end = flow_end(p, i), bytes = p->ops[i].bytes;
        if (bytes > 2 * POOL_TASK_BYTES) {
            int64_t step = POOL_TASK_BYTES - POOL_TASK_BYTES % p->elem_size;
            for (int64_t off = 0; off < bytes; off += step)
                if ((s = add_task(
                         p, &cap,
                         (mc_task_t){i, end, off, bytes - off < step ? bytes - off : step})))
                    return s;
            i = end;
            continue;
        }
        /* whole flows only: a flow's edges must run in order within one task */
        for (int64_t sum = bytes; end < p->nops && sum < POOL_TASK_BYTES;) {
            int64_t next = flow_end(p, end);
            if (p->ops[end].bytes > 2 * POOL_TASK_BYTES)
                break;
            sum += p->ops[end].bytes;
            end = next;
        }
        if ((s = add_task(p, &cap, (mc_task_t){i, end, 0, -1})))
            return s;
        i = end;
    }
    return MC_OK;
}

mc_status_t mc_program_compile(const mc_plan_t *plan, int rank, int nranks, int64_t chunk_bytes,
                               mc_program_t **out)
{
    if (!plan || !out)
        return mc_error(MC_ERR_INVALID, "program: plan and out must not be NULL");
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return mc_error(MC_ERR_INVALID, "program: rank %d of %d", rank, nranks);
    if (chunk_bytes < 0)
        return mc_error(MC_ERR_INVALID, "chunk_bytes %lld is negative", (long long)chunk_bytes);
    mc_program_t *p = mc_calloc(1, sizeof *p);
    if (!p)
        return MC_ERR_NOMEM;
    builder_t b = {.p = p};
    mc_status_t s;
    p->rank = rank;
    p->nranks = nranks;
    p->ndevices = mc_topology_devices(plan->topo);
    p->elem_size = plan->pieces->elem_size;
    p->ndim = plan->pieces->ndim;
    p->src_mesh_size = plan->src->mesh->size;
    p->dtype = plan->src->dtype;
    p->reduce = plan->pieces->op;
    p->dst_reduce = mc_spec_reduce(plan->dst->spec);
    p->dst_mesh_size = plan->dst->mesh->size;
    if (!(p->member = mc_calloc((size_t)nranks, 1))) {
        s = MC_ERR_NOMEM;
        goto err;
    }
    mc_participants(plan, nranks, p->member);
    if ((s = compile_tiles(plan->src, &b.src_tiles)) ||
        (s = compile_tiles(plan->dst, &b.dst_tiles)))
        goto err;
    int64_t msg = 0;
    for (int64_t fi = 0; fi < plan->nflows; fi++)
        if ((s = compile_flow(plan, &b, fi, chunk_bytes, &msg)))
            goto err;
    if (msg >= MC_MSG_ID_LIMIT) {
        s = mc_error(MC_ERR_UNSUPPORTED,
                     "plan has %lld chunk messages, more than one reshard "
                     "can tag; use a larger chunk size",
                     (long long)msg);
        goto err;
    }
    p->nmessages = msg;
    if ((s = compile_self_copies(plan, &b)) || (s = compile_fills(plan, &b)) ||
        (s = shape_regions(&b)) || (nranks == 1 && (s = make_tasks(p))))
        goto err;

    uint64_t h = 1469598103934665603ULL;
    hash_i64(&h, nranks);
    hash_i64(&h, p->ndevices);
    hash_layout(&h, plan->src);
    hash_layout(&h, plan->dst);
    hash_i64(&h, plan->params.strategy);
    hash_i64(&h, plan->params.sender);
    hash_i64(&h, p->reduce);
    hash_i64(&h, p->dst_reduce);
    for (int64_t fi = 0; fi < plan->nflows; fi++) {
        const mc_flow_t *f = &plan->flows[fi];
        int64_t chunk = chunk_bytes > 0 ? chunk_bytes : f->chunk_bytes;
        hash_box(&h, &f->box, p->ndim);
        hash_i64(&h, chunk);
        hash_i64(&h, f->ngather);
        for (int64_t j = 0; j < f->nedges; j++) {
            hash_i64(&h, plan->edges[f->edge0 + j].from);
            hash_i64(&h, plan->edges[f->edge0 + j].to);
        }
    }
    p->fingerprint = h;
    *out = p;
    p = NULL; /* the caller's now */
err:
    mc_program_destroy(p);
    free(b.src_tiles);
    free(b.dst_tiles);
    free(b.at);
    free(b.links);
    free(b.recv_op);
    return s;
}

void mc_program_destroy(mc_program_t *p)
{
    if (!p)
        return;
    free(p->ops);
    free(p->children);
    free(p->roots);
    free(p->staging_bytes);
    free(p->inputs);
    free(p->staging_off);
    free(p->src_used);
    free(p->dst_used);
    free(p->member);
    free(p->tasks);
    free(p);
}
