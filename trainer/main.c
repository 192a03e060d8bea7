/* meshcast-train: trains a small byte-level GPT or U-transformer, in one process or as a
 * pipeline of --stages ranks (run_pipeline.c).
 * Bad input: exit 2 and one line "meshcast-train: ..." on stderr, nothing on stdout. */
#include "checkpoint.h"
#include "data.h"
#include "kernels.h"
#include "model.h"
#include "optim.h"
#include "options.h"
#include "train.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define DEFAULT_DATA "/usr/share/common-licenses/GPL-3"

static const char USAGE[] =
    "usage: meshcast-train [options]\n"
    "  --model gpt|utransformer  architecture (default gpt)\n"
    "  --layers N                transformer blocks (default 4)\n"
    "  --dmodel C                model width (default 64)\n"
    "  --heads H                 attention heads, divides C (default 4)\n"
    "  --seq T                   context length in bytes (default 64)\n"
    "  --batch B                 sequences per step (default 16)\n"
    "  --microbatches M          gradient accumulation: B/M sequences each (default 1)\n"
    "  --steps S                 training steps, counted from 0 also on --resume (default 100)\n"
    "  --lr X                    AdamW learning rate (default 0.001)\n"
    "  --seed N                  weights and batch sampling (default 1)\n"
    "  --data FILE               byte-level corpus (default " DEFAULT_DATA ")\n"
    "  --eval N                  held-out sequences for the final validation loss (default 64)\n"
    "  --checkpoint-dir DIR      save DIR/checkpoint.bin after the last step\n"
    "  --resume                  first load DIR/checkpoint.bin and continue from its step\n"
    "  --json                    one JSON object per line instead of text\n"
    "pipeline parallelism (one device per rank):\n"
    "  --stages P                pipeline ranks (default 1: one process, no schedule)\n"
    "  --schedule NAME           gpipe, 1f1b, eager-1f1b, interleaved-1f1b, zb-h1, zb-h2, zb-v\n"
    "                            (default 1f1b); --microbatches is its microbatch count\n"
    "  --strategy NAME           reshard strategy: send_recv, broadcast, meshcast (default)\n"
    "  --transport threads|ucx   ranks as threads of this process (default), or this process\n"
    "                            as one UCX rank (mpirun, or MESHCAST_RANK/NRANKS/ROOT)\n"
    "  --trace FILE              write a Chrome trace of the run (compute, reshards, waits)\n"
    "data and tensor parallelism (a pipeline rank is a mesh of dp x tp ranks):\n"
    "  --dp D                    replicas of every pipeline rank (default 1); each runs\n"
    "                            M/D of the microbatches, gradients are summed by a reshard\n"
    "  --dp-buckets N            the sum in N buckets of each stage's layers, each started as\n"
    "                            its layers' backward ends (default 2; 1: one sum after it)\n"
    "  --tp T|T1,T2,...          tensor-parallel ranks (Megatron split of every block), one\n"
    "                            degree for all pipeline ranks or one each; divides --heads\n"
    "step simulator (trains nothing; docs/trainer.md):\n"
    "  --simulate                time one step of this configuration from per-op costs\n"
    "  --sim-costs FILE          the costs: a --trace of a real run, or a costs file\n"
    "  --sim-speed X             compute X times faster than the costs say (default 1)\n"
    "  --sim-compare TRACE       print measured (TRACE's steps) against simulated; costs\n"
    "                            from TRACE unless --sim-costs\n"
    "  --topology NAME|FILE      the reshards' cluster (default cpu-testbed, a host per rank)\n"
    "  --sim-sums NAME           plan the tp and dp sums with this strategy (default\n"
    "                            --strategy's)\n";

