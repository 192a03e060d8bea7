/* Planning with one or every strategy, and the table / JSON that `plan` and `bench` print. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "plan_table.h"
#include "util/util.h"

/* CPU time rather than wall time: on a shared machine the wall time of a plan swings with
 * the load, its CPU time much less. */
static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static const char *const all_strategies[] = {"send_recv",          "local_allgather",
                                             "broadcast_first",    "broadcast_lb_size",
                                             "broadcast_lb_order", "meshcast"};

int plan_table_run(const cli_case_t *c, const cli_built_t *b, plan_row_t *rows, int *nrows)
{
    const char *const *names = all_strategies;
    int n = sizeof all_strategies / sizeof all_strategies[0];
    const char *one = c->strategy ? c->strategy : "meshcast";
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY | MC_PLAN_PARAM_SENDER};
    mc_status_t s;
    if (strcmp(one, "all")) {
        names = &one;
        n = 1;
    }
    if (b->chunk_bytes) {
        params.chunk_bytes = b->chunk_bytes;
        params.field_mask |= MC_PLAN_PARAM_CHUNK_BYTES;
    }
    *nrows = 0;
    for (int i = 0; i < n; i++) {
        if ((s = mc_strategy_parse(names[i], &params.strategy, &params.sender)))
            return cli_fail(s, "bad --strategy");
        plan_row_t *r = &rows[(*nrows)++];
        *r = (plan_row_t){.strategy = names[i]};
        double t0 = cpu_ms();
        s = mc_plan_create(b->src, b->dst, b->topo, &params, &r->plan);
        r->cpu_ms = cpu_ms() - t0;
        if (s == MC_ERR_UNSUPPORTED && n > 1) {
            snprintf(r->refused, sizeof r->refused, "%s", mc_last_error());
            continue;
        }
        if (s) {
            char what[64];
            (*nrows)--;
            snprintf(what, sizeof what, "planning with %s", names[i]);
            return cli_fail(s, what);
        }
        mc_plan_query(r->plan, &r->stats);
    }
    for (int i = 0; i < *nrows; i++)
        if (rows[i].plan)
            return 0;
    /* every strategy refused: the case itself cannot be planned */
    plan_table_free(rows, *nrows);
    *nrows = 0;
    return cli_fail(MC_ERR_UNSUPPORTED, "planning with all");
}

/* "0-7" or "0-3,8-11": the mesh's devices, runs of consecutive ids joined. */
static void print_devices(const mc_mesh_t *m, FILE *out)
{
    int64_t n = mc_mesh_size(m);
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j + 1 < n && mc_mesh_device(m, j + 1) == mc_mesh_device(m, j) + 1)
            j++;
        fprintf(out, "%s%lld", i ? "," : "", (long long)mc_mesh_device(m, i));
        if (j > i)
            fprintf(out, "-%lld", (long long)mc_mesh_device(m, j));
        i = j + 1;
    }
}

void plan_case_header(const cli_built_t *b, FILE *out)
{
    const mc_topology_t *t = b->topo;
    fprintf(out, "# topology %s: %lld host(s) x %lld devices; src devices ", mc_topology_name(t),
            (long long)mc_topology_hosts(t), (long long)mc_topology_devices_per_host(t));
    print_devices(mc_layout_mesh(b->src), out);
    fputs(", dst devices ", out);
    print_devices(mc_layout_mesh(b->dst), out);
    fputc('\n', out);
}

void plan_table_print(const plan_row_t *rows, int nrows, FILE *out)
{
    fprintf(out, "%-18s %8s %9s %13s %13s %12s %11s %11s %8s %9s\n", "strategy", "pieces",
            "messages", "nic_bytes", "intra_bytes", "peak_stage", "estimate_s", "bound_s",
            "est/bnd", "plan_ms");
    for (int i = 0; i < nrows; i++) {
        const mc_plan_stats_t *st = &rows[i].stats;
        if (!rows[i].plan) {
            fprintf(out, "%-18s refused: %s\n", rows[i].strategy, rows[i].refused);
            continue;
        }
        fprintf(out, "%-18s %8lld %9lld %13lld %13lld %12lld %11.5g %11.5g %8.3f %9.3f\n",
                rows[i].strategy, (long long)st->pieces, (long long)st->messages,
                (long long)st->nic_bytes, (long long)st->intra_host_bytes,
                (long long)st->peak_staging_bytes, st->estimate_s, st->lower_bound_s,
                st->lower_bound_s > 0 ? st->estimate_s / st->lower_bound_s : 1.0, st->plan_ms);
    }
}

/* s as a JSON string body (quotes and backslashes escaped, control bytes dropped). */
static void json_text(const char *s, FILE *out)
{
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, out);
}

void plan_row_json_fields(const plan_row_t *row, FILE *out)
{
    const mc_plan_stats_t *st = &row->stats;
    if (!row->plan) {
        fprintf(out, "\"strategy\": \"%s\", \"refused\": \"", row->strategy);
        json_text(row->refused, out);
        fputc('"', out);
        return;
    }
    fprintf(out,
            "\"strategy\": \"%s\", \"pieces\": %lld, \"messages\": %lld, \"chunks\": %lld, "
            "\"nic_bytes\": %lld, \"intra_host_bytes\": %lld, \"local_bytes\": %lld, "
            "\"peak_staging_bytes\": %lld, \"estimate_s\": %.9g, \"lower_bound_s\": %.9g, "
            "\"plan_ms\": %.6g, \"valid\": %s",
            row->strategy, (long long)st->pieces, (long long)st->messages, (long long)st->chunks,
            (long long)st->nic_bytes, (long long)st->intra_host_bytes, (long long)st->local_bytes,
            (long long)st->peak_staging_bytes, st->estimate_s, st->lower_bound_s, st->plan_ms,
            st->valid ? "true" : "false");
}

void plan_table_json(const plan_row_t *rows, int nrows, int flows, FILE *out)
{
    fputs("{\"plans\": [", out);
    for (int i = 0; i < nrows; i++) {
        fputs(i ? ",\n  {" : "\n  {", out);
        plan_row_json_fields(&rows[i], out);
        if (flows && rows[i].plan) { /* --flows: the whole plan (pieces, flows, combiners) */
            fputs(", \"plan\": ", out);
            mc_plan_write(rows[i].plan, MC_FORMAT_JSON, out);
        }
        fputc('}', out);
    }
    fputs("\n]}\n", out);
}

void plan_table_free(plan_row_t *rows, int nrows)
{
    for (int i = 0; i < nrows; i++)
        mc_plan_destroy(rows[i].plan);
}
