/* meshcast-train as a pipeline: every rank (a thread of this process on a threads world, or
 * this process as one UCX rank) builds the same model, samples the same batches and runs its
 * part of the schedule (pipeline.c); rank 0 prints. At the end the ranks gather the model,
 * so rank 0 evaluates and saves the checkpoint as the single-process run does. */
#include "checkpoint.h"
#include "data.h"
#include "kernels.h"
#include "options.h"
#include "train.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const tr_options *o;
    mc_world_t *world; /* NULL: UCX */
    int rank;
    int rc;
} rank_arg;

static int fail(int rank, const char *what, const char *why)
{
    fprintf(stderr, "meshcast-train: rank %d: %s: %s\n", rank, what, why);
    return 1;
}

static int train(const tr_options *o, mc_comm_t *comm)
{
    const int rank = mc_comm_rank(comm), T = o->cfg.seq, micro_b = o->batch / o->micro;
    char err[512], path[4096] = "";
    tr_pipe_config pc = {.kind = o->kind,
                         .ranks = o->stages,
                         .dp = o->dp,
                         .tp = o->tp,
                         .microbatches = o->micro,
                         .micro_batch = micro_b,
                         .strategy = o->strategy,
                         .sender = o->sender,
                         .trace = o->trace != NULL,
                         .dp_buckets = o->dp_buckets};
    tr_data data;
    if (tr_data_load(&data, o->data, T, o->seed, err, sizeof(err)))
        return fail(rank, "data", err);
    tr_model *m = tr_model_create(&o->cfg, o->seed);
    tr_adamw opt = {0};
    tr_pipe *p = NULL;
    tr_acts *a = NULL;
    tr_progress pr = {0, 0};
    int nbuf = o->batch > o->eval ? o->batch : o->eval, rc = 1;
    int *tokens = calloc((size_t)nbuf * T, sizeof(int)),
        *targets = calloc((size_t)nbuf * T, sizeof(int));
    if (o->ckdir)
        snprintf(path, sizeof(path), "%s/checkpoint.bin", o->ckdir);
    if (!m || !tokens || !targets || tr_adamw_init(&opt, m->params.total, o->lr)) {
        fail(rank, "setup", "out of memory");
        goto out;
    }
    if (o->resume) {
        if (tr_checkpoint_load(path, m, &opt, &pr, err, sizeof(err))) {
            fail(rank, "resume", err);
            goto out;
        }
        data.rng.state = pr.data_rng;
    }
    if (tr_pipe_create(m, &opt, comm, &pc, &p, err, sizeof(err))) {
        fail(rank, "pipeline", err);
        goto out;
    }
    if (rank == 0)
        tr_print_header(o, m->params.total, data.n, mc_comm_nranks(comm));
    for (int64_t step = pr.step + 1; step <= o->steps; step++) {
        tr_pipe_stats st;
        tr_data_train_batch(&data, o->batch, T, tokens, targets);
        if (tr_pipe_step(p, tokens, targets, &st, err, sizeof(err))) {
            fail(rank, "step", err);
            goto out;
        }
        if (rank == 0)
            tr_print_step(o, step, st.loss, st.seconds, &st);
        pr.step = step;
    }
    if ((o->eval >= micro_b || o->ckdir) && tr_pipe_gather(p, m, &opt, err, sizeof(err))) {
        fail(rank, "gather", err);
        goto out;
    }
    rc = 0;
    if (rank == 0 && o->eval >= micro_b) {
        if (!(a = tr_acts_create(m, micro_b))) {
            rc = fail(rank, "evaluation", "out of memory");
            goto out;
        }
        tr_print_val(o, tr_evaluate(m, a, &data, o->eval, tokens, targets),
                     o->eval / micro_b * micro_b);
    }
    if (rank == 0 && o->ckdir) {
        pr.data_rng = data.rng.state;
        if (tr_checkpoint_save(path, m, &opt, &pr, err, sizeof(err)))
            rc = fail(rank, "checkpoint", err);
    }
    if (o->trace) {
        FILE *f = rank == 0 ? fopen(o->trace, "w") : NULL;
        if (rank == 0 && !f)
            rc = fail(rank, "--trace", "cannot open the file for writing");
        if (tr_pipe_write_trace(p, f, err, sizeof(err)))
            rc = fail(rank, "--trace", err);
        if (f && fclose(f))
            rc = fail(rank, "--trace", "write failed");
    }
out:
    tr_acts_free(m, a);
    tr_pipe_free(p);
    tr_adamw_free(&opt);
    tr_model_free(m);
    tr_data_free(&data);
    free(tokens);
    free(targets);
    return rc;
}

static void *rank_main(void *arg)
{
    rank_arg *r = arg;
    mc_comm_params_t cp = {.field_mask = MC_COMM_PARAM_PROGRESS, .progress = MC_PROGRESS_THREAD};
    if (r->world) {
        cp.field_mask |= MC_COMM_PARAM_WORLD;
        cp.world = r->world;
        cp.world_rank = r->rank;
    } else {
        cp.field_mask |= MC_COMM_PARAM_TRANSPORT;
        cp.transport = MC_TRANSPORT_UCX;
    }
    mc_comm_t *comm;
    if (mc_comm_create(&cp, &comm)) {
        r->rc = fail(r->rank, "communicator", mc_last_error());
        return NULL;
    }
    if (mc_comm_nranks(comm) != tr_options_ranks(r->o)) {
        char why[160];
        snprintf(why, sizeof(why),
                 "--stages %d, --dp %d and --tp need %d ranks (replicas x tp per stage) but %d "
                 "were started",
                 r->o->stages, r->o->dp, tr_options_ranks(r->o), mc_comm_nranks(comm));
        fail(mc_comm_rank(comm), "communicator", why);
        r->rc = 2; /* bad input, found once the ranks met */
    } else {
        r->rc = train(r->o, comm);
    }
    mc_comm_destroy(comm);
    return NULL;
}

int tr_run_pipeline(const tr_options *o)
{
    if (!strcmp(o->transport, "ucx")) {
        rank_arg r = {.o = o};
        rank_main(&r);
        return r.rc;
    }
    const int n = tr_options_ranks(o);
    rank_arg *r = calloc((size_t)n, sizeof(*r));
    pthread_t *th = calloc((size_t)n, sizeof(*th));
    mc_world_t *world = NULL;
    int rc = 0, started = 0;
    if (!r || !th || mc_world_create(n, &world)) {
        fprintf(stderr, "meshcast-train: out of memory\n");
        rc = 1;
    }
    for (; !rc && started < n; started++) {
        r[started] = (rank_arg){.o = o, .world = world, .rank = started};
        if (pthread_create(&th[started], NULL, rank_main, &r[started])) {
            fprintf(stderr, "meshcast-train: cannot start rank %d's thread\n", started);
            rc = 1; /* the started ranks fail after their timeout */
            break;
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        rc |= r[i].rc;
    }
    mc_world_destroy(world);
    free(r);
    free(th);
    return rc;
}
