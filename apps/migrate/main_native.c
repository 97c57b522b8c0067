/* SPDX-License-Identifier: MIT */
/*
 * A module of a device that moves tasks around (run by `motet run
 * devices/migrate.toml`): the same program on every module, told by the hub
 * which module it is.
 *
 *     migrate --bus SOCKET --module N [--loader] [--app NAME] [--state BYTES]
 *             [--quiet] [native options]
 *
 * Every module registers the same programs and prints its migration phases
 * (migrant_observe); the loader loads the description NAME (migrate,
 * migrate_cases, migrate_window, migrate_burst, migrate_bench) on the whole
 * device. --state makes every
 * sink whose description gives it no pad serialise that many bytes (0, or
 * at least 41: its own fields and a pad; the benchmark's state size).
 * --quiet prints no migration phases (the instruction counts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrant.h"
#include "motet/motet.h"
#include "native.h"

typedef struct app {
    const char *name;
    const uint8_t *desc;
    const uint16_t *len;
} app_t;

static const app_t apps[] = {
    {"migrate", migrate_desc, &migrate_desc_len},
    {"migrate_cases", migrate_cases_desc, &migrate_cases_desc_len},
    {"migrate_window", migrate_window_desc, &migrate_window_desc_len},
    {"migrate_burst", migrate_burst_desc, &migrate_burst_desc_len},
    {"migrate_bench", migrate_bench_desc, &migrate_bench_desc_len},
};

static const app_t *find_app(const char *name)
{
    for (size_t i = 0; i < sizeof apps / sizeof apps[0]; i++)
        if (strcmp(apps[i].name, name) == 0) return &apps[i];
    return NULL;
}

static int usage(const char *what, const char *arg)
{
    fprintf(stderr, "migrate: %s '%s'\n", what, arg);
    return 2;
}

int main(int argc, char **argv)
{
    native_options_t opt;
    native_bus_options_t bus;
    int rest = port_native_parse_args(argc, argv, &opt);
    rest = port_native_bus_parse_args(rest, argv, &bus);
    const app_t *app = &apps[0];
    bool loader = false;
    long state = -1;
    bool quiet = false;
    for (int i = 1; i < rest; i++) {
        if (strcmp(argv[i], "--loader") == 0) {
            loader = true;
        } else if (strcmp(argv[i], "--app") == 0 && i + 1 < rest) {
            app = find_app(argv[++i]);
            if (!app) return usage("no application", argv[i]);
        } else if (strcmp(argv[i], "--state") == 0 && i + 1 < rest) {
            char *end;
            state = strtol(argv[++i], &end, 0);
            if (*end || state > 16384 || (state != 0 && state < MIGRANT_STATE_MIN))
                return usage("bad --state (0, or 41 .. 16384)", argv[i]);
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = true;
        } else if (strcmp(argv[i], "--sensor") == 0 && i + 1 < rest) {
            i++; /* recorded by the device file, not used here */
        } else {
            return usage("unknown argument", argv[i]);
        }
    }
    port_native_configure(&opt);
    motet_boot();
    migrant_register((int32_t) state);
    port_native_bus_start(&bus);
    if (!quiet) migrate_set_observer(migrant_observe);
    if (loader || !bus.socket) {
        mt_err_t err = bus_app_load(app->desc, *app->len);
        if (err) {
            fprintf(stderr, "migrate: cannot load '%s': %s\n", app->name, mt_strerror(err));
            return 1;
        }
    }
    sched_run();
    return 0;
}
