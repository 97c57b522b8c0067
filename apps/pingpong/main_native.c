/* SPDX-License-Identifier: MIT */
/*
 * A module of a multi-module device (run by `motet run DEVICE.toml`): the
 * same program on every module, told by the hub which module it is.
 *
 *     pingpong --bus SOCKET --module N [--loader] [--app NAME] [native options]
 *
 * Every module registers the same programs; the loader (one module) loads
 * the description NAME (pingpong, pingpong_bench, mcast, sync_1hz,
 * sync_0p1hz; misplaced and unregistered, which every module refuses, for
 * the tests) on the whole device, and each module creates its own part.
 */
#include "motet/module.h"
#include "pingpong.h"
#include "pingpong_apps.h"

int main(int argc, char **argv)
{
    const module_spec_t spec = {.name = "pingpong",
                                .register_programs = pingpong_register,
                                .apps = pingpong_apps,
                                .num_apps = PINGPONG_NUM_APPS};
    return module_main(&spec, argc, argv);
}
