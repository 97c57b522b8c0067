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
 * migrate_cases, migrate_window, migrate_burst, migrate_bench, soak) on the
 * whole device. --count N: every sender whose description gives no count
 * sends N messages (the soak). --state makes every
 * sink whose description gives it no pad serialise that many bytes (0, or
 * at least 41: its own fields and a pad; the benchmark's state size).
 * --quiet prints no migration phases (the instruction counts).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "migrant.h"
#include "migrate_apps.h"
#include "motet/motet.h"

/* What the options asked for, read by the start-up hooks below. */
static struct {
    long state;
    bool quiet;
} opt = {.state = -1};

static int usage(const char *what, const char *arg)
{
    fprintf(stderr, "migrate: %s '%s'\n", what, arg);
    return -1;
}

static int option(int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--state") == 0 && *i + 1 < argc) {
        char *end;
        opt.state = strtol(argv[++*i], &end, 0);
        if (*end || opt.state > 16384 || (opt.state != 0 && opt.state < MIGRANT_STATE_MIN))
            return usage("bad --state (0, or 41 .. 16384)", argv[*i]);
    } else if (strcmp(argv[*i], "--count") == 0 && *i + 1 < argc) {
        char *end;
        unsigned long count = strtoul(argv[++*i], &end, 0);
        if (*end || argv[*i][0] == '-' || count > 0xFFFFFFFFul)
            return usage("bad --count (0 .. 2^32-1)", argv[*i]);
        migrant_set_count((uint32_t) count);
    } else if (strcmp(argv[*i], "--quiet") == 0) {
        opt.quiet = true;
    } else {
        return 0;
    }
    return 1;
}

static void register_programs(void)
{
    migrant_register((int32_t) opt.state);
}

static void started(void)
{
    if (!opt.quiet) migrate_set_observer(migrant_observe);
}

int main(int argc, char **argv)
{
    const module_spec_t spec = {.name = "migrate",
                                .register_programs = register_programs,
                                .apps = migrate_apps,
                                .num_apps = MIGRATE_NUM_APPS,
                                .option = option,
                                .started = started};
    return module_main(&spec, argc, argv);
}
