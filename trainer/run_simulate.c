/* meshcast-train --simulate: one step of the configuration through the step simulator
 * (simulate.h) with costs from a trace or a costs file (sim_costs.h); optionally against a
 * real run's trace (--sim-compare) and written as a Chrome trace (--trace). Bad input (a
 * costs file or trace that cannot be read, an unknown topology) exits 2 with one line. */
#include "options.h"
#include "simulate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char *why)
{
    fprintf(stderr, "meshcast-train: %s\n", why);
    return 2;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Measured steps of the trace against the simulated one. */
static void compare(const tr_options *o, const double *ms, int n, double sim)
{
    double sum = 0.0, *err = malloc(((size_t)n + 1) * sizeof(double));
    if (!o->json)
        printf("# measured (%s, its steps after the first: first event to last) against "
               "simulated, ms\nstep  measured  simulated   error\n",
               o->sim_compare);
    for (int i = 0; i < n; i++) {
        const double e = (sim - ms[i]) / ms[i];
        if (err)
            err[i] = e;
        sum += ms[i];
        if (o->json)
            printf("{\"step\":%d,\"measured_ms\":%.3f,\"simulated_ms\":%.3f,\"error\":%.4f}\n",
                   i + 1, ms[i] * 1e3, sim * 1e3, e);
        else
            printf("%4d  %8.2f  %9.2f  %+6.1f%%\n", i + 1, ms[i] * 1e3, sim * 1e3, 100.0 * e);
    }
    const double mean = sum / n, e = (sim - mean) / mean;
    double med = 0.0;
    if (err) {
        qsort(err, (size_t)n, sizeof(double), by_value);
        med = n % 2 ? err[n / 2] : (err[n / 2 - 1] + err[n / 2]) / 2;
    }
    if (o->json)
        printf("{\"measured_ms_mean\":%.3f,\"simulated_ms\":%.3f,\"error\":%.4f,"
               "\"median_step_error\":%.4f,\"steps\":%d}\n",
               mean * 1e3, sim * 1e3, e, med, n);
    else
        printf("# mean measured %.2f ms, simulated %.2f ms: error %+.1f%% (median step %+.1f%%, "
               "%d steps)\n",
               mean * 1e3, sim * 1e3, 100.0 * e, 100.0 * med, n);
    free(err);
}

static void print_result(const tr_options *o, const tr_sim_result *r)
{
    const double hidden = r->reshard_s > 0 ? r->hidden_s / r->reshard_s : 1.0;
    if (o->json)
        printf("{\"simulated\":true,\"ms\":%.3f,\"tokens_per_s\":%.1f,\"comm_hidden\":%.4f,"
               "\"compute_ms\":%.3f,\"reshard_ms\":%.3f,\"wait_ms\":%.3f,\"reduce_ms\":%.3f,"
               "\"tp_sum_ms\":%.3f}\n",
               r->step_s * 1e3, r->tokens_per_s, hidden, r->compute_s * 1e3, r->reshard_s * 1e3,
               r->wait_s * 1e3, r->reduce_s * 1e3, r->tp_sum_s * 1e3);
    else
        printf("simulated step  ms %.2f  tokens/s %.0f  comm hidden %.0f%%  compute ms %.2f  "
               "reshard ms %.2f  wait ms %.2f  reduce ms %.2f\n",
               r->step_s * 1e3, r->tokens_per_s, 100.0 * hidden, r->compute_s * 1e3,
               r->reshard_s * 1e3, r->wait_s * 1e3, r->reduce_s * 1e3);
}

/* The per-op costs the step used (fitted from a trace, or as the file gave them). */
static void print_costs(const tr_options *o, const tr_sim_costs *c)
{
    static const char ops[] = "FBIW";
    if (o->json) {
        printf("{\"costs\":{");
        for (int k = 0; k < TR_NOPS; k++)
            printf("\"%c\":{\"fixed_s\":%.6g,\"per_gflop_s\":%.6g},", ops[k], c->fixed[k],
                   c->per_gflop[k]);
        printf("\"adamw_per_mparam_s\":%.6g,\"comm_s\":%.6g,\"gap_s\":%.6g,\"step_s\":%.6g}}\n",
               c->adamw_per_mparam, c->comm, c->gap, c->step);
        return;
    }
    printf("# costs per op (s): ");
    for (int k = 0; k < TR_NOPS; k++)
        printf("%c %.3g + %.3g/GFLOP, ", ops[k], c->fixed[k], c->per_gflop[k]);
    printf("adamw %.3g/Mparam, gap %.3g, step %.3g%s\n", c->adamw_per_mparam, c->gap, c->step,
           c->comm > 0 ? ", every reshard fixed" : "");
}

static void print_header(const tr_options *o)
{
    const char *arch = o->cfg.arch == TR_ARCH_GPT ? "gpt" : "utransformer";
    char tp[4 * TR_MAX_STAGES + 1] = "";
    for (int r = 0; r < o->stages; r++)
        snprintf(tp + strlen(tp), sizeof(tp) - strlen(tp), "%s%d", r ? "," : "", o->tp[r]);
    const char *sched = o->stages > 1 ? mc_sched_kind_name(o->kind) : "none",
               *costs = o->sim_costs ? o->sim_costs : o->sim_compare,
               *topo = o->topology ? o->topology : "cpu-testbed";
    const double speed = o->sim_speed > 0 ? o->sim_speed : 1.0;
    if (o->json)
        printf("{\"simulate\":true,\"model\":\"%s\",\"layers\":%d,\"dmodel\":%d,\"heads\":%d,"
               "\"seq\":%d,\"batch\":%d,\"microbatches\":%d,\"stages\":%d,\"dp\":%d,\"tp\":[%s],"
               "\"schedule\":\"%s\",\"strategy\":\"%s\",\"topology\":\"%s\",\"costs\":\"%s\","
               "\"speed\":%g}\n",
               arch, o->cfg.blocks, o->cfg.dmodel, o->cfg.heads, o->cfg.seq, o->batch, o->micro,
               o->stages, o->dp, tp, sched, mc_strategy_name(o->strategy, o->sender), topo, costs,
               speed);
    else
        printf("# simulated %s: %d layers, dmodel %d, %d heads, seq %d, batch %d in %d "
               "microbatches; %d pipeline x %d data-parallel x tp %s, schedule %s, strategy %s, "
               "topology %s; costs %s, speed %g\n",
               arch, o->cfg.blocks, o->cfg.dmodel, o->cfg.heads, o->cfg.seq, o->batch, o->micro,
               o->stages, o->dp, tp, sched, mc_strategy_name(o->strategy, o->sender), topo, costs,
               speed);
}

int tr_run_simulation(const tr_options *o)
{
    char err[512];
    tr_sim_config c = {.model = o->cfg,
                       .micro_batch = o->batch / o->micro,
                       .ranks = o->stages,
                       .microbatches = o->micro,
                       .dp = o->dp,
                       .dp_buckets = o->dp_buckets,
                       .tp = o->tp,
                       .kind = o->kind,
                       .strategy = o->strategy,
                       .sender = o->sender,
                       .sums_strategy = o->sim_sums ? (int)o->sums_strategy : -1,
                       .sums_sender = o->sums_sender,
                       .topology = o->topology,
                       .speed = o->sim_speed};
    double *steps = NULL;
    int nsteps = 0, rc = 1;
    tr_sim *s = NULL;
    if (tr_sim_costs_load(o->sim_costs ? o->sim_costs : o->sim_compare, &c.costs, err,
                          sizeof(err)) ||
        (o->sim_compare && tr_sim_trace_steps(o->sim_compare, &steps, &nsteps, err, sizeof(err))))
        return bad(err);
    if (tr_sim_create(&c, &s, err, sizeof(err))) {
        tr_sim_free(s);
        free(steps);
        return bad(err);
    }
    tr_sim_result r;
    if (tr_sim_run(s, &r, err, sizeof(err))) {
        fprintf(stderr, "meshcast-train: %s\n", err);
        goto out;
    }
    print_header(o);
    print_result(o, &r);
    print_costs(o, &c.costs);
    if (nsteps)
        compare(o, steps, nsteps, r.step_s);
    rc = 0;
    if (o->trace) {
        FILE *f = fopen(o->trace, "w");
        int wrong = !f || tr_sim_write_trace(s, f);
        if ((f && fclose(f)) || wrong) {
            fprintf(stderr, "meshcast-train: --trace %s: cannot write it\n", o->trace);
            rc = 1;
        }
    }
out:
    tr_sim_free(s);
    free(steps);
    return rc;
}
