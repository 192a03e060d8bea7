/* `meshcast bench`: every case of a suite with one or every strategy, nccl-tests style. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench_gen.h"
#include "bench_summary.h"
#include "cli.h"
#include "exec_run.h"
#include "plan_table.h"
#include "util/util.h"

#ifndef MESHCAST_SUITE_DIRS
#define MESHCAST_SUITE_DIRS "benchmarks/suites"
#endif
#define MAX_TOKENS 64

static char suite_where[1100]; /* "FILE:LINE" of the suite line being read */

static void usage(FILE *f)
{
    fputs("usage: meshcast bench --suite NAME|FILE | --generate N [--seed S] [--max-hosts H]\n"
          "                      [--write-cases FILE] [--strategy NAME|all]\n"
          "                      [--transport sim|local|ucx] [--iters N] [--warmup N]\n"
          "                      [--max-bytes B] [--topology NAME|FILE] [--hosts N] [--json FILE]\n"
          "suites are found as FILE, or NAME.cases in " MESHCAST_SUITE_DIRS "\n"
          "--generate: N seeded random cases at cluster scale instead of a suite (seed 1)\n"
          "--max-hosts: generated cases draw 2 to H hosts (default 40, at most 1024)\n"
          "--topology with --generate: every case drawn on that topology (a profile or\n"
          "               FILE, with its devices per host) instead of the 3 profiles\n"
          "--write-cases: write the generated cases as a suite file (- for stdout) and stop;\n"
          "               `--suite FILE` runs them, and each line is `meshcast plan` options\n"
          "sim prints the cost model's estimates; local and ucx execute every case on real\n"
          "bytes and verify them (ucx: under mpirun or the MESHCAST_RANK environment).\n",
          f);
}

/* A count or seed option value: digits only, at most max. */
static int parse_count(const char *flag, const char *text, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!*text || *end || *text == '-' || *text == '+' || errno || v > max)
        return cli_usage_error("bench: bad %s '%s' (0 to %llu)", flag, text,
                               (unsigned long long)max);
    *out = v;
    return 0;
}

static FILE *open_suite(const char *name, char *path, size_t len)
{
    if (strchr(name, '/') || access(name, R_OK) == 0) {
        snprintf(path, len, "%s", name);
        return fopen(path, "r");
    }
    char dirs[1024];
    snprintf(dirs, sizeof dirs, "%s", MESHCAST_SUITE_DIRS);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(path, len, "%s/%s.cases", d, name);
        FILE *f = fopen(path, "r");
        if (f)
            return f;
    }
    return NULL;
}

/* Fills c from one suite line "NAME --opt value ..."; tokens point into line, which has
 * at least one token. */
static int parse_line(char *line, char **name, cli_case_t *c)
{
    char *tok[MAX_TOKENS];
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == MAX_TOKENS)
            return cli_usage_error("more than %d words", MAX_TOKENS);
        tok[n++] = t;
    }
    *name = tok[0];
    cli_set_context("%s: case %s", suite_where, tok[0]);
    for (int i = 1; i < n; i++) {
        int r = cli_case_option(c, n, tok, &i);
        if (r < 0)
            return 2;
        if (r == 0)
            return cli_usage_error("unknown option '%s'", tok[i]);
    }
    return 0;
}

/* Reads suite lines from f until the next case; builds it into *b with the command-line
 * overrides applied. Returns 0 with a case, -1 at the end, else an exit status (one line
 * printed, naming FILE:LINE and the case). */
static int next_case(FILE *f, const char *path, int *lineno, char **line, size_t *cap,
                     const cli_case_t *over, char **name, cli_case_t *c, cli_built_t *b)
{
    while (getline(line, cap, f) >= 0) { /* lines of any length */
        ++*lineno;
        char *p = *line + strspn(*line, " \t\r\n"); /* CRLF line ends too */
        if (*p == '#' || *p == '\0')
            continue;
        snprintf(suite_where, sizeof suite_where, "%s:%d", path, *lineno);
        cli_set_context("%s", suite_where);
        memset(c, 0, sizeof *c);
        int rc = parse_line(p, name, c);
        if (rc)
            return rc;
        c->strategy = over->strategy ? over->strategy : "all";
        if (over->topology)
            c->topology = over->topology;
        if (over->hosts)
            c->hosts = over->hosts;
        if (over->chunk)
            c->chunk = over->chunk;
        if (over->max_bytes)
            c->max_bytes = over->max_bytes;
        return cli_case_build(c, b);
    }
    cli_set_context(NULL);
    return -1;
}

