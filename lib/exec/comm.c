/* Communicators: bootstrap, transport, worker pool, progress and failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exec/exec_internal.h"
#include "meshcast/config.h"
#include "util/util.h"

static mc_status_t pick_bootstrap(const mc_comm_params_t *p, double timeout_s, mc_bootstrap_t **out)
{
    mc_bootstrap_kind_t kind = p->bootstrap;
    if (kind == MC_BOOTSTRAP_AUTO) {
        if (p->field_mask & MC_COMM_PARAM_OOB)
            kind = MC_BOOTSTRAP_OOB;
        else if (p->field_mask & MC_COMM_PARAM_WORLD)
            kind = MC_BOOTSTRAP_THREADS;
        else if (getenv("MESHCAST_RANK") && *getenv("MESHCAST_RANK"))
            kind = MC_BOOTSTRAP_ENV;
        else if (mc_bootstrap_under_mpirun())
            kind = MC_BOOTSTRAP_MPI;
        else
            kind = MC_BOOTSTRAP_SINGLE;
    }
    switch (kind) {
    case MC_BOOTSTRAP_SINGLE:
        return mc_bootstrap_single(out);
    case MC_BOOTSTRAP_THREADS:
        if (!(p->field_mask & MC_COMM_PARAM_WORLD))
            return mc_error(MC_ERR_INVALID, "bootstrap 'threads' needs params.world "
                                            "(MC_COMM_PARAM_WORLD)");
        return mc_bootstrap_threads(p->world, p->world_rank, out);
    case MC_BOOTSTRAP_MPI:
        return mc_bootstrap_mpi(out);
    case MC_BOOTSTRAP_ENV:
        return mc_bootstrap_env(timeout_s, out);
    case MC_BOOTSTRAP_OOB:
        if (!(p->field_mask & MC_COMM_PARAM_OOB))
            return mc_error(MC_ERR_INVALID, "bootstrap 'oob' needs params.oob "
                                            "(MC_COMM_PARAM_OOB)");
        return mc_bootstrap_oob(&p->oob, out);
    default:
        return mc_error(MC_ERR_INVALID, "unknown bootstrap kind %d", (int)kind);
    }
}

/* MESHCAST_THREADS, its 0 meaning one per CPU, at most 8. */
static mc_status_t default_threads(int *out)
{
    double v = 0;
    mc_status_t s = mc_setting_number("THREADS", &v);
    if (s)
        return s;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *out = v >= 1 ? (int)v : n < 1 ? 1 : n > 8 ? 8 : (int)n;
    return MC_OK;
}

/* MESHCAST_PROGRESS: "caller" or "thread". */
static mc_status_t default_progress(mc_progress_mode_t *out)
{
    const char *v = mc_setting_text("PROGRESS");
    if (!strcmp(v, "caller") || !strcmp(v, "thread")) {
        *out = !strcmp(v, "thread") ? MC_PROGRESS_THREAD : MC_PROGRESS_CALLER;
        return MC_OK;
    }
    return mc_error(MC_ERR_INVALID, "MESHCAST_PROGRESS='%s' is not 'caller' or 'thread'", v);
}

mc_status_t mc_comm_create(const mc_comm_params_t *params, mc_comm_t **out)
{
    if (!out)
        return mc_error(MC_ERR_INVALID, "comm: out must not be NULL");
    mc_comm_params_t p = {0};
    if (params)
        p = *params;
    if (!(p.field_mask & MC_COMM_PARAM_TRANSPORT))
        p.transport = MC_TRANSPORT_LOCAL;
    if (!(p.field_mask & MC_COMM_PARAM_BOOTSTRAP))
        p.bootstrap = MC_BOOTSTRAP_AUTO;
    if (!(p.field_mask & MC_COMM_PARAM_TIMEOUT)) {
        mc_status_t s = mc_setting_number("TIMEOUT", &p.timeout_s);
        if (s)
            return s;
    }
    if (!(p.timeout_s > 0))
        return mc_error(MC_ERR_INVALID, "comm: timeout %g s must be positive", p.timeout_s);
    if (!(p.field_mask & MC_COMM_PARAM_THREADS)) {
        mc_status_t s = default_threads(&p.threads);
        if (s)
            return s;
    }
    if (!(p.field_mask & MC_COMM_PARAM_PROGRESS)) {
        mc_status_t s = default_progress(&p.progress);
        if (s)
            return s;
    }
    if (p.progress != MC_PROGRESS_CALLER && p.progress != MC_PROGRESS_THREAD)
        return mc_error(MC_ERR_INVALID, "comm: unknown progress mode %d", (int)p.progress);
    if (p.threads < 1 || p.threads > 256)
        return mc_error(MC_ERR_INVALID, "comm: threads %d is not in [1, 256]", p.threads);
    if (p.transport != MC_TRANSPORT_LOCAL && p.transport != MC_TRANSPORT_UCX)
        return mc_error(MC_ERR_INVALID, "comm: unknown transport %d", (int)p.transport);

    mc_comm_t *c = mc_calloc(1, sizeof *c);
    if (!c)
        return MC_ERR_NOMEM;
    c->kind = p.transport;
    c->timeout_s = p.timeout_s;
    mc_status_t s = pick_bootstrap(&p, p.timeout_s, &c->boot);
    if (s)
        goto err;
    c->rank = c->boot->rank;
    c->nranks = c->boot->nranks;
    if (!(c->pair_seq = mc_calloc((size_t)c->nranks, 1))) {
        s = MC_ERR_NOMEM;
        goto err;
    }
    if (c->kind == MC_TRANSPORT_UCX) {
        s = mc_transport_ucx_create(c->boot, p.timeout_s, &c->tp);
    } else if (c->nranks > 1) {
        if (strcmp(c->boot->name, "threads") != 0) {
            s = mc_error(MC_ERR_INVALID,
                         "transport 'local' runs ranks as threads of one "
                         "process (bootstrap 'threads'); %d ranks from bootstrap '%s' need "
                         "transport 'ucx'",
                         c->nranks, c->boot->name);
            goto err;
        }
        s = mc_transport_threads_create(p.world, p.world_rank, &c->tp);
    } else {
        s = mc_pool_create(p.threads, &c->pool);
    }
    if (s)
        goto err;
    if (c->tp && c->nranks > 1 && (s = mc_ctrl_create(c)))
        goto err;
    /* one rank copies on its worker pool, which needs no caller already */
    if (c->tp && p.progress == MC_PROGRESS_THREAD && (s = mc_progress_start(c)))
        goto err;
    *out = c;
    return MC_OK;
err:
    mc_comm_destroy(c);
    return s;
}