static void die_usage(const char *fmt, ...)
{
    va_list ap;
    fputs("meshcast-train: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static long long parse_int(const char *opt, const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        die_usage("%s must be an integer in %lld..%lld, not '%s'", opt, lo, hi, s);
    return v;
}

/* "2" or "2,1,...": one tensor-parallel degree or one per pipeline rank; returns the count. */
static int parse_tp(const char *text, int *tp)
{
    char buf[256];
    int n = 0;
    if (strlen(text) >= sizeof(buf))
        die_usage("--tp list is too long");
    strcpy(buf, text);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        if (n == TR_MAX_STAGES)
            die_usage("--tp has more than %d degrees", TR_MAX_STAGES);
        tp[n++] = (int)parse_int("--tp", item, 1, 64);
    }
    if (n == 0 || text[strlen(text) - 1] == ',' || text[0] == ',' || strstr(text, ",,"))
        die_usage("--tp must be one degree or a comma-separated list, not '%s'", text);
    return n;
}

/* One degree for every pipeline rank, or one each; each takes whole heads (and then a whole
 * share of the MLP's 4C width too, as the heads divide C). */
static void check_tp(tr_options *o, int ntp)
{
    if (ntp != 1 && ntp != o->stages)
        die_usage("--tp gives %d degrees for --stages %d (give one, or one per stage)", ntp,
                  o->stages);
    for (int r = 1; ntp == 1 && r < o->stages; r++)
        o->tp[r] = o->tp[0];
    for (int r = 0; r < o->stages; r++)
        if (o->cfg.heads % o->tp[r])
            die_usage("--tp %d does not divide --heads %d (each tensor-parallel rank takes "
                      "whole heads)",
                      o->tp[r], o->cfg.heads);
    if (tr_options_ranks(o) > 1024)
        die_usage("--stages x --dp x --tp is %d ranks, more than 1024", tr_options_ranks(o));
}

/* The schedule must exist for these ranks and microbatches, and every stage needs a layer. */
static void check_pipeline(const tr_options *o)
{
    static const mc_sched_kind_t kinds[] = {
        MC_SCHED_GPIPE, MC_SCHED_1F1B,  MC_SCHED_EAGER_1F1B, MC_SCHED_INTERLEAVED_1F1B,
        MC_SCHED_ZB_H1, MC_SCHED_ZB_H2, MC_SCHED_ZB_V};
    int known = 0;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        known |= kinds[i] == o->kind;
    if (!known)
        die_usage("--schedule %s is not one the trainer runs (gpipe, 1f1b, eager-1f1b, "
                  "interleaved-1f1b, zb-h1, zb-h2, zb-v)",
                  mc_sched_kind_name(o->kind));
    mc_schedule_t *s;
    mc_schedule_info_t info;
    const int micro = o->micro / o->dp; /* per replica */
    if (mc_schedule_create(o->kind, o->stages, micro, NULL, &s))
        die_usage("--schedule %s with --stages %d and %d microbatches per replica: %s",
                  mc_sched_kind_name(o->kind), o->stages, micro, mc_last_error());
    mc_schedule_info(s, &info);
    mc_schedule_destroy(s);
    /* up to 4 reshards per microbatch and chunk (activation and gradient in and out) in
     * flight on a rank; a communicator keeps 255 (the executor checks skip tensors too) */
    if (4 * info.chunks * micro > 255)
        die_usage("--microbatches %d is too many for %s: a rank keeps up to %d reshards per "
                  "microbatch in flight and a communicator at most 255 (use at most %d per "
                  "replica)",
                  o->micro, mc_sched_kind_name(o->kind), 4 * info.chunks, 255 / (4 * info.chunks));
    if (info.nstages > o->cfg.blocks + 2)
        die_usage("--schedule %s on %d ranks has %d stages, more than the model's %d layers "
                  "(--layers + 2)",
                  mc_sched_kind_name(o->kind), o->stages, info.nstages, o->cfg.blocks + 2);
}

