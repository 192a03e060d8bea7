/* The pipeline's events: what each rank did when (compute ops, waits, reshards from its
 * start to when it saw them done), gathered to rank 0 and written as a Chrome trace. */
#include "pipeline_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tr_pipe_record(tr_pipe *p, int kind, int index, double t0, double t1)
{
    if (!p->cfg.trace)
        return;
    if (p->nev == p->cap) {
        int cap = p->cap ? 2 * p->cap : 256;
        event_t *ev = realloc(p->ev, (size_t)cap * sizeof(*ev));
        if (!ev)
            return; /* the trace loses events; the step goes on */
        p->ev = ev;
        p->cap = cap;
    }
    p->ev[p->nev++] = (event_t){t0, t1, kind, p->wrank, p->step, index};
}

static void write_event(const tr_pipe *p, FILE *f, const event_t *e, double t0, int id)
{
    const double ts = (e->t0 - t0) * 1e6, dur = (e->t1 - e->t0) * 1e6;
    char name[96];
    const int r = tr_pipe_rank_of(p, e->rank);
    const int async = e->kind == EV_RESHARD || (e->kind == EV_DP_SUM && e->index >= 0);
    if (e->kind == EV_COMPUTE) {
        const instr_t *in = &p->g.prog[r][e->index];
        const mc_sched_action_t *list;
        size_t n;
        tr_pipe_actions(p, r, &list, &n);
        tr_program_compute_name(&list[in->index], in, name, sizeof(name));
    } else if (e->kind == EV_DP_SUM && e->index >= 0) {
        tr_program_bucket_name(&p->g.buckets[r][e->index], name, sizeof(name));
    } else if (e->kind == EV_DP_SUM || e->kind == EV_OPTIM || e->kind == EV_STEP ||
               e->kind == EV_DP_WAIT) {
        snprintf(name, sizeof(name), "%s",
                 e->kind == EV_DP_SUM    ? "dp sum"
                 : e->kind == EV_OPTIM   ? "adamw"
                 : e->kind == EV_DP_WAIT ? "wait dp sums"
                                         : "step");
    } else {
        tr_program_xfer_name(&p->x[e->index], name, sizeof(name));
    }
    /* reshards and bucket sums are async: from the start to when the rank saw it done */
    tr_program_trace_span(f, name,
                          e->kind == EV_WAIT || e->kind == EV_DP_WAIT ? "wait"
                          : e->kind == EV_COMPUTE                     ? "compute"
                                                                      : "step",
                          e->kind == EV_WAIT, async, id, e->rank, ts, dur, e->step);
}

/* The run's shape, so that the step simulator can read per-op costs from the trace
 * (sim_costs.c): the model, the microbatch, and every stage's layers and rank. */
static void write_config(const tr_pipe *p, FILE *f)
{
    const tr_config *c = &p->whole->cfg;
    fprintf(f,
            "{\"otherData\":{\"model\":\"%s\",\"layers\":%d,\"dmodel\":%d,\"heads\":%d,"
            "\"seq\":%d,\"micro_batch\":%d,\"microbatches\":%d,\"dp\":%d,\"ranks\":%d,"
            "\"schedule\":\"%s\",\"tp\":[",
            c->arch == TR_ARCH_GPT ? "gpt" : "utransformer", c->blocks, c->dmodel, c->heads, c->seq,
            p->cfg.micro_batch, p->M * p->D, p->D, p->nranks,
            p->sched ? mc_sched_kind_name(p->cfg.kind) : "none");
    for (int r = 0; r < p->nranks; r++)
        fprintf(f, "%s%d", r ? "," : "", p->tp[r]);
    fputs("],\"stages\":[", f);
    for (int s = 0; s < p->nstages; s++)
        fprintf(f, "%s[%d,%d,%d]", s ? "," : "", p->stages[s].first, p->stages[s].last,
                p->stages[s].rank);
    fputs("]},\n", f);
}

int tr_pipe_write_trace(tr_pipe *p, FILE *f, char *err, size_t len)
{
    const int n = p->nworld;
    int64_t mine = p->nev, *counts = calloc((size_t)n, sizeof(int64_t)), most = 0;
    event_t *all = NULL, *pad = NULL;
    int rc = -1;
    if (!counts || mc_comm_allgather(p->comm, &mine, counts, sizeof(mine)))
        goto out;
    for (int r = 0; r < n; r++)
        most = counts[r] > most ? counts[r] : most;
    pad = calloc((size_t)most + 1, sizeof(*pad));
    all = calloc((size_t)most * n + 1, sizeof(*all));
    if (!pad || !all)
        goto out;
    if (p->nev)
        memcpy(pad, p->ev, (size_t)p->nev * sizeof(*pad));
    if (mc_comm_allgather(p->comm, pad, all, (size_t)most * sizeof(*pad)))
        goto out;
    rc = 0;
    if (!f)
        goto out;
    double t0 = 0.0;
    for (int r = 0; r < n; r++)
        for (int64_t i = 0; i < counts[r]; i++)
            if (t0 == 0.0 || all[r * most + i].t0 < t0)
                t0 = all[r * most + i].t0;
    write_config(p, f);
    fputs("\"traceEvents\":[", f);
    for (int r = 0; r < n; r++) {
        fprintf(f,
                "%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"rank "
                "%d\"}},\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":"
                "{\"name\":\"compute and waits\"}},\n{\"name\":\"thread_name\",\"ph\":\"M\","
                "\"pid\":%d,\"tid\":1,\"args\":{\"name\":\"reshards\"}}",
                r ? "," : "", r, r, r, r);
        for (int64_t i = 0; i < counts[r]; i++)
            write_event(p, f, &all[r * most + i], t0, (int)(r * most + i));
    }
    fprintf(f, "\n]}\n");
    rc = ferror(f) ? -1 : 0;
out:
    if (rc)
        snprintf(err, len, "trace: %s", f && ferror(f) ? "write failed" : mc_last_error());
    free(counts);
    free(pad);
    free(all);
    return rc;
}
