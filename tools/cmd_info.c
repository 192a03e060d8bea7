/* `meshcast info`: version, build options and every setting with its help. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

int cmd_info(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h"))
        return cli_usage_error("info takes no options (got '%s')", argv[1]);
    printf("meshcast %s\n\n", MESHCAST_VERSION_STRING);
    printf("topologies (built-in):");
    for (const char *const *n = mc_topology_builtin_names(); *n; n++)
        printf(" %s", *n);
    printf("\nstrategies: send_recv local_allgather broadcast_first broadcast_lb_size "
           "broadcast_lb_order meshcast\n\nsettings (environment MESHCAST_<NAME>):\n");
    for (size_t i = 0; i < mc_setting_count(); i++) {
        const mc_setting_t *s = mc_setting_at(i);
        printf("  %-14s = %-8s (default %s)  %s\n", s->name, mc_setting_text(s->name),
               *s->default_text ? s->default_text : "\"\"", s->help);
    }
    return 0;
}
