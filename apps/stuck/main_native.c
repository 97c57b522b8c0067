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
#include "motet/module.h"
#include "stuck.h"
#include "stuck_apps.h"

int main(int argc, char **argv)
{
    const module_spec_t spec = {.name = "stuck",
                                .register_programs = stuck_register,
                                .apps = stuck_apps,
                                .num_apps = STUCK_NUM_APPS};
    return module_main(&spec, argc, argv);
}
