/* SPDX-License-Identifier: MIT */
/*
 * A module of a device that moves tasks around (run by `motet run
 * devices/migrate.toml`): the same program on every module, told by the hub
 * which module it is.
 *
 *     migrate --bus SOCKET --module N [--loader] [--app NAME] [--state BYTES]
 *             [--quiet] [--count N] [native options]
 *
 * Every module registers the same programs and prints its migration phases
 * (migrant_observe); the loader loads the description NAME (migrate,
 * migrate_cases, migrate_window, migrate_burst, migrate_recast, migrate_bench, soak) on the
 * whole device. --count N: every sender whose description gives no count
 * sends N messages (the soak). --state makes every
 * sink whose description gives it no pad serialise that many bytes (0, or
 * at least 41: its own fields and a pad; the benchmark's state size).
 * --quiet prints no migration phases (the instruction counts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrant.h"
#include "motet/motet.h"
#include "native_module.h"

static const native_module_app_t apps[] = {
    {"migrate", migrate_desc, &migrate_desc_len},
    {"migrate_cases", migrate_cases_desc, &migrate_cases_desc_len},
    {"migrate_window", migrate_window_desc, &migrate_window_desc_len},
    {"migrate_burst", migrate_burst_desc, &migrate_burst_desc_len},
    {"migrate_recast", migrate_recast_desc, &migrate_recast_desc_len},
    {"migrate_bench", migrate_bench_desc, &migrate_bench_desc_len},
    {"soak", soak_desc, &soak_desc_len},
};

static int usage(const char *what, const char *arg)
{
    fprintf(stderr, "migrate: %s '%s'\n", what, arg);
    return 2;
}

int main(int argc, char **argv)
{
    native_module_t m;
    int rest = native_module_parse_args(argc, argv, &m);
    m.app = &apps[0];
    long state = -1;
    bool quiet = false;
    for (int i = 1; i < rest; i++) {
        int took = native_module_app_option(&m, "migrate", apps, sizeof apps / sizeof apps[0], rest,
                                            argv, &i);
        if (took < 0) return 2;
        if (took) continue;
        if (strcmp(argv[i], "--state") == 0 && i + 1 < rest) {
            char *end;
            state = strtol(argv[++i], &end, 0);
            if (*end || state > 16384 || (state != 0 && state < MIGRANT_STATE_MIN))
                return usage("bad --state (0, or 41 .. 16384)", argv[i]);
        } else if (strcmp(argv[i], "--count") == 0 && i + 1 < rest) {
            char *end;
            unsigned long count = strtoul(argv[++i], &end, 0);
            if (*end || argv[i][0] == '-' || count > 0xFFFFFFFFul)
                return usage("bad --count (0 .. 2^32-1)", argv[i]);
            migrant_set_count((uint32_t) count);
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = true;
        } else {
            return usage("unknown argument", argv[i]);
        }
    }
    native_module_boot(&m);
    migrant_register((int32_t) state);
    port_native_bus_start(&m.bus);
    if (!quiet) migrate_set_observer(migrant_observe);
    if (native_module_load_app(&m, "migrate")) return 1;
    sched_run();
    return 0;
}
