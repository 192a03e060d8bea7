/* Seeded random resharding cases at cluster scale (docs/planning.md, "Scale benchmark"):
 * the three built-in GPU profiles (or every case on one topology: --topology), 2-40 hosts (2 to
 * --max-hosts), bf16 tensors of 4 MiB to 64 GiB,
 * source and destination meshes of whole hosts (axis 0 hosts, axis 1 devices in a host) either on
 * disjoint hosts or the same ones, random DTensor-style specs. Written as suite lines so
 * that `bench` runs them exactly like a suite file. */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "bench_gen.h"
#include "cli.h"

static const char *const profiles[] = {"dgx-h100", "dgx-a100", "p3.8xlarge"};
#define NPROFILES 3
/* Cases needing more deliveries are drawn again: keeps a few hundred cases to minutes. */
#define MAX_DELIVERIES 32768

static uint64_t next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int64_t below(uint64_t *s, int64_t n)
{
    return (int64_t)(next(s) % (uint64_t)n);
}

/* A spec for an a x dph mesh over ndim dims: each mesh axis replicates (1 in 4) or shards a
 * random dim; two axes on one dim go in random order. */
static void draw_spec(uint64_t *s, int ndim, char *out)
{
    int dim_of[2];
    for (int ax = 0; ax < 2; ax++)
        dim_of[ax] = below(s, 4) == 0 ? -1 : (int)below(s, ndim);
    int swap = (int)below(s, 2);
    out[0] = '\0';
    for (int d = 0; d < ndim; d++) {
        int first = swap, second = !swap;
        if (dim_of[first] != d && dim_of[second] != d) {
            strcat(out, "R");
            continue;
        }
        strcat(out, "S");
        if (dim_of[first] == d)
            strcat(out, first ? "1" : "0");
        if (dim_of[second] == d)
            strcat(out, second ? "1" : "0");
    }
}

/* The topologies cases are drawn on: their names (in case names and --topology) and devices
 * per host. */
typedef struct {
    const char *arg[NPROFILES]; /* --topology values */
    char name[NPROFILES][64];   /* in case names: letters, digits, '.', '-', '_' */
    int64_t dph[NPROFILES];
} gen_topos_t;

/* One case line of 2 to max_hosts hosts on topology p of t (p drawn first, also where every
 * p is the same topology, so a seed draws as it does on the profiles). */
static void draw_case(uint64_t *s, int64_t index, int64_t max_hosts, const gen_topos_t *t,
                      char *line, size_t len)
{
    int p = (int)below(s, NPROFILES);
    const int64_t *dph = t->dph;
    int64_t hosts = 2 + below(s, max_hosts - 1), a, b, s0, d0;
    if (below(s, 3) == 0) { /* the same mesh */
        a = b = 1 + below(s, hosts);
        s0 = d0 = below(s, hosts - a + 1);
    } else {
        a = 1 + below(s, hosts - 1);
        b = 1 + below(s, hosts - a);
        int64_t spare = hosts - a - b, lo = below(s, spare + 1);
        int64_t hi = lo + below(s, spare - lo + 1);
        s0 = lo;
        d0 = hi + a;
        if (below(s, 2)) { /* the destination on the lower hosts */
            d0 = lo;
            s0 = hi + b;
        }
    }
    int ndim = 2 + (int)below(s, 2), bits = 21 + (int)below(s, 15); /* 2^bits bf16 elements */
    int dim_bits[3] = {4, 4, 4};
    for (int i = 4 * ndim; i < bits; i++)
        dim_bits[below(s, ndim)]++;
    char shape[64] = "", src_spec[16], dst_spec[16];
    for (int d = 0; d < ndim; d++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", d ? "," : "",
                 1LL << dim_bits[d]);
    draw_spec(s, ndim, src_spec);
    draw_spec(s, ndim, dst_spec);
    snprintf(line, len,
             "g%04" PRId64 "-%s --topology %s --hosts %" PRId64 " --dtype bf16 --shape %s "
             "--src-mesh %" PRId64 "x%" PRId64 " --src-spec %s --src-devices %" PRId64 "-%" PRId64
             " --dst-mesh %" PRId64 "x%" PRId64 " --dst-spec %s --dst-devices %" PRId64 "-%" PRId64
             "\n",
             index, t->name[p], t->arg[p], hosts, shape, a, dph[p], src_spec, s0 * dph[p],
             (s0 + a) * dph[p] - 1, b, dph[p], dst_spec, d0 * dph[p], (d0 + b) * dph[p] - 1);
}