/* The simulator's flags need --simulate, and it needs costs; it runs no ranks. */
static void check_simulate(const tr_options *o)
{
    const char *flag = o->sim_costs     ? "--sim-costs"
                       : o->sim_compare ? "--sim-compare"
                       : o->topology    ? "--topology"
                       : o->sim_speed   ? "--sim-speed"
                       : o->sim_sums    ? "--sim-sums"
                                        : NULL;
    if (!o->simulate) {
        if (flag)
            die_usage("%s needs --simulate", flag);
        return;
    }
    if (!o->sim_costs && !o->sim_compare)
        die_usage("--simulate needs --sim-costs FILE or --sim-compare TRACE (the per-op costs)");
    if (o->ckdir || o->resume || strcmp(o->transport, "threads"))
        die_usage("--simulate trains nothing: --checkpoint-dir, --resume and --transport do "
                  "not apply");
}

static tr_options parse(int argc, char **argv)
{
    tr_options o = {.cfg = {TR_ARCH_GPT, 4, 64, 4, 64, 256},
                    .batch = 16,
                    .micro = 1,
                    .steps = 100,
                    .eval = 64,
                    .lr = 1e-3f,
                    .seed = 1,
                    .data = DEFAULT_DATA,
                    .stages = 1,
                    .dp = 1,
                    .dp_buckets = 2,
                    .kind = MC_SCHED_1F1B,
                    .strategy = MC_STRATEGY_MESHCAST,
                    .sender = MC_SENDER_LB_SIZE,
                    .transport = "threads"};
    static const struct option longs[] = {{"model", 1, 0, 'm'},
                                          {"layers", 1, 0, 'L'},
                                          {"dmodel", 1, 0, 'C'},
                                          {"heads", 1, 0, 'H'},
                                          {"seq", 1, 0, 'T'},
                                          {"batch", 1, 0, 'B'},
                                          {"microbatches", 1, 0, 'M'},
                                          {"steps", 1, 0, 'S'},
                                          {"lr", 1, 0, 'r'},
                                          {"seed", 1, 0, 's'},
                                          {"data", 1, 0, 'd'},
                                          {"eval", 1, 0, 'e'},
                                          {"checkpoint-dir", 1, 0, 'c'},
                                          {"resume", 0, 0, 'R'},
                                          {"json", 0, 0, 'j'},
                                          {"stages", 1, 0, 'P'},
                                          {"dp", 1, 0, 'D'},
                                          {"tp", 1, 0, 'p'},
                                          {"schedule", 1, 0, 'k'},
                                          {"strategy", 1, 0, 'g'},
                                          {"transport", 1, 0, 'x'},
                                          {"trace", 1, 0, 't'},
                                          {"help", 0, 0, 'h'},
                                          {"simulate", 0, 0, 'u'},
                                          {"sim-costs", 1, 0, 'U'},
                                          {"sim-speed", 1, 0, 'v'},
                                          {"sim-compare", 1, 0, 'V'},
                                          {"topology", 1, 0, 'o'},
                                          {"sim-sums", 1, 0, 'y'},
                                          {"dp-buckets", 1, 0, 'b'},
                                          {0, 0, 0, 0}};
    opterr = 0;
    int c, ntp = 1;
    o.tp[0] = 1;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (strcmp(optarg, "gpt") == 0)
                o.cfg.arch = TR_ARCH_GPT;
            else if (strcmp(optarg, "utransformer") == 0)
                o.cfg.arch = TR_ARCH_UTRANSFORMER;
            else
                die_usage("--model must be gpt or utransformer, not '%s'", optarg);
            break;
        case 'L':
            o.cfg.blocks = (int)parse_int("--layers", optarg, 1, 256);
            break;
        case 'C':
            o.cfg.dmodel = (int)parse_int("--dmodel", optarg, 1, 8192);
            break;
        case 'H':
            o.cfg.heads = (int)parse_int("--heads", optarg, 1, 8192);
            break;
        case 'T':
            o.cfg.seq = (int)parse_int("--seq", optarg, 1, 8192);
            break;
        case 'B':
            o.batch = (int)parse_int("--batch", optarg, 1, 65536);
            break;
        case 'M':
            o.micro = (int)parse_int("--microbatches", optarg, 1, 65536);
            break;
        case 'S':
            o.steps = (int)parse_int("--steps", optarg, 0, 100000000);
            break;
        case 's':
            o.seed = (uint64_t)parse_int("--seed", optarg, 0, INT64_MAX);
            break;
        case 'e':
            o.eval = (int)parse_int("--eval", optarg, 0, 65536);
            break;
        case 'r': {
            char *end;
            o.lr = strtof(optarg, &end);
            if (end == optarg || *end || !(o.lr > 0.0f && o.lr < 10.0f))
                die_usage("--lr must be a number in (0, 10), not '%s'", optarg);
            break;
        }
        case 'd':
            o.data = optarg;
            break;
        case 'c':
            o.ckdir = optarg;
            break;
        case 'R':
            o.resume = 1;
            break;
        case 'j':
            o.json = 1;
            break;
        case 'P':
            o.stages = (int)parse_int("--stages", optarg, 1, 64);
            break;
        case 'D':
            o.dp = (int)parse_int("--dp", optarg, 1, 64);
            break;
        case 'b':
            o.dp_buckets = (int)parse_int("--dp-buckets", optarg, 1, 64);
            break;
        case 'p':
            ntp = parse_tp(optarg, o.tp);
            break;
        case 'k':
            if (mc_sched_kind_parse(optarg, &o.kind))
                die_usage("--schedule must be gpipe, 1f1b, eager-1f1b, interleaved-1f1b, zb-h1, "
                          "zb-h2 or zb-v, not '%s'",
                          optarg);
            break;
        case 'g':
            if (mc_strategy_parse(optarg, &o.strategy, &o.sender))
                die_usage("--strategy must be send_recv, broadcast or meshcast (or another "
                          "name of meshcast plan --strategy), not '%s'",
                          optarg);
            break;
        case 'x':
            if (strcmp(optarg, "threads") && strcmp(optarg, "ucx"))
                die_usage("--transport must be threads or ucx, not '%s'", optarg);
            o.transport = optarg;
            break;
        case 't':
            o.trace = optarg;
            break;
        case 'u':
            o.simulate = 1;
            break;
        case 'U':
            o.sim_costs = optarg;
            break;
        case 'V':
            o.sim_compare = optarg;
            break;
        case 'o':
            o.topology = optarg;
            break;
        case 'y':
            if (mc_strategy_parse(optarg, &o.sums_strategy, &o.sums_sender))
                die_usage("--sim-sums must be send_recv, broadcast or meshcast (or another "
                          "name of meshcast plan --strategy), not '%s'",
                          optarg);
            o.sim_sums = 1;
            break;
        case 'v': {
            char *end;
            o.sim_speed = strtod(optarg, &end);
            if (end == optarg || *end || !(o.sim_speed > 0.0 && o.sim_speed <= 1e6))
                die_usage("--sim-speed must be a number in (0, 1e6], not '%s'", optarg);
            break;
        }
        case 'h':
            fputs(USAGE, stdout);
            exit(0);
        default:
            if (optopt)
                die_usage("option '%s' needs a value (--help)", argv[optind - 1]);
            die_usage("unknown option '%s' (--help)", argv[optind - 1]);
        }
    }
    if (optind < argc)
        die_usage("unexpected argument '%s' (--help)", argv[optind]);
    const char *bad = tr_config_check(&o.cfg);
    if (bad)
        die_usage("%s", bad);
    if (o.batch % o.micro)
        die_usage("--batch %d is not a multiple of --microbatches %d", o.batch, o.micro);
    if (o.resume && !o.ckdir)
        die_usage("--resume needs --checkpoint-dir");
    check_tp(&o, ntp);
    check_simulate(&o);
    if (o.micro % o.dp)
        die_usage("--microbatches %d does not split over --dp %d replicas (each runs an equal "
                  "share)",
                  o.micro, o.dp);
    if (o.stages > 1 || !strcmp(o.transport, "ucx"))
        check_pipeline(&o);
    else if (o.trace && tr_options_ranks(&o) == 1)
        die_usage("--trace needs a pipeline or more ranks (--stages, --dp or --tp 2 or more)");
    if (o.simulate)
        return o; /* allocates no model: any size can be simulated */
    /* the activations of one microbatch must fit comfortably: refuse before allocating */
    double acts = (double)o.batch / o.micro * o.cfg.seq *
                  ((double)o.cfg.blocks * (20.0 * o.cfg.dmodel + o.cfg.heads * o.cfg.seq) +
                   3.0 * o.cfg.vocab);
    if (acts * 4 > 16e9)
        die_usage("one microbatch needs %.1f GB of activations; lower --batch, --seq or --dmodel",
                  acts * 4 / 1e9);
    return o;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void tr_print_header(const tr_options *o, size_t params, size_t data_bytes, int ranks)
{
    const char *arch = o->cfg.arch == TR_ARCH_GPT ? "gpt" : "utransformer";
    char strategy[32], tp[4 * TR_MAX_STAGES + 1] = "";
    snprintf(strategy, sizeof(strategy), "%s", mc_strategy_name(o->strategy, o->sender));
    for (int r = 0; r < o->stages; r++)
        snprintf(tp + strlen(tp), sizeof(tp) - strlen(tp), "%s%d", r ? "," : "", o->tp[r]);
    if (o->json)
        printf("{\"model\":\"%s\",\"layers\":%d,\"dmodel\":%d,\"heads\":%d,\"seq\":%d,"
               "\"batch\":%d,\"microbatches\":%d,\"lr\":%g,\"seed\":%llu,\"params\":%zu,"
               "\"data_bytes\":%zu,\"stages\":%d,\"dp\":%d,\"tp\":[%s],\"ranks\":%d,"
               "\"schedule\":\"%s\",\"strategy\":\"%s\",\"transport\":\"%s\"}\n",
               arch, o->cfg.blocks, o->cfg.dmodel, o->cfg.heads, o->cfg.seq, o->batch, o->micro,
               o->lr, (unsigned long long)o->seed, params, data_bytes, o->stages, o->dp, tp, ranks,
               o->stages > 1 ? mc_sched_kind_name(o->kind) : "none", ranks > 1 ? strategy : "none",
               ranks > 1 ? o->transport : "none");
    else
        printf("# %s: %d layers, dmodel %d, %d heads, seq %d, batch %d in %d microbatches, "
               "%zu parameters; %s (%zu bytes)\n",
               arch, o->cfg.blocks, o->cfg.dmodel, o->cfg.heads, o->cfg.seq, o->batch, o->micro,
               params, o->data, data_bytes);
    if (!o->json && ranks > 1)
        printf("# ranks: %d (%s): %d pipeline x %d data-parallel x tp %s, schedule %s, "
               "strategy %s\n",
               ranks, o->transport, o->stages, o->dp, tp,
               o->stages > 1 ? mc_sched_kind_name(o->kind) : "none", strategy);
}

