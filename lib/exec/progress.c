/* The progress thread (MESHCAST_PROGRESS=thread): while a request of the communicator is in
 * flight, it drives the transport and the requests, so they advance while the caller's
 * thread computes. One lock per communicator serializes it with the public calls; it holds
 * the lock for one short transport wait at a time (PROGRESS_WAIT_S), so a public call waits
 * at most about that long for it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "exec/exec_internal.h"
#include "util/util.h"

#define PROGRESS_WAIT_S 0.001

struct mc_progress {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t work;    /* a request was started, or stop was set */
    pthread_cond_t changed; /* after every round of progress */
    atomic_int want;        /* public calls waiting for the lock */
    int stop;
};

static void *run(void *arg)
{
    mc_comm_t *c = arg;
    mc_progress_t *g = c->progress;
    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        if (!c->inflight) {
            pthread_cond_wait(&g->work, &g->lock);
            continue;
        }
        mc_comm_progress(c, PROGRESS_WAIT_S);
        pthread_cond_broadcast(&g->changed);
        if (atomic_load(&g->want) > 0) { /* let a caller in before the next round */
            pthread_mutex_unlock(&g->lock);
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&g->lock);
        }
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

mc_status_t mc_progress_start(mc_comm_t *c)
{
    mc_progress_t *g = mc_calloc(1, sizeof *g);
    if (!g)
        return MC_ERR_NOMEM;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->work, NULL);
    pthread_cond_init(&g->changed, NULL);
    atomic_init(&g->want, 0);
    c->progress = g;
    if (pthread_create(&g->thread, NULL, run, c)) {
        c->progress = NULL;
        pthread_cond_destroy(&g->changed);
        pthread_cond_destroy(&g->work);
        pthread_mutex_destroy(&g->lock);
        free(g);
        return mc_error(MC_ERR_NOMEM, "comm: cannot start the progress thread");
    }
    return MC_OK;
}

void mc_progress_stop(mc_comm_t *c)
{
    mc_progress_t *g = c->progress;
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stop = 1;
    pthread_cond_signal(&g->work);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->thread, NULL);
    pthread_cond_destroy(&g->changed);
    pthread_cond_destroy(&g->work);
    pthread_mutex_destroy(&g->lock);
    free(g);
    c->progress = NULL;
}

void mc_comm_lock(mc_comm_t *c)
{
    mc_progress_t *g = c->progress;
    if (!g)
        return;
    atomic_fetch_add(&g->want, 1);
    pthread_mutex_lock(&g->lock);
    atomic_fetch_sub(&g->want, 1);
}

void mc_comm_unlock(mc_comm_t *c)
{
    if (c->progress)
        pthread_mutex_unlock(&c->progress->lock);
}

void mc_progress_kick(mc_comm_t *c)
{
    if (c->progress)
        pthread_cond_signal(&c->progress->work);
}

void mc_progress_wait(mc_comm_t *c)
{
    /* Counted as wanting the lock, so that the thread lets this caller back in after its
     * round even while other requests stay in flight (it keeps the lock otherwise). */
    atomic_fetch_add(&c->progress->want, 1);
    pthread_cond_wait(&c->progress->changed, &c->progress->lock);
    atomic_fetch_sub(&c->progress->want, 1);
}
