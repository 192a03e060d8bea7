/* The `meshcast` command: plan, run, bench, schedule, topo, info (DESIGN §6). */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"plan", cmd_plan, "plan a resharding and print its statistics, JSON or DOT"},
    {"run", cmd_run, "execute a plan on real bytes, verify every element, time it"},
    {"bench", cmd_bench, "run a suite of cases with every strategy"},
    {"schedule", cmd_schedule, "generate, validate and simulate a pipeline schedule"},
    {"topo", cmd_topo, "print a topology profile or the local machine (--discover)"},
    {"info", cmd_info, "version, build options and settings"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: meshcast <command> [options]   (meshcast <command> --help)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "meshcast: unknown command '%s' (try meshcast --help)\n", argv[1]);
    return 2;
}