/* Deliveries of a case line (pieces to devices that need them: send_recv's messages), -1
 * when it does not build, MAX_DELIVERIES + 1 when it does not plan. */
static int64_t deliveries(const char *text)
{
    char buf[1024], *tok[32], *save = NULL;
    int n = 0, i;
    snprintf(buf, sizeof buf, "%s", text);
    for (char *t = strtok_r(buf, " \n", &save); t && n < 32; t = strtok_r(NULL, " \n", &save))
        tok[n++] = t;
    cli_case_t c = {0};
    cli_built_t b;
    for (i = 1; i < n; i++)
        if (cli_case_option(&c, n, tok, &i) != 1)
            return -1;
    if (cli_case_build(&c, &b))
        return -1;
    mc_plan_params_t params = {.field_mask = MC_PLAN_PARAM_STRATEGY,
                               .strategy = MC_STRATEGY_SEND_RECV};
    mc_plan_t *plan = NULL;
    mc_plan_stats_t st;
    int64_t total = MAX_DELIVERIES + 1;
    if (mc_plan_create(b.src, b.dst, b.topo, &params, &plan) == MC_OK &&
        mc_plan_query(plan, &st) == MC_OK)
        total = st.messages;
    mc_plan_destroy(plan);
    cli_built_free(&b);
    return total;
}

FILE *bench_generate(int64_t n, uint64_t seed, int64_t max_hosts, const char *topology, int *rc)
{
    gen_topos_t topos;
    if (topology && (topology[strcspn(topology, " \t\n")] || strlen(topology) > 256)) {
        *rc = cli_usage_error("bench: --topology '%s' with --generate: no spaces and at most 256 "
                              "characters (the cases are suite lines)",
                              topology);
        return NULL;
    }
    for (int p = 0; p < NPROFILES; p++) {
        if (topology && p > 0) { /* every case on the one topology, loaded once */
            topos.arg[p] = topos.arg[0];
            topos.dph[p] = topos.dph[0];
            memcpy(topos.name[p], topos.name[0], sizeof topos.name[p]);
            continue;
        }
        mc_topology_t *t;
        topos.arg[p] = topology ? topology : profiles[p];
        mc_status_t st = mc_topology_load(topos.arg[p], &t);
        if (st) {
            *rc = cli_fail(st, topos.arg[p]);
            return NULL;
        }
        topos.dph[p] = mc_topology_devices_per_host(t);
        snprintf(topos.name[p], sizeof topos.name[p], "%s", mc_topology_name(t));
        for (char *c = topos.name[p]; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-' && *c != '_')
                *c = '_';
        mc_topology_destroy(t);
    }
    FILE *f = tmpfile();
    if (!f) {
        perror("meshcast: bench --generate: temporary file");
        *rc = 1;
        return NULL;
    }
    uint64_t state = seed;
    fprintf(f, "# meshcast bench --generate %" PRId64 " --seed %" PRIu64, n, seed);
    if (max_hosts != BENCH_GEN_HOSTS)
        fprintf(f, " --max-hosts %" PRId64, max_hosts);
    if (topology)
        fprintf(f, " --topology %s", topology);
    fputc('\n', f);
    for (int64_t i = 0; i < n; i++) {
        char line[1024];
        int64_t d;
        do /* redraw cases that move nothing or too much */
            draw_case(&state, i, max_hosts, &topos, line, sizeof line);
        while ((d = deliveries(line)) == 0 || d > MAX_DELIVERIES);
        if (d < 0) {
            fclose(f);
            *rc = 1;
            return NULL;
        }
        fputs(line, f);
    }
    rewind(f);
    *rc = 0;
    return f;
}
