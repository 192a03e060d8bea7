/* Worker pool: one lock, one queue of jobs; tasks are coarse (megabytes of copying), so the
 * lock is cheap next to the work. */
#include <pthread.h>
#include <stdlib.h>
#include "exec/pool.h"
#include "util/util.h"

struct mc_pool {
    pthread_mutex_t lock;
    pthread_cond_t work, finished;
    mc_pool_job_t *head, *tail; /* jobs with tasks not yet taken */
    int stop;
    int nthreads;
    pthread_t *threads;
};

/* Takes the next task of the first queued job (lock held); NULL when there is none. */
static mc_pool_job_t *take(mc_pool_t *p, mc_pool_job_t *only, int64_t *task)
{
    mc_pool_job_t *job = only ? only : p->head;
    if (!job || job->next >= job->ntasks)
        return NULL;
    *task = job->next++;
    if (job->next == job->ntasks) { /* fully taken: off the queue */
        mc_pool_job_t **link = &p->head, *prev = NULL;
        while (*link && *link != job) {
            prev = *link;
            link = &(*link)->queue_next;
        }
        if (*link) {
            *link = job->queue_next;
            if (p->tail == job)
                p->tail = prev;
        }
    }
    return job;
}

static void run_one(mc_pool_t *p, mc_pool_job_t *job, int64_t task)
{
    pthread_mutex_unlock(&p->lock);
    job->run(job, task);
    pthread_mutex_lock(&p->lock);
    if (++job->done == job->ntasks)
        pthread_cond_broadcast(&p->finished);
}

static void *worker(void *arg)
{
    mc_pool_t *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        int64_t task;
        mc_pool_job_t *job = take(p, NULL, &task);
        if (job) {
            run_one(p, job, task);
            continue;
        }
        if (p->stop)
            break;
        pthread_cond_wait(&p->work, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

mc_status_t mc_pool_create(int threads, mc_pool_t **out)
{
    mc_pool_t *p = mc_calloc(1, sizeof *p);
    if (!p)
        return MC_ERR_NOMEM;
    p->threads = mc_calloc((size_t)threads, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return MC_ERR_NOMEM;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->finished, NULL);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p)) {
            mc_pool_destroy(p);
            return mc_error(MC_ERR_NOMEM, "could not start worker thread %d of %d", i, threads);
        }
        p->nthreads++;
    }
    *out = p;
    return MC_OK;
}

void mc_pool_destroy(mc_pool_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->finished);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p);
}

void mc_pool_submit(mc_pool_t *p, mc_pool_job_t *job)
{
    pthread_mutex_lock(&p->lock);
    job->next = job->done = 0;
    job->queue_next = NULL;
    if (job->ntasks > 0) {
        if (p->tail)
            p->tail->queue_next = job;
        else
            p->head = job;
        p->tail = job;
        pthread_cond_broadcast(&p->work);
    }
    pthread_mutex_unlock(&p->lock);
}

int mc_pool_finished(mc_pool_t *p, mc_pool_job_t *job)
{
    pthread_mutex_lock(&p->lock);
    int done = job->done == job->ntasks;
    pthread_mutex_unlock(&p->lock);
    return done;
}

void mc_pool_wait(mc_pool_t *p, mc_pool_job_t *job)
{
    pthread_mutex_lock(&p->lock);
    int64_t task;
    while (take(p, job, &task))
        run_one(p, job, task);
    while (job->done < job->ntasks)
        pthread_cond_wait(&p->finished, &p->lock);
    pthread_mutex_unlock(&p->lock);
}
