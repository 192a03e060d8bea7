/* What `meshcast bench` prints after a simulated run: the distribution of est/bound and
 * plan time per topology and strategy, and how often meshcast is beaten. */
#ifndef MC_TOOL_BENCH_SUMMARY_H
#define MC_TOOL_BENCH_SUMMARY_H

#include <stdio.h>
#include "plan_table.h"

typedef struct {
    const char *topology; /* owned copies */
    const char *strategy;
    const char *name;
    double ratio, plan_ms;
} bench_sample_t;

typedef struct {
    bench_sample_t *samples;
    int64_t n, cap;
    int64_t cases, beaten; /* cases where another strategy's estimate is > 0.1% below meshcast's */
    double worst_beat;     /* largest meshcast / best-other estimate ratio seen */
    char worst_beat_case[64];
} bench_summary_t;

/* Adds one case's rows; returns MC_ERR_NOMEM on allocation failure. */
mc_status_t bench_summary_add(bench_summary_t *s, const char *topology, const char *name,
                              const plan_row_t *rows, int nrows);
void bench_summary_print(const bench_summary_t *s, FILE *out);
void bench_summary_free(bench_summary_t *s);

#endif
