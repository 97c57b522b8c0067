/* SPDX-License-Identifier: MIT */
/*
 * A module of a multi-module device (run by `motet run DEVICE.toml`): the
 * same program on every module, told by the hub which module it is.
 *
 *     pingpong --bus SOCKET --module N [--loader] [--app NAME] [native options]
 *
 * Every module registers the same programs; the loader (one module) loads
 * the description NAME (pingpong, pingpong_bench, mcast, sync_1hz,
 * sync_0p1hz) on the whole device, and each module creates its own part.
 */
#include <stdio.h>
#include <string.h>

#include "motet/motet.h"
#include "native.h"
#include "pingpong.h"

typedef struct app {
    const char *name;
    const uint8_t *desc;
    const uint16_t *len;
} app_t;

static const app_t apps[] = {
    {"pingpong", pingpong_desc, &pingpong_desc_len},
    {"pingpong_bench", pingpong_bench_desc, &pingpong_bench_desc_len},
    {"mcast", mcast_desc, &mcast_desc_len},
    {"sync_1hz", sync_1hz_desc, &sync_1hz_desc_len},
    {"sync_0p1hz", sync_0p1hz_desc, &sync_0p1hz_desc_len},
};

static const app_t *find_app(const char *name)
{
    for (size_t i = 0; i < sizeof apps / sizeof apps[0]; i++)
        if (strcmp(apps[i].name, name) == 0) return &apps[i];
    return NULL;
}

int main(int argc, char **argv)
{
    native_options_t opt;
    native_bus_options_t bus;
    int rest = port_native_parse_args(argc, argv, &opt);
    rest = port_native_bus_parse_args(rest, argv, &bus);
    const app_t *app = &apps[0];
    bool loader = false;
    for (int i = 1; i < rest; i++) {
        if (strcmp(argv[i], "--loader") == 0) {
            loader = true;
        } else if (strcmp(argv[i], "--app") == 0 && i + 1 < rest) {
            app = find_app(argv[++i]);
            if (!app) {
                fprintf(stderr, "pingpong: no application '%s'\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--sensor") == 0 && i + 1 < rest) {
            i++; /* simulated sensors come with the sound-localisation demo */
        } else {
            fprintf(stderr, "pingpong: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    port_native_configure(&opt);
    motet_boot();
    pingpong_register();
    port_native_bus_start(&bus);
    if (loader || !bus.socket) {
        mt_err_t err = bus_app_load(app->desc, *app->len);
        if (err) {
            fprintf(stderr, "pingpong: cannot load '%s': %s\n", app->name, mt_strerror(err));
            return 1;
        }
    }
    sched_run();
    return 0;
}