void tr_print_step(const tr_options *o, int64_t step, float loss, double seconds,
                   const tr_pipe_stats *st)
{
    const double tps = (double)o->batch * o->cfg.seq / seconds;
    /* no reshard time at all: nothing was exposed, as the schedule simulator counts it */
    const double hidden = !st ? -1.0 : st->reshard_s > 0 ? st->hidden_s / st->reshard_s : 1.0;
    if (o->json && !st)
        printf("{\"step\":%lld,\"loss\":%.6f,\"tokens_per_s\":%.1f,\"ms\":%.3f,"
               "\"comm_hidden\":null}\n",
               (long long)step, loss, tps, seconds * 1e3);
    else if (o->json)
        printf("{\"step\":%lld,\"loss\":%.6f,\"tokens_per_s\":%.1f,\"ms\":%.3f,"
               "\"comm_hidden\":%.4f,\"compute_ms\":%.3f,\"reshard_ms\":%.3f,\"wait_ms\":%.3f,"
               "\"reduce_ms\":%.3f}\n",
               (long long)step, loss, tps, seconds * 1e3, hidden, st->compute_s * 1e3,
               st->reshard_s * 1e3, st->wait_s * 1e3, st->reduce_s * 1e3);
    else if (!st)
        printf("step %lld/%d  loss %.4f  tokens/s %.0f  ms %.1f  comm hidden -\n", (long long)step,
               o->steps, loss, tps, seconds * 1e3);
    else
        printf("step %lld/%d  loss %.4f  tokens/s %.0f  ms %.1f  comm hidden %.0f%%\n",
               (long long)step, o->steps, loss, tps, seconds * 1e3, 100.0 * hidden);
    fflush(stdout);
}