/* --write-cases: the generated suite to a file, so any case can be planned on its own. */
static int write_cases(int64_t ncases, uint64_t seed, int64_t max_hosts, const char *topology,
                       const char *path)
{
    int rc = 0;
    FILE *in = bench_generate(ncases, seed, max_hosts, topology, &rc), *out = NULL;
    if (!in)
        return rc;
    if ((rc = cli_open_output(path, "--write-cases", &out))) {
        fclose(in);
        return rc;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0 && fwrite(buf, 1, n, out) == n)
        ;
    rc = ferror(in) || ferror(out);
    fclose(in);
    if (cli_close_output(out, path) || rc) {
        if (rc)
            fprintf(stderr, "meshcast: bench --write-cases: writing '%s' failed\n", path);
        rc = 1;
    }
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    const char *suite = NULL, *json_path = NULL, *transport = "sim", *generate = NULL;
    const char *seed_text = "1", *cases_path = NULL, *max_hosts_text = NULL;
    cli_case_t over = {0};
    exec_opts_t opts = {.iters = 5, .warmup = 1, .verify = 1};
    for (int i = 1; i < argc; i++) {
        int r = cli_case_option(&over, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r)
            continue;
        if (i + 1 == argc && (!strcmp(argv[i], "--transport") || !strcmp(argv[i], "--iters") ||
                              !strcmp(argv[i], "--warmup") || !strcmp(argv[i], "--suite") ||
                              !strcmp(argv[i], "--json") || !strcmp(argv[i], "--generate") ||
                              !strcmp(argv[i], "--seed") || !strcmp(argv[i], "--write-cases") ||
                              !strcmp(argv[i], "--max-hosts")))
            return cli_usage_error("%s needs a value", argv[i]);
        if (!strcmp(argv[i], "--suite") && i + 1 < argc)
            suite = argv[++i];
        else if (!strcmp(argv[i], "--generate") && i + 1 < argc)
            generate = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed_text = argv[++i];
        else if (!strcmp(argv[i], "--max-hosts") && i + 1 < argc)
            max_hosts_text = argv[++i];
        else if (!strcmp(argv[i], "--write-cases") && i + 1 < argc)
            cases_path = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json_path = argv[++i];
        else if (!strcmp(argv[i], "--transport") && i + 1 < argc)
            transport = argv[++i];
        else if ((!strcmp(argv[i], "--iters") || !strcmp(argv[i], "--warmup")) && i + 1 < argc) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            int is_iters = !strcmp(argv[i], "--iters");
            if (!*argv[i + 1] || *end || v < (is_iters ? 1 : 0) || v > 1000000)
                return cli_usage_error("bench: bad %s '%s'", argv[i], argv[i + 1]);
            *(is_iters ? &opts.iters : &opts.warmup) = (int)v;
            i++;
        } else if (cli_is_help(argv[i])) {
            usage(stdout);
            return 0;
        } else
            return cli_usage_error("bench: unknown option '%s' (see meshcast bench --help)",
                                   argv[i]);
    }
    if (!suite == !generate)
        return cli_usage_error(suite ? "bench: --suite and --generate exclude each other"
                                     : "bench: missing --suite (or --generate)");
    uint64_t ncases = 0, seed = 0, max_hosts = BENCH_GEN_HOSTS;
    if (generate && (parse_count("--generate", generate, BENCH_GEN_MAX, &ncases) ||
                     parse_count("--seed", seed_text, UINT64_MAX, &seed) ||
                     (max_hosts_text &&
                      parse_count("--max-hosts", max_hosts_text, BENCH_GEN_MAX_HOSTS, &max_hosts))))
        return 2;
    if (generate && ncases == 0)
        return cli_usage_error("bench: bad --generate '%s' (at least 1 case)", generate);
    if (generate && max_hosts < 2)
        return cli_usage_error("bench: bad --max-hosts '%s' (2 to %d: a case spans 2 hosts or "
                               "more)",
                               max_hosts_text, BENCH_GEN_MAX_HOSTS);
    if (cases_path && !generate)
        return cli_usage_error("bench: --write-cases needs --generate");
    if (max_hosts_text && !generate)
        return cli_usage_error("bench: --max-hosts needs --generate");
    if (cases_path)
        return write_cases((int64_t)ncases, seed, (int64_t)max_hosts, over.topology, cases_path);
    if (strcmp(transport, "sim") && strcmp(transport, "local") && strcmp(transport, "ucx"))
        return cli_usage_error("bench: unknown transport '%s' (sim, local, ucx)", transport);
    int real = strcmp(transport, "sim") != 0, rank = 0, rc = 0;
    mc_comm_t *comm = NULL;
    char path[1024], *line = NULL;
    size_t cap = 0;
    FILE *f = NULL;
    if (generate) {
        snprintf(path, sizeof path, "generated (seed %llu, 2-%llu hosts)", (unsigned long long)seed,
                 (unsigned long long)max_hosts);
        if (!(f = bench_generate((int64_t)ncases, seed, (int64_t)max_hosts, over.topology, &rc)))
            return rc;
    } else if (!(f = open_suite(suite, path, sizeof path)))
        return cli_usage_error("bench: unknown suite '%s' (no file, no %s.cases in %s)", suite,
                               suite, MESHCAST_SUITE_DIRS);
    /* every case is checked before anything is printed */
    int lineno = 0, results = 0, wrong_cases = 0, cases = 0;
    cli_case_t c;
    cli_built_t b;
    char *name = NULL;
    while (!(rc = next_case(f, path, &lineno, &line, &cap, &over, &name, &c, &b))) {
        cli_built_free(&b);
        cases++;
    }
    if (rc < 0 && ferror(f))
        rc = cli_usage_error("bench: cannot read suite '%s': %s", path, strerror(errno));
    else if (rc < 0 && !cases)
        rc = cli_usage_error("bench: suite '%s' has no cases", path);
    if (rc > 0 || (real && (rc = exec_comm_create(transport, &comm)))) {
        free(line);
        fclose(f);
        return rc;
    }
    rc = 0;
    rank = real ? mc_comm_rank(comm) : 0;
    rewind(f);
    lineno = 0;
    FILE *json = NULL;
    if (json_path && rank == 0 && (rc = cli_open_output(json_path, "--json", &json))) {
        free(line);
        fclose(f);
        mc_comm_destroy(comm);
        return rc;
    }
    int table = json != stdout; /* --json -: the JSON alone on stdout */
    bench_summary_t summary = {0};
    if (json)
        fputs("{\"results\": [", json);
    if (!table) {
    } else if (!real) {
        printf("# suite %s, transport sim (time = simulator estimate)\n", path);
        printf("%-12s %14s %-18s %11s %11s %8s %13s %9s %11s\n", "case", "bytes", "strategy",
               "estimate_s", "bound_s", "est/bnd", "nic_bytes", "plan_ms", "plan_cpu_ms");
    } else if (rank == 0) {
        printf("# suite %s, transport %s, %d rank(s), %d iterations after %d warm-up%s%s\n", path,
               transport, mc_comm_nranks(comm), opts.iters, opts.warmup,
               over.max_bytes ? ", tensors shrunk to at most " : "",
               over.max_bytes ? over.max_bytes : "");
        exec_print_local_note(stdout, transport);
        exec_print_header(stdout);
    }
    while (!rc && (rc = next_case(f, path, &lineno, &line, &cap, &over, &name, &c, &b)) >= 0) {
        plan_row_t rows[MC_PLAN_TABLE_MAX];
        int nrows = 0;
        if (rc)
            break;
        rc = plan_table_run(&c, &b, rows, &nrows);
        if (!rc && !real &&
            bench_summary_add(&summary, mc_topology_name(b.topo), name, rows, nrows))
            rc = cli_fail(MC_ERR_NOMEM, "bench summary");
        for (int i = 0; !real && i < nrows; i++) {
            const mc_plan_stats_t *st = &rows[i].stats;
            if (!rows[i].plan) {
                if (table)
                    printf("%-12s %14lld %-18s refused: %s\n", name,
                           (long long)mc_layout_bytes(b.src), rows[i].strategy, rows[i].refused);
                continue;
            }
            if (table)
                printf("%-12s %14lld %-18s %11.5g %11.5g %8.3f %13lld %9.3f %11.3f\n", name,
                       (long long)mc_layout_bytes(b.src), rows[i].strategy, st->estimate_s,
                       st->lower_bound_s,
                       st->lower_bound_s > 0 ? st->estimate_s / st->lower_bound_s : 1,
                       (long long)st->nic_bytes, st->plan_ms, rows[i].cpu_ms);
            if (json) {
                fprintf(json,
                        "%s\n  {\"case\": \"%s\", \"transport\": \"sim\", \"bytes\": %lld, "
                        "\"time_s\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}, "
                        "\"algbw_GBps\": %.6g, \"wrong\": null, ",
                        results++ ? "," : "", name, (long long)mc_layout_bytes(b.src),
                        st->estimate_s, st->estimate_s, st->estimate_s,
                        st->estimate_s > 0 ? (double)mc_layout_bytes(b.src) / st->estimate_s / 1e9
                                           : 0.0);
                plan_row_json_fields(&rows[i], json);
                fputc('}', json);
            }
        }
        for (int i = 0; real && !rc && i < nrows; i++) {
            exec_result_t res;
            if (!rows[i].plan)
                continue;
            if ((rc = exec_case(comm, &b, rows[i].plan, &opts, &res)))
                break;
            int64_t bytes = mc_layout_bytes(b.src);
            wrong_cases += res.wrong != 0;
            if (rank != 0)
                continue;
            if (table)
                exec_print_row(stdout, name, rows[i].strategy, bytes, &rows[i].stats, &res);
            fflush(stdout);
            if (json) {
                fprintf(json, "%s\n  {\"case\": \"%s\", ", results++ ? "," : "", name);
                exec_print_json(json, rows[i].strategy, transport, mc_comm_nranks(comm), bytes,
                                &rows[i].stats, &res);
                fputc('}', json);
            }
        }
        plan_table_free(rows, nrows);
        cli_built_free(&b);
    }
    rc = rc < 0 ? 0 : rc;
    cli_set_context(NULL);
    if (!rc && table)
        bench_summary_print(&summary, stdout);
    bench_summary_free(&summary);
    free(line);
    fclose(f);
    if (json) {
        fputs("\n]}\n", json);
        if (cli_close_output(json, json_path) && !rc)
            rc = 1;
    }
    if (!rc && wrong_cases) {
        if (rank == 0)
            fprintf(stderr, "meshcast: bench: %d runs delivered wrong elements\n", wrong_cases);
        rc = 1;
    }
    mc_comm_destroy(comm);
    return rc;
}
