/* Pipeline schedules through the public API: create, validate, simulate, print.
 * Compares 1F1B with eager-1F1B when each stage boundary costs half a forward, and checks
 * the known 1F1B bubble (p-1)/(m+p-1) without communication. Exit 0 = all checks hold. */
#include <math.h>
#include <stdio.h>
#include "meshcast/meshcast.h"

static int run(mc_sched_kind_t kind, int p, int m, double comm, mc_timeline_stats_t *stats)
{
    mc_schedule_t *sched = NULL;
    mc_timeline_t *tl = NULL;
    int rc = 1;
    if (mc_schedule_create(kind, p, m, NULL, &sched) || mc_schedule_validate(sched))
        goto out;
    mc_sim_params_t sim = {.field_mask = MC_SIM_PARAM_COSTS | MC_SIM_PARAM_COMM,
                           .f = 1, /* forward */
                           .b = 2, /* full backward */
                           .w = 1, /* its weight-gradient part */
                           .comm = comm};
    if (mc_schedule_simulate(sched, &sim, &tl) || mc_timeline_query(tl, stats))
        goto out;
    printf("%-11s p=%d m=%d comm=%.2f  makespan %5.1f  bubble %5.1f%%  peak %d  hidden %5.1f%%\n",
           mc_sched_kind_name(kind), p, m, comm, stats->makespan, 100 * stats->bubble_fraction,
           stats->peak_inflight, 100 * stats->comm_hidden_fraction);
    /* rank 0's first actions, PyTorch pipelining style */
    const mc_sched_action_t *actions;
    size_t n;
    if (mc_schedule_actions(sched, 0, &actions, &n))
        goto out;
    printf("  rank 0:");
    for (size_t i = 0; i < n && i < 10; i++) {
        char text[32];
        mc_sched_action_format(&actions[i], text, sizeof text);
        printf(" %s", text);
    }
    printf(" ...\n");
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "schedule_basic: %s\n", mc_last_error());
    mc_timeline_destroy(tl);
    mc_schedule_destroy(sched);
    return rc;
}

int main(void)
{
    const int p = 4, m = 8;
    mc_timeline_stats_t plain, one, eager;
    if (run(MC_SCHED_1F1B, p, m, 0, &plain) || run(MC_SCHED_1F1B, p, m, 0.5, &one) ||
        run(MC_SCHED_EAGER_1F1B, p, m, 0.5, &eager))
        return 1;
    double want = (double)(p - 1) / (m + p - 1);
    if (fabs(plain.bubble_fraction - want) > 1e-9) {
        fprintf(stderr, "1F1B bubble %g, expected %g\n", plain.bubble_fraction, want);
        return 1;
    }
    if (!(eager.makespan < one.makespan && eager.comm_hidden_fraction > one.comm_hidden_fraction)) {
        fprintf(stderr, "eager-1F1B should hide more communication than 1F1B\n");
        return 1;
    }
    printf("ok: 1F1B bubble = (p-1)/(m+p-1); eager-1F1B hides more and finishes sooner\n");
    return 0;
}
