/* Planning one case with one or all strategies, as rows of a table (plan and bench). */
#ifndef MC_TOOL_PLAN_TABLE_H
#define MC_TOOL_PLAN_TABLE_H

#include <stdio.h>
#include "cli.h"

#define MC_PLAN_TABLE_MAX 8

typedef struct {
    const char *strategy;
    mc_plan_t *plan; /* NULL when the strategy refused the case (with "all") */
    mc_plan_stats_t stats;
    double cpu_ms;     /* process CPU time of mc_plan_create (planning and validation) */
    char refused[256]; /* why, when plan is NULL */
} plan_row_t;

/* Plans case c (built as b) with c->strategy (default meshcast; "all" = every strategy,
 * meshcast last; a strategy that cannot plan the case (MC_ERR_UNSUPPORTED) is a refused
 * row, not a failure). Returns an exit status (prints one line on failure). */
int plan_table_run(const cli_case_t *c, const cli_built_t *b, plan_row_t *rows, int *nrows);
/* "# topology NAME: H host(s) x K devices; src devices 0-7, dst devices 8-15": what the
 * plan assumed. */
void plan_case_header(const cli_built_t *b, FILE *out);
void plan_table_print(const plan_row_t *rows, int nrows, FILE *out);
/* {"plans": [...]} per the JSON contract (docs/architecture.md). */
void plan_table_json(const plan_row_t *rows, int nrows, int flows, FILE *out);
/* One plan's contract keys, as a JSON object body without braces. */
void plan_row_json_fields(const plan_row_t *row, FILE *out);
void plan_table_free(plan_row_t *rows, int nrows);

#endif
