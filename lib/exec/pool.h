/* A small worker pool for in-process copies: jobs are arrays of independent tasks; workers
 * and waiting callers take tasks one at a time. */
#ifndef MC_POOL_H
#define MC_POOL_H

#include <stdint.h>
#include "meshcast/status.h"

typedef struct mc_pool_job mc_pool_job_t;
struct mc_pool_job {
    void (*run)(mc_pool_job_t *job, int64_t task);
    int64_t ntasks;
    /* the pool's */
    int64_t next, done;
    mc_pool_job_t *queue_next;
};

typedef struct mc_pool mc_pool_t;

mc_status_t mc_pool_create(int threads, mc_pool_t **out);
/* Waits for every submitted job, then stops the workers. */
void mc_pool_destroy(mc_pool_t *pool);
void mc_pool_submit(mc_pool_t *pool, mc_pool_job_t *job);
int mc_pool_finished(mc_pool_t *pool, mc_pool_job_t *job);
/* Runs the job's remaining tasks on the calling thread too, then waits for the rest. */
void mc_pool_wait(mc_pool_t *pool, mc_pool_job_t *job);

#endif
