/* Bootstrap over the user's non-blocking out-of-band allgather (mc_oob_t, UCC's
 * ucc_oob_coll_t contract), polled with short sleeps until it completes or times out. */
#include <stdlib.h>
#include "bootstrap/bootstrap.h"
#include "util/util.h"

typedef struct {
    mc_bootstrap_t base;
    mc_oob_t oob; /* a copy: the caller's struct need not outlive the bootstrap */
} oob_bootstrap_t;

/* Polls the request until it completes, fails or the deadline passes. */
static mc_status_t oob_wait(oob_bootstrap_t *b, void *req, double timeout_s)
{
    double deadline = mc_now() + timeout_s;
    long pause_ns = 1000; /* 1 us, doubling up to 1 ms */
    for (;;) {
        mc_status_t st = b->oob.req_test(req);
        if (st == MC_OK)
            return MC_OK;
        if (st != MC_INPROGRESS)
            return mc_error(st < 0 ? st : MC_ERR_INTERNAL,
                            "rank %d: oob allgather failed: req_test returned %d (%s)",
                            b->base.rank, (int)st, mc_status_string(st));
        if (mc_now() >= deadline)
            return mc_error(MC_ERR_TIMEOUT,
                            "rank %d timed out after %g s waiting for the oob allgather over %d "
                            "ranks (a rank did not call it?)",
                            b->base.rank, timeout_s, b->base.nranks);
        mc_bootstrap_backoff(&pause_ns, 1000000, deadline);
    }
}

/* On failure or timeout the request is still freed (req_free must accept an unfinished
 * request, as UCC's contract allows cancelling); otherwise every timeout would leak it. */
static mc_status_t oob_allgather(mc_bootstrap_t *base, const void *send, void *recv, size_t size,
                                 double timeout_s)
{
    oob_bootstrap_t *b = (oob_bootstrap_t *)base;
    mc_status_t st = mc_bootstrap_check_timeout(timeout_s, "oob allgather");
    if (st)
        return st;
    void *req = NULL;
    st = b->oob.allgather(send, recv, size, b->oob.coll_info, &req);
    if (st < 0)
        return mc_error(st, "rank %d: oob allgather of %zu bytes failed to start (status %d: %s)",
                        base->rank, size, (int)st, mc_status_string(st));
    if (!req)
        return MC_OK; /* completed at once: nothing to test or free */
    st = oob_wait(b, req, timeout_s);
    mc_status_t fst = b->oob.req_free(req);
    if (st == MC_OK && fst < 0)
        st = mc_error(fst, "rank %d: oob req_free failed (status %d: %s)", base->rank, (int)fst,
                      mc_status_string(fst));
    return st;
}

static void oob_destroy(mc_bootstrap_t *b)
{
    free(b);
}

mc_status_t mc_bootstrap_oob(const mc_oob_t *oob, mc_bootstrap_t **out)
{
    if (!oob)
        return mc_error(MC_ERR_INVALID, "oob bootstrap: the mc_oob_t is NULL");
    if (!oob->allgather || !oob->req_test || !oob->req_free)
        return mc_error(MC_ERR_INVALID, "oob bootstrap: mc_oob_t.%s is NULL",
                        !oob->allgather  ? "allgather"
                        : !oob->req_test ? "req_test"
                                         : "req_free");
    if (oob->nranks < 1)
        return mc_error(MC_ERR_INVALID, "oob bootstrap: mc_oob_t.nranks = %d is not positive",
                        oob->nranks);
    if (oob->rank < 0 || oob->rank >= oob->nranks)
        return mc_error(MC_ERR_INVALID, "oob bootstrap: mc_oob_t.rank = %d is not in [0, %d)",
                        oob->rank, oob->nranks);
    oob_bootstrap_t *b = mc_calloc(1, sizeof *b);
    if (!b)
        return MC_ERR_NOMEM;
    b->oob = *oob;
    b->base.rank = oob->rank;
    b->base.nranks = oob->nranks;
    b->base.name = "oob";
    b->base.allgather = oob_allgather;
    b->base.destroy = oob_destroy;
    *out = &b->base;
    return MC_OK;
}
