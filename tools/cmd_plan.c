/* `meshcast plan`: plan one resharding with one strategy or all, print a table, JSON or DOT. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "plan_table.h"

static void usage(FILE *f)
{
    fputs(
        "usage: meshcast plan --shape 1024,1024,512 [--dtype f32] --src-mesh 2x4 --src-spec S0RR\n"
        "                     --dst-mesh 2x4 --dst-spec RS0R [--src-devices 0-7] [--dst-devices "
        "8-15]\n"
        "                     [--topology p3.8xlarge|FILE] [--hosts N] [--strategy NAME|all]\n"
        "                     [--chunk BYTES] [--max-bytes B] [--json] [--dot FILE|-] [--flows]\n"
        "The table starts with a '# topology ...' line: the topology, hosts and devices assumed\n"
        "(default p3.8xlarge with as many hosts as the meshes need). FILE '-' is stdout.\n"
        "--flows: every flow after the table (reductions: their combine trees), or with --json\n"
        "each plan in full under \"plan\" (pieces, flows, \"combiners\").\n"
        "strategies: send_recv local_allgather broadcast (= broadcast_lb_size) broadcast_first\n"
        "            broadcast_lb_size broadcast_lb_order meshcast all\n"
        "limits: 65536 devices per mesh, 2^20 deliveries per plan, 2^15 chunks per plan\n"
        "        (smaller chunks grow); docs/planning.md#limits\n",
        f);
}

int cmd_plan(int argc, char **argv)
{
    cli_case_t c = {0};
    const char *dot = NULL;
    int json = 0, flows = 0, rc;
    for (int i = 1; i < argc; i++) {
        int r = cli_case_option(&c, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r)
            continue;
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--flows")) {
            flows = 1;
        } else if (!strcmp(argv[i], "--dot")) {
            if (i + 1 >= argc)
                return cli_usage_error("--dot needs a value");
            dot = argv[++i];
        } else if (cli_is_help(argv[i])) {
            usage(stdout);
            return 0;
        } else {
            return cli_usage_error("plan: unknown option '%s' (see meshcast plan --help)", argv[i]);
        }
    }
    cli_built_t b;
    if ((rc = cli_case_build(&c, &b)))
        return rc;
    plan_row_t rows[MC_PLAN_TABLE_MAX];
    int nrows = 0;
    FILE *f = NULL;
    rc = plan_table_run(&c, &b, rows, &nrows);
    if (rc || (dot && (rc = cli_open_output(dot, "--dot", &f))))
        goto out;
    if (json) {
        plan_table_json(rows, nrows, flows, stdout);
    } else {
        plan_case_header(&b, stdout);
        plan_table_print(rows, nrows, stdout);
        for (int i = 0; flows && i < nrows; i++)
            if (rows[i].plan)
                mc_plan_write(rows[i].plan, MC_FORMAT_TEXT, stdout);
    }
    /* with --strategy all the picture is of meshcast's plan (the last row) */
    if (f && mc_plan_write(rows[nrows - 1].plan, MC_FORMAT_DOT, f))
        rc = cli_fail(MC_ERR_IO, "writing --dot");
out:
    if (cli_close_output(f, dot) && !rc)
        rc = 1;
    plan_table_free(rows, nrows);
    cli_built_free(&b);
    return rc;
}
