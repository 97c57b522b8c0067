/* SPDX-License-Identifier: MIT */
/*
 * A native module of a device whose tasks move between instruction sets
 * (devices/xmigrate.toml): a compute module whose firmware carries the
 * sender and the script but not the movable programs, so that a migration
 * to it is refused (MT_ERR_NO_PROGRAM) and the task stays where it was.
 *
 *     xmigrate --bus SOCKET --module N [--loader] [--app NAME] [native options]
 */
#include "motet/motet.h"
#include "xmigrate.h"
#include "xmigrate_apps.h"

static void register_programs(void)
{
    xmigrate_register(false);
}

static void started(void)
{
    migrate_set_observer(xmigrate_observe);
}

int main(int argc, char **argv)
{
    const module_spec_t spec = {.name = "xmigrate",
                                .register_programs = register_programs,
                                .apps = xmigrate_apps,
                                .num_apps = XMIGRATE_NUM_APPS,
                                .started = started};
    return module_main(&spec, argc, argv);
}