void tr_print_val(const tr_options *o, float val, int sequences)
{
    if (o->json)
        printf("{\"val_loss\":%.6f,\"val_sequences\":%d}\n", val, sequences);
    else
        printf("val loss %.4f over %d held-out sequences\n", val, sequences);
}

int main(int argc, char **argv)
{
    tr_options o = parse(argc, argv);
    if (o.simulate)
        return tr_run_simulation(&o);
    char err[512], path[4096] = "";
    tr_data data;
    if (tr_data_load(&data, o.data, o.cfg.seq, o.seed, err, sizeof(err)))
        die_usage("%s", err);
    if (o.ckdir) {
        snprintf(path, sizeof(path), "%s/checkpoint.bin", o.ckdir);
        struct stat st;
        if (stat(o.ckdir, &st) != 0 || !S_ISDIR(st.st_mode))
            die_usage("--checkpoint-dir %s is not a directory", o.ckdir);
    }
    tr_blas_single_thread();
    const int micro_b = o.batch / o.micro, T = o.cfg.seq;
    tr_model *m = tr_model_create(&o.cfg, o.seed);
    tr_acts *a = m ? tr_acts_create(m, micro_b) : NULL;
    tr_adamw opt;
    int nbuf = o.batch > o.eval ? o.batch : o.eval;
    int *tokens = calloc((size_t)nbuf * T, sizeof(int)),
        *targets = calloc((size_t)nbuf * T, sizeof(int));
    if (!a || tr_adamw_init(&opt, m->params.total, o.lr) || !tokens || !targets) {
        fprintf(stderr, "meshcast-train: out of memory\n");
        return 1;
    }
    tr_progress pr = {0, 0};
    if (o.resume) { /* checked here for the pipeline too: its ranks load it again */
        if (tr_checkpoint_load(path, m, &opt, &pr, err, sizeof(err)))
            die_usage("%s", err);
        data.rng.state = pr.data_rng;
    }
    int rc = 0;
    if (tr_options_ranks(&o) > 1 || !strcmp(o.transport, "ucx")) {
        rc = tr_run_pipeline(&o);
        goto out;
    }
    tr_print_header(&o, m->params.total, data.n, 1);
    for (int64_t step = pr.step + 1; step <= o.steps; step++) {
        double t0 = now();
        float loss = tr_train_step(m, a, &opt, &data, o.batch, tokens, targets);
        tr_print_step(&o, step, loss, now() - t0, NULL);
        pr.step = step;
    }
    if (o.eval >= micro_b)
        tr_print_val(&o, tr_evaluate(m, a, &data, o.eval, tokens, targets),
                     o.eval / micro_b * micro_b);
    if (o.ckdir) {
        pr.data_rng = data.rng.state;
        if (tr_checkpoint_save(path, m, &opt, &pr, err, sizeof(err))) {
            fprintf(stderr, "meshcast-train: %s\n", err);
            rc = 1;
        }
    }
out:
    free(tokens);
    free(targets);
    tr_adamw_free(&opt);
    tr_acts_free(m, a);
    tr_model_free(m);
    tr_data_free(&data);
    return rc;
}
