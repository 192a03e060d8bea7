/* Plan output: human text, JSON (flows and pieces in full, reductions' combine trees), DOT
 * (devices by host, edges summed per device pair, host combiners marked). */
#include <stdlib.h>
#include "plan_internal.h"
#include "util/util.h"

static void write_box(const mc_box_t *b, int ndim, FILE *out, int json)
{
    fputc('[', out);
    for (int d = 0; d < ndim; d++)
        fprintf(out, json ? "%s[%lld,%lld]" : "%s%lld:%lld", d ? "," : "", (long long)b->lo[d],
                (long long)b->hi[d]);
    fputc(']', out);
}

static void write_ids(const int64_t *ids, int n, FILE *out)
{
    fputc('[', out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%lld", i ? "," : "", (long long)ids[i]);
    fputc(']', out);
}

static const char *name(const mc_plan_t *plan)
{
    return mc_strategy_name(plan->params.strategy, plan->params.sender);
}

/* Combiner c of tree t as text: its device, then its inputs in combination order, addend
 * a as "a<a>", a partial as its combiner, nested: "0{a0+a1+4{a4+a5}}". */
static void write_combiner(const mc_reduce_tree_t *t, int64_t c, FILE *out)
{
    const mc_combiner_t *k = &t->comb[c];
    fprintf(out, "%lld{", (long long)k->device);
    for (int64_t i = 0; i < k->nin; i++) {
        int64_t v = t->in[k->in0 + i];
        if (i)
            fputc('+', out);
        if (v >= 0)
            fprintf(out, "a%lld", (long long)v);
        else
            write_combiner(t, -v - 1, out);
    }
    fputc('}', out);
}

/* The addends under combiner c, in combination order, as JSON list items. */
static void write_addends(const mc_reduce_tree_t *t, int64_t c, int *first, FILE *out)
{
    const mc_combiner_t *k = &t->comb[c];
    for (int64_t i = 0; i < k->nin; i++) {
        int64_t v = t->in[k->in0 + i];
        if (v < 0) {
            write_addends(t, -v - 1, first, out);
            continue;
        }
        fprintf(out, "%s%lld", *first ? "" : ",", (long long)v);
        *first = 0;
    }
}

/* A reduction flow's combine tree: text (" combine 0{...}") or JSON ("combiners": every
 * combiner with its level, "host" before the NIC or the "reducer", and its addends). */
static void write_tree(const mc_plan_t *plan, int64_t fi, int json, FILE *out)
{
    mc_reduce_tree_t t;
    if (mc_reduce_tree(plan, fi, &t))
        return; /* an invalid plan (its "valid" says so) */
    if (!json) {
        fputs(" combine ", out);
        write_combiner(&t, t.ncomb - 1, out);
    } else {
        fputs(", \"combiners\": [", out);
        for (int64_t c = 0; c < t.ncomb; c++) {
            const mc_combiner_t *k = &t.comb[c];
            int first = 1;
            fprintf(out, "%s{\"device\": %lld, \"level\": \"%s\", \"addends\": [", c ? ", " : "",
                    (long long)k->device, k->out_edge < 0 ? "reducer" : "host");
            write_addends(&t, c, &first, out);
            fputs("]}", out);
        }
        fputc(']', out);
    }
    mc_reduce_tree_free(&t);
}

static void write_text(const mc_plan_t *plan, FILE *out)
{
    const mc_plan_stats_t *st = &plan->stats;
    int ndim = plan->pieces->ndim;
    fprintf(out,
            "strategy %s on %s (%lld hosts x %lld devices)\n"
            "pieces %lld  flows %lld  messages %lld  chunks %lld\n"
            "nic_bytes %lld  intra_host_bytes %lld  local_bytes %lld  peak_staging_bytes %lld\n"
            "estimate %.6g s  lower_bound %.6g s  estimate/bound %.4f  plan %.3f ms  valid %d\n",
            name(plan), mc_topology_name(plan->topo), (long long)mc_topology_hosts(plan->topo),
            (long long)mc_topology_devices_per_host(plan->topo), (long long)st->pieces,
            (long long)st->flows, (long long)st->messages, (long long)st->chunks,
            (long long)st->nic_bytes, (long long)st->intra_host_bytes, (long long)st->local_bytes,
            (long long)st->peak_staging_bytes, st->estimate_s, st->lower_bound_s,
            st->lower_bound_s > 0 ? st->estimate_s / st->lower_bound_s : 1.0, st->plan_ms,
            st->valid);
    for (int64_t i = 0; i < plan->nflows; i++) {
        const mc_flow_t *f = &plan->flows[i];
        fprintf(out, "flow %lld piece %lld box ", (long long)i, (long long)f->piece);
        write_box(&f->box, ndim, out, 0);
        fprintf(out, " bytes %lld chunk %lld:", (long long)f->bytes, (long long)f->chunk_bytes);
        for (int64_t j = 0; j < f->nedges; j++) {
            const mc_edge_t *e = &plan->edges[f->edge0 + j];
            fprintf(out, " %lld%s%lld", (long long)e->from,
                    mc_edge_class(plan->topo, e->from, e->to) == MC_LINK_NIC ? "=>" : "->",
                    (long long)e->to);
        }
        if (f->ngather)
            write_tree(plan, i, 0, out);
        fputc('\n', out);
    }
}

static void write_json(const mc_plan_t *plan, FILE *out)
{
    const mc_plan_stats_t *st = &plan->stats;
    const mc_pieces_t *ps = plan->pieces;
    fprintf(out,
            "{\"strategy\": \"%s\", \"pieces\": %lld, \"flows\": %lld, \"messages\": %lld, "
            "\"chunks\": %lld, \"nic_bytes\": %lld, \"intra_host_bytes\": %lld, "
            "\"local_bytes\": %lld, \"peak_staging_bytes\": %lld, \"estimate_s\": %.9g, "
            "\"lower_bound_s\": %.9g, \"plan_ms\": %.6g, \"valid\": %s,\n \"piece_list\": [",
            name(plan), (long long)st->pieces, (long long)st->flows, (long long)st->messages,
            (long long)st->chunks, (long long)st->nic_bytes, (long long)st->intra_host_bytes,
            (long long)st->local_bytes, (long long)st->peak_staging_bytes, st->estimate_s,
            st->lower_bound_s, st->plan_ms, st->valid ? "true" : "false");
    for (int64_t i = 0; i < ps->npieces; i++) {
        const mc_piece_t *p = &ps->pieces[i];
        fprintf(out, "%s\n  {\"box\": ", i ? "," : "");
        write_box(&p->box, ps->ndim, out, 1);
        fprintf(out, ", \"bytes\": %lld, \"holders\": ", (long long)p->bytes);
        write_ids(p->holders, p->nholders, out);
        fputs(", \"needers\": ", out);
        write_ids(p->needers, p->nneeders, out);
        fputs(", \"self\": ", out);
        write_ids(p->self, p->nself, out);
        if (p->addends) { /* partial source: each holder's addend index, and the op */
            fputs(", \"addends\": ", out);
            write_ids(p->addends, p->nholders, out);
            fprintf(out, ", \"op\": \"%s\"", mc_reduce_name(ps->op));
        }
        fputc('}', out);
    }
    fputs("],\n \"flow_list\": [", out);
    for (int64_t i = 0; i < plan->nflows; i++) {
        const mc_flow_t *f = &plan->flows[i];
        fprintf(out, "%s\n  {\"piece\": %lld, \"box\": ", i ? "," : "", (long long)f->piece);
        write_box(&f->box, ps->ndim, out, 1);
        fprintf(out, ", \"bytes\": %lld, \"chunk_bytes\": %lld, \"edges\": [", (long long)f->bytes,
                (long long)f->chunk_bytes);
        for (int64_t j = 0; j < f->nedges; j++)
            fprintf(out, "%s[%lld,%lld]", j ? "," : "", (long long)plan->edges[f->edge0 + j].from,
                    (long long)plan->edges[f->edge0 + j].to);
        fputc(']', out);
        if (f->ngather) { /* the first ngather edges: the combine tree into the reducer */
            fprintf(out, ", \"gather_edges\": %lld", (long long)f->ngather);
            write_tree(plan, i, 1, out);
        }
        fputc('}', out);
    }
    fputs("]}\n", out);
}

typedef struct {
    int64_t from, to;
    double bytes;
} pair_t;

static int cmp_pair(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return (x->to > y->to) - (x->to < y->to);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static mc_status_t write_dot(const mc_plan_t *plan, FILE *out)
{
    const mc_topology_t *topo = plan->topo;
    pair_t *pairs = mc_calloc((size_t)plan->nedges + 1, sizeof *pairs);
    int64_t *devs = mc_calloc(2 * (size_t)plan->nedges + 1, sizeof *devs); /* used, sorted */
    if (!pairs || !devs) {
        free(pairs);
        free(devs);
        return MC_ERR_NOMEM;
    }
    int64_t n = 0, ndevs = 0;
    for (int64_t i = 0; i < plan->nflows; i++)
        for (int64_t j = 0; j < plan->flows[i].nedges; j++) {
            const mc_edge_t *e = &plan->edges[plan->flows[i].edge0 + j];
            pairs[n++] = (pair_t){e->from, e->to, (double)plan->flows[i].bytes};
            devs[ndevs++] = e->from;
            devs[ndevs++] = e->to;
        }
    qsort(pairs, (size_t)n, sizeof *pairs, cmp_pair);
    qsort(devs, (size_t)ndevs, sizeof *devs, cmp_i64);
    /* per device: the flows whose addends of its host it combines before the NIC */
    int64_t *pre = mc_calloc((size_t)mc_topology_devices(topo) + 1, sizeof *pre);
    if (!pre) {
        free(pairs);
        free(devs);
        return MC_ERR_NOMEM;
    }
    for (int64_t i = 0; i < plan->nflows; i++) {
        mc_reduce_tree_t t;
        if (!plan->flows[i].ngather || mc_reduce_tree(plan, i, &t))
            continue;
        for (int64_t c = 0; c + 1 < t.ncomb; c++)
            pre[t.comb[c].device]++;
        mc_reduce_tree_free(&t);
    }
    fprintf(out,
            "digraph plan {\n  label=\"%s: estimate %.4g s, bound %.4g s\";\n"
            "  node [shape=box, style=rounded];\n",
            name(plan), plan->stats.estimate_s, plan->stats.lower_bound_s);
    for (int64_t i = 0; i < ndevs;) {
        int64_t h = mc_topology_host_of(topo, devs[i]);
        fprintf(out, "  subgraph cluster_host%lld {\n    label=\"host %lld\";\n", (long long)h,
                (long long)h);
        for (; i < ndevs && mc_topology_host_of(topo, devs[i]) == h; i++)
            if ((i == 0 || devs[i] != devs[i - 1]) && pre[devs[i]])
                fprintf(out, "    d%lld [label=\"dev %lld\\npre-combines %lld\", peripheries=2];\n",
                        (long long)devs[i], (long long)devs[i], (long long)pre[devs[i]]);
            else if (i == 0 || devs[i] != devs[i - 1])
                fprintf(out, "    d%lld [label=\"dev %lld\"];\n", (long long)devs[i],
                        (long long)devs[i]);
        fputs("  }\n", out);
    }
    for (int64_t a = 0; a < n;) {
        int64_t b = a;
        double bytes = 0;
        while (b < n && pairs[b].from == pairs[a].from && pairs[b].to == pairs[a].to)
            bytes += pairs[b++].bytes;
        int nic = mc_edge_class(topo, pairs[a].from, pairs[a].to) == MC_LINK_NIC;
        int gib = bytes >= 1073741824.0;
        fprintf(out, "  d%lld -> d%lld [label=\"%.4g %s\"%s];\n", (long long)pairs[a].from,
                (long long)pairs[a].to, bytes / (gib ? 1073741824.0 : 1048576.0),
                gib ? "GiB" : "MiB", nic ? ", color=red, penwidth=2" : ", color=gray40");
        a = b;
    }
    fputs("}\n", out);
    free(pairs);
    free(devs);
    free(pre);
    return MC_OK;
}

mc_status_t mc_plan_write(const mc_plan_t *plan, mc_format_t format, FILE *out)
{
    if (!plan || !out)
        return mc_error(MC_ERR_INVALID, "mc_plan_write: NULL argument");
    switch (format) {
    case MC_FORMAT_TEXT:
        write_text(plan, out);
        break;
    case MC_FORMAT_JSON:
        write_json(plan, out);
        break;
    case MC_FORMAT_DOT: {
        mc_status_t s = write_dot(plan, out);
        if (s)
            return s;
        break;
    }
    default:
        return mc_error(MC_ERR_INVALID, "unknown plan format %d", (int)format);
    }
    return ferror(out) ? mc_error(MC_ERR_IO, "writing the plan failed") : MC_OK;
}
