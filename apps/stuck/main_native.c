/* SPDX-License-Identifier: MIT */
/*
 * A module of a device that hangs (run by `motet run`, tests of the hub's
 * watchdog): the same program on every module.
 *
 *     stuck --bus SOCKET --module N [--loader] [--app NAME] [native options]
 *
 * The loader loads the description NAME (stuck_spin, the default, or
 * stuck_pingpong) on the whole device.
 */
#include <stdio.h>

#include "motet/motet.h"
#include "native_module.h"
#include "stuck.h"

static const native_module_app_t apps[] = {
    {"stuck_spin", stuck_spin_desc, &stuck_spin_desc_len},
    {"stuck_pingpong", stuck_pingpong_desc, &stuck_pingpong_desc_len},
};

int main(int argc, char **argv)
{
    native_module_t m;
    int rest = native_module_parse_args(argc, argv, &m);
    m.app = &apps[0];
    for (int i = 1; i < rest; i++) {
        int took = native_module_app_option(&m, "stuck", apps, sizeof apps / sizeof apps[0], rest,
                                            argv, &i);
        if (took < 0) return 2;
        if (!took) {
            fprintf(stderr, "stuck: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    native_module_boot(&m);
    stuck_register();
    port_native_bus_start(&m.bus);
    if (native_module_load_app(&m, "stuck")) return 1;
    sched_run();
    return 0;
}