void mc_comm_destroy(mc_comm_t *c)
{
    if (!c)
        return;
    mc_progress_stop(c); /* the caller's thread is the only one left */
    if (c->inflight && c->tp)
        mc_comm_fail(c, MC_ERR_INVALID,
                     "the communicator was destroyed while the request was "
                     "in flight",
                     -1, 0);
    while (c->inflight) /* single rank: the copies finish (a request unlinks when done) */
        mc_request_wait(c->inflight);
    mc_request_detach_all(c); /* each is over now: freeing one later frees only itself */
    if (c->tp)
        c->tp->ops->destroy(c->tp);
    mc_ctrl_destroy(c); /* after the transport: its receives were posted there */
    mc_pool_destroy(c->pool);
    if (c->boot)
        c->boot->destroy(c->boot);
    mc_program_cache_clear(&c->programs);
    free(c->pair_seq);
    free(c);
}

int mc_comm_rank(const mc_comm_t *c)
{
    return c ? c->rank : -1;
}

int mc_comm_nranks(const mc_comm_t *c)
{
    return c ? c->nranks : 0;
}

int64_t mc_comm_programs_compiled(const mc_comm_t *c)
{
    return c ? (int64_t)atomic_load(&((mc_comm_t *)c)->programs_compiled) : 0;
}

const char *mc_comm_transport_name(const mc_comm_t *c)
{
    if (!c)
        return NULL;
    return c->kind == MC_TRANSPORT_UCX ? "ucx" : "local";
}

void mc_comm_fail(mc_comm_t *c, mc_status_t status, const char *message, int blame, int why)
{
    if (!c->failed) {
        c->failed = status;
        snprintf(c->failure, sizeof c->failure, "%s", message);
        if (c->ctrl && blame >= 0)
            mc_ctrl_leave(c, blame, why); /* before the abort, which delivers them first */
        if (c->tp)
            c->tp->ops->abort(c->tp);
        if (c->nranks > 1 && !strcmp(c->boot->name, "mpi"))
            mc_bootstrap_mpi_abandon(); /* MPI_Finalize at exit would wait for the failed */
    }
    while (c->inflight)
        mc_request_fail(c->inflight, status, message); /* unlinks it */
}

mc_status_t mc_comm_progress(mc_comm_t *c, double wait_s)
{
    if (c->failed)
        return mc_error(c->failed, "%s", c->failure);
    if (!c->tp)
        return MC_OK;
    mc_status_t s = c->tp->ops->progress(c->tp, wait_s);
    if (s) {
        char msg[MC_ERROR_LEN];
        snprintf(msg, sizeof msg, "%s", mc_last_error());
        mc_comm_fail(c, s, msg, -1, 0);
        return s;
    }
    if (c->failed)
        return mc_error(c->failed, "%s", c->failure);
    double now = mc_now();
    char msg[MC_ERROR_LEN] = "";
    for (mc_request_t *r = c->inflight; r; r = mc_request_next(r)) {
        if (now - mc_request_last_activity(r) <= c->timeout_s)
            continue;
        char what[MC_ERROR_LEN - 64];
        mc_request_describe_wait(r, what, sizeof what);
        snprintf(msg, sizeof msg, "rank %d timed out after %g s %s", c->rank, c->timeout_s, what);
        break;
    }
    if (c->ctrl)
        mc_ctrl_check(c, msg[0] ? msg : NULL); /* a timeout first asks who is alive */
    else if (msg[0])
        mc_comm_fail(c, MC_ERR_TIMEOUT, msg, -1, 0);
    if (c->failed)
        return mc_error(c->failed, "%s", c->failure);
    return MC_OK;
}

mc_status_t mc_comm_allgather(mc_comm_t *c, const void *send, void *recv, size_t size)
{
    if (!c || (size && (!send || !recv)))
        return mc_error(MC_ERR_INVALID, "comm allgather: comm, send and recv must not be NULL");
    if (c->nranks > 1 && c->tp) { /* the engine's failure handling applies */
        mc_comm_lock(c);
        mc_status_t s = mc_comm_gather(c, send, recv, size);
        mc_comm_unlock(c);
        return s;
    }
    if (size)
        return c->boot->allgather(c->boot, send, recv, size, c->timeout_s);
    if (c->nranks == 1)
        return MC_OK;
    char one = 0, *all = mc_calloc((size_t)c->nranks, 1); /* a barrier: a byte each */
    if (!all)
        return MC_ERR_NOMEM;
    mc_status_t s = c->boot->allgather(c->boot, &one, all, 1, c->timeout_s);
    free(all);
    return s;
}
