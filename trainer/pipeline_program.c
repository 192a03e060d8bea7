/* The pipeline's program (pipeline_program.h): the dry run that orders the reshards, and
 * every rank's instruction list. */
#include "pipeline_program.h"
#include "errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tr_program_stage_of_layer(const stage_t *stages, int nstages, int layer)
{
    for (int s = 0; s < nstages; s++)
        if (layer < stages[s].last)
            return s;
    return nstages - 1;
}

int tr_program_schedule(mc_sched_kind_t kind, int nranks, int M, int nlayers, int nskips,
                        const int *skip_from, const int *skip_to, mc_schedule_t **sched,
                        stage_t **stages, int *nstages, char *err, size_t len)
{
    /* stages first (without skips) to learn their count and placement */
    mc_schedule_info_t info;
    *sched = NULL;
    *stages = NULL;
    if (mc_schedule_create(kind, nranks, M, NULL, sched) || mc_schedule_info(*sched, &info))
        return tr_fail(err, len, "%s", mc_last_error());
    const int S = *nstages = info.nstages;
    if (nlayers < S)
        return tr_fail(err, len, "%d stages need at least %d layers; the model has %d (blocks + 2)",
                       S, S, nlayers);
    stage_t *st = *stages = calloc((size_t)S, sizeof(*st));
    int *skips = calloc((size_t)2 * (nskips + 1), sizeof(int)), n = 0;
    if (!st || !skips) {
        free(skips);
        return tr_fail(err, len, "out of memory");
    }
    for (int s = 0; s < S; s++) {
        st[s].first = s * nlayers / S;
        st[s].last = (s + 1) * nlayers / S;
        mc_schedule_stage_rank(*sched, s, &st[s].rank);
    }
    /* skip edges between stages that are not neighbours, each stage pair once */
    for (int e = 0; e < nskips; e++) {
        int a = tr_program_stage_of_layer(st, S, skip_from[e]),
            b = tr_program_stage_of_layer(st, S, skip_to[e]), dup = 0;
        for (int k = 0; k < n; k++)
            dup |= skips[2 * k] == a && skips[2 * k + 1] == b;
        if (b > a + 1 && !dup) {
            skips[2 * n] = a;
            skips[2 * n + 1] = b;
            n++;
        }
    }
    mc_schedule_params_t sp = {.field_mask = MC_SCHED_PARAM_SKIPS, .nskips = n, .skips = skips};
    mc_schedule_destroy(*sched);
    *sched = NULL;
    mc_status_t s = mc_schedule_create(kind, nranks, M, n ? &sp : NULL, sched);
    free(skips);
    return s ? tr_fail(err, len, "%s", mc_last_error()) : 0;
}

