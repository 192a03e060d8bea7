/* The one-rank bootstrap: an allgather over one rank is a copy. */
#include <stdlib.h>
#include <string.h>
#include "bootstrap/bootstrap.h"
#include "util/util.h"

static mc_status_t single_allgather(mc_bootstrap_t *b, const void *send, void *recv, size_t size,
                                    double timeout_s)
{
    (void)b;
    (void)timeout_s;
    if (size)
        memmove(recv, send, size); /* send may alias recv (in-place use) */
    return MC_OK;
}

static void single_destroy(mc_bootstrap_t *b)
{
    free(b);
}

mc_status_t mc_bootstrap_single(mc_bootstrap_t **out)
{
    mc_bootstrap_t *b = mc_calloc(1, sizeof *b);
    if (!b)
        return MC_ERR_NOMEM;
    b->rank = 0;
    b->nranks = 1;
    b->name = "single";
    b->allgather = single_allgather;
    b->destroy = single_destroy;
    *out = b;
    return MC_OK;
}
