/* SPDX-License-Identifier: MIT */
/*
 * A module of a multi-module device (run by `motet run DEVICE.toml`): the
 * same program on every module, told by the hub which module it is.
 *
 *     pingpong --bus SOCKET --module N [--loader] [--app NAME] [native options]
 *
 * Every module registers the same programs; the loader (one module) loads
 * the description NAME (pingpong, pingpong3, pingpong_bench, mcast, sync_1hz,
 * sync_0p1hz; misplaced and unregistered, which every module refuses, for
 * the tests) on the whole device, and each module creates its own part.
 */
#include <stdio.h>

#include "motet/motet.h"
#include "native_module.h"
#include "pingpong.h"

static const native_module_app_t apps[] = {
    {"pingpong", pingpong_desc, &pingpong_desc_len},
    {"pingpong3", pingpong3_desc, &pingpong3_desc_len},
    {"pingpong_bench", pingpong_bench_desc, &pingpong_bench_desc_len},
    {"mcast", mcast_desc, &mcast_desc_len},
    {"sync_1hz", sync_1hz_desc, &sync_1hz_desc_len},
    {"sync_0p1hz", sync_0p1hz_desc, &sync_0p1hz_desc_len},
    {"misplaced", misplaced_desc, &misplaced_desc_len},
    {"unregistered", unregistered_desc, &unregistered_desc_len},
};

int main(int argc, char **argv)
{
    native_module_t m;
    int rest = native_module_parse_args(argc, argv, &m);
    m.app = &apps[0];
    for (int i = 1; i < rest; i++) {
        int took = native_module_app_option(&m, "pingpong", apps, sizeof apps / sizeof apps[0],
                                            rest, argv, &i);
        if (took < 0) return 2;
        if (!took) {
            fprintf(stderr, "pingpong: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    native_module_boot(&m);
    pingpong_register();
    port_native_bus_start(&m.bus);
    if (native_module_load_app(&m, "pingpong")) return 1;
    sched_run();
    return 0;
}