int tr_program_solo(int M, int nlayers, mc_sched_action_t **list, stage_t **stages)
{
    mc_sched_action_t *v = *list = calloc(2 * (size_t)M, sizeof(*v));
    stage_t *st = *stages = calloc(1, sizeof(*st));
    if (!v || !st)
        return -1;
    st[0] = (stage_t){0, nlayers, 0};
    for (int mb = 0; mb < M; mb++) {
        v[2 * mb] = (mc_sched_action_t){.op = MC_SCHED_F, .microbatch = mb, .peer = -1};
        v[2 * mb + 1] = (mc_sched_action_t){.op = MC_SCHED_B, .microbatch = mb, .peer = -1};
    }
    return 0;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static int is_send(mc_sched_op_t op)
{
    return op == MC_SCHED_SEND_F || op == MC_SCHED_SEND_B;
}

static int is_recv(mc_sched_op_t op)
{
    return op == MC_SCHED_RECV_F || op == MC_SCHED_RECV_B;
}

static int is_compute(mc_sched_op_t op)
{
    return op == MC_SCHED_F || op == MC_SCHED_B || op == MC_SCHED_I || op == MC_SCHED_W;
}

/* Whether a link between stages lo < hi moves tensor `edge`: the chain tensor (-1) between
 * neighbours, and every skip edge of the model from lo to hi. */
static int link_moves(const tr_program_spec *s, int lo, int hi, int edge)
{
    if (edge < 0)
        return hi == lo + 1;
    return tr_program_stage_of_layer(s->stages, s->nstages, s->skip_from[edge]) == lo &&
           tr_program_stage_of_layer(s->stages, s->nstages, s->skip_to[edge]) == hi;
}

static int link_key(int nstages, int M, const mc_sched_action_t *a)
{
    int lo = min_int(a->stage, a->peer), hi = max_int(a->stage, a->peer);
    return ((lo * nstages + hi) * M + a->microbatch) * 2 + a->grad;
}

void tr_program_xfers(const tr_program *g, const mc_sched_action_t *a, int *first, int *n)
{
    int key = link_key(g->nstages, g->M, a);
    *first = g->key_first[key];
    *n = g->key_n[key];
}

static int add_xfers(const tr_program_spec *s, tr_program *g, const mc_sched_action_t *a, int key,
                     int after)
{
    int lo = min_int(a->stage, a->peer), hi = max_int(a->stage, a->peer);
    xfer_t *x = realloc(g->x, (size_t)(g->nx + 1 + s->nskips) * sizeof(*x));
    if (!x)
        return -1;
    g->x = x;
    g->key_first[key] = g->nx;
    for (int e = -1; e < s->nskips; e++) {
        if (!link_moves(s, lo, hi, e))
            continue;
        xfer_t *t = &g->x[g->nx++];
        t->from = a->grad ? hi : lo;
        t->to = a->grad ? lo : hi;
        t->src = s->stages[t->from].rank;
        t->dst = s->stages[t->to].rank;
        t->mb = a->microbatch;
        t->grad = a->grad;
        t->edge = e;
        t->after = after;
    }
    g->key_n[key] = g->nx - g->key_first[key];
    return 0;
}

/* A send of the dry run: when (in planning cost units) and in which order it ran. */
typedef struct {
    const mc_sched_action_t *a;
    int key, rank, peer, pos; /* pos: the action's index in its rank's list */
    double time;
    int seq;
} send_t;

static int by_time(const void *x, const void *y)
{
    const send_t *a = x, *b = y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/* Planning costs: the schedule library's F = 1, B = 2, W = 1 (so I = 1). */
static double cost(mc_sched_op_t op)
{
    return op == MC_SCHED_B ? 2.0 : 1.0;
}

/* The dry run (round robin over ranks, blocking receives, planning costs) and the
 * transfers in the order of its sends' times, then the order it met them. Ordering by time
 * rather than by the round robin lets receivers start as early as the timing allows; the
 * round robin alone put, under eager-1f1b, the next activation behind the receiver's
 * gradient sends, so it waited for the receiver to start. A receiver's start comes after
 * its last own send to that sender earlier in the order: before its receive, which ran at
 * or after the send in the dry run, so both sides start in one order and the lists cannot
 * deadlock where the dry run did not. */
static int dry_run(const tr_program_spec *s, tr_program *g, char *err, size_t len)
{
    const int n = s->nranks;
    size_t *pc = calloc((size_t)n, sizeof(*pc)), total = 0;
    double *clock = calloc((size_t)n, sizeof(double));
    int *last_send = malloc((size_t)n * n * sizeof(int)), nsends = 0, rc = -1;
    send_t *sends = NULL;
    const size_t nkeys = (size_t)s->nstages * s->nstages * s->M * 2;
    double *sent_at = malloc(nkeys * sizeof(double)); /* per key; -1 until sent */
    if (!pc || !clock || !last_send || !sent_at)
        goto out;
    for (size_t k = 0; k < nkeys; k++)
        sent_at[k] = -1.0;
    for (int r = 0; r < n; r++)
        total += s->nacts[r];
    if (!(sends = calloc(total + 1, sizeof(*sends))))
        goto out;
    for (int moved = 1; moved;) {
        moved = 0;
        for (int r = 0; r < n; r++)
            for (; pc[r] < s->nacts[r]; pc[r]++, moved = 1) {
                const mc_sched_action_t *a = &s->acts[r][pc[r]];
                if (is_compute(a->op)) {
                    clock[r] += cost(a->op);
                    continue;
                }
                if (!is_send(a->op) && !is_recv(a->op)) {
                    char text[64];
                    mc_sched_action_format(a, text, sizeof(text));
                    tr_fail(err, len, "schedule action %s is not supported by the executor", text);
                    goto out;
                }
                int key = link_key(s->nstages, s->M, a);
                if (is_recv(a->op)) {
                    if (sent_at[key] < 0.0)
                        break; /* not sent yet */
                    clock[r] = clock[r] > sent_at[key] ? clock[r] : sent_at[key];
                    continue;
                }
                sent_at[key] = clock[r];
                sends[nsends] =
                    (send_t){a, key, r, s->stages[a->peer].rank, (int)pc[r], clock[r], nsends};
                nsends++;
            }
    }
    for (int r = 0; r < n; r++)
        if (pc[r] < s->nacts[r]) {
            tr_fail(err, len, "the schedule's lists deadlock at rank %d", r);
            goto out;
        }
    qsort(sends, (size_t)nsends, sizeof(*sends), by_time);
    for (int i = 0; i < n * n; i++)
        last_send[i] = -1;
    for (int i = 0; i < nsends; i++) {
        const send_t *t = &sends[i];
        if (add_xfers(s, g, t->a, t->key, last_send[t->peer * n + t->rank]))
            goto out;
        last_send[t->rank * n + t->peer] = t->pos;
    }
    rc = 0;
out:
    if (rc && !err[0])
        tr_fail(err, len, "out of memory");
    free(pc);
    free(clock);
    free(last_send);
    free(sent_at);
    free(sends);
    return rc;
}

static int add_part(tr_program *g, int r, int kind, int index, int first, int last)
{
    instr_t *v = realloc(g->prog[r], (size_t)(g->nprog[r] + 1) * sizeof(*v));
    if (!v)
        return -1;
    g->prog[r] = v;
    g->prog[r][g->nprog[r]++] = (instr_t){kind, index, first, last};
    return 0;
}

static int add_instr(tr_program *g, int r, int kind, int index)
{
    return add_part(g, r, kind, index, 0, 0);
}

/* Splits stage s's layers into up to n buckets of about equal weight, from the top (the
 * backward finishes the last layers first), appended to rank r's list. */
static int make_buckets(const tr_program_spec *sp, tr_program *g, int r, int s, int n)
{
    const stage_t *st = &sp->stages[s];
    const int layers = st->last - st->first;
    double total = 0.0, acc = 0.0;
    n = n < layers ? n : layers;
    for (int l = st->first; l < st->last; l++)
        total += sp->layer_weight ? sp->layer_weight[l] : 1.0;
    tr_bucket *v = realloc(g->buckets[r], (size_t)(g->nbuckets[r] + n) * sizeof(*v));
    if (!v)
        return -1;
    g->buckets[r] = v;
    int hi = st->last, made = 0;
    for (int l = st->last - 1; l >= st->first; l--) {
        acc += sp->layer_weight ? sp->layer_weight[l] : 1.0;
        const int left = n - made - 1; /* buckets still to make below this one */
        /* close a bucket at its share of the weight, keeping a layer for each one below */
        const int below = l - st->first;
        if (below == 0 ||
            (left > 0 && (below == left || (below > left && acc >= total * (made + 1) / n)))) {
            v[g->nbuckets[r]++] = (tr_bucket){s, l, hi};
            hi = l;
            made++;
        }
    }
    return 0;
}

/* The position of stage s's last backward op (B or W) in rank r's list, or -1. */
static int last_backward(const tr_program_spec *sp, int r, int s)
{
    int at = -1;
    for (size_t i = 0; i < sp->nacts[r]; i++) {
        const mc_sched_action_t *a = &sp->acts[r][i];
        if (a->stage == s && (a->op == MC_SCHED_B || a->op == MC_SCHED_W))
            at = (int)i;
    }
    return at;
}

/* The op at i of rank r: whole, or, when it is a stage's last backward and the sums go by
 * buckets, bucket by bucket from the top, each bucket's sum started after its part. */
static int add_compute(const tr_program_spec *sp, tr_program *g, int r, int i, int bucketed)
{
    const mc_sched_action_t *a = &sp->acts[r][i];
    if (!bucketed || (a->op != MC_SCHED_B && a->op != MC_SCHED_W) ||
        last_backward(sp, r, a->stage) != i)
        return add_instr(g, r, IN_COMPUTE, i);
    const int from = g->nbuckets[r];
    if (make_buckets(sp, g, r, a->stage, sp->dp_buckets))
        return -1;
    for (int b = from; b < g->nbuckets[r]; b++)
        if (add_part(g, r, IN_COMPUTE, i, g->buckets[r][b].first, g->buckets[r][b].last) ||
            add_instr(g, r, IN_DP_START, b))
            return -1;
    return 0;
}

static int add_recv_starts(tr_program *g, int r, int after)
{
    for (int i = 0; i < g->nx; i++)
        if (g->x[i].dst == r && g->x[i].after == after && add_instr(g, r, IN_START, i))
            return -1;
    return 0;
}

/* Rank r's program: its actions, a start per send, a wait per receive, the receiver's
 * starts where the dry run put them; then the waits for its sends (the receivers may still
 * be taking them), the gradient sum over replicas and the optimizer step. */
static int build_rank(const tr_program_spec *s, tr_program *g, int r)
{
    const int bucketed = s->replicas > 1 && s->dp_buckets > 1;
    if (add_recv_starts(g, r, -1))
        return -1;
    for (size_t i = 0; i < s->nacts[r]; i++) {
        const mc_sched_action_t *a = &s->acts[r][i];
        if (is_send(a->op) || is_recv(a->op)) {
            int first, n;
            tr_program_xfers(g, a, &first, &n);
            for (int k = 0; k < n; k++)
                if (add_instr(g, r, is_send(a->op) ? IN_START : IN_WAIT, first + k))
                    return -1;
        } else if (add_compute(s, g, r, (int)i, bucketed)) {
            return -1;
        }
        if (add_recv_starts(g, r, (int)i))
            return -1;
    }
    for (int i = 0; i < g->nx; i++)
        if (g->x[i].src == r && add_instr(g, r, IN_WAIT, i))
            return -1;
    for (int b = 0; bucketed && b < g->nbuckets[r]; b++)
        if (add_instr(g, r, IN_DP_WAIT, b))
            return -1;
    if ((!bucketed && add_instr(g, r, IN_DP_SUM, 0)) || add_instr(g, r, IN_OPTIM, 0))
        return -1;
    return 0;
}

int tr_program_build(const tr_program_spec *s, tr_program *g, char *err, size_t len)
{
    memset(g, 0, sizeof(*g));
    err[0] = '\0';
    g->nranks = s->nranks;
    g->nstages = s->nstages;
    g->M = s->M;
    const size_t nkeys = (size_t)s->nstages * s->nstages * s->M * 2;
    g->key_first = malloc(nkeys * sizeof(int));
    g->key_n = calloc(nkeys, sizeof(int));
    g->prog = calloc((size_t)s->nranks, sizeof(*g->prog));
    g->nprog = calloc((size_t)s->nranks, sizeof(int));
    g->buckets = calloc((size_t)s->nranks, sizeof(*g->buckets));
    g->nbuckets = calloc((size_t)s->nranks, sizeof(int));
    if (!g->key_first || !g->key_n || !g->prog || !g->nprog || !g->buckets || !g->nbuckets)
        return tr_fail(err, len, "out of memory");
    for (size_t k = 0; k < nkeys; k++)
        g->key_first[k] = -1;
    if (dry_run(s, g, err, len))
        return -1;
    for (int r = 0; r < s->nranks; r++)
        if (build_rank(s, g, r))
            return tr_fail(err, len, "out of memory");
    return 0;
}

void tr_program_free(tr_program *g)
{
    for (int r = 0; g->prog && r < g->nranks; r++)
        free(g->prog[r]);
    for (int r = 0; g->buckets && r < g->nranks; r++)
        free(g->buckets[r]);
    free(g->buckets);
    free(g->nbuckets);
    free(g->prog);
    free(g->nprog);
    free(g->x);
    free(g->key_first);
    free(g->key_n);
    memset(g, 0, sizeof(*g));
}

void tr_program_compute_name(const mc_sched_action_t *a, const instr_t *in, char *buf, size_t len)
{
    mc_sched_action_format(a, buf, len);
    if (in && in->first < in->last) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, " layers %d-%d", in->first, in->last - 1);
    }
}

void tr_program_bucket_name(const tr_bucket *b, char *buf, size_t len)
{
    snprintf(buf, len, "dp sum stage %d layers %d-%d", b->stage, b->first, b->last - 1);
}

void tr_program_xfer_name(const xfer_t *x, char *buf, size_t len)
{
    char edge[16] = "";
    if (x->edge >= 0)
        snprintf(edge, sizeof(edge), "skip%d ", x->edge);
    snprintf(buf, len, "%s%s %d->%d mb%d", edge, x->grad ? "grad" : "act", x->from, x->to, x->mb);
}

void tr_program_trace_span(FILE *f, const char *name, const char *cat, int wait, int async, int id,
                           int pid, double ts, double dur, int step)
{
    if (async)
        fprintf(f,
                ",\n{\"name\":\"%s\",\"cat\":\"reshard\",\"ph\":\"b\",\"id\":%d,\"pid\":%d,"
                "\"tid\":1,\"ts\":%.3f,\"args\":{\"step\":%d}},\n"
                "{\"name\":\"%s\",\"cat\":\"reshard\",\"ph\":\"e\",\"id\":%d,\"pid\":%d,"
                "\"tid\":1,\"ts\":%.3f}",
                name, id, pid, ts, step, name, id, pid, ts + dur);
    else
        fprintf(f,
                ",\n{\"name\":\"%s%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":0,"
                "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"step\":%d}}",
                wait ? "wait " : "", name, cat, pid, ts, dur, step);
}
