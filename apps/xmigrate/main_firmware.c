/* SPDX-License-Identifier: MIT */
/*
 * An emulated module of a device whose tasks move between instruction sets
 * (devices/xmigrate.toml): an ATmega128 in the simavr harness or a
 * Cortex-M3 under QEMU, carrying every program of xmigrate.c, the movable
 * ones included.
 */
#include "motet/motet.h"
#include "xmigrate.h"
#include "xmigrate_apps.h"

static void register_programs(void)
{
    xmigrate_register(true);
}

static void started(void)
{
    migrate_set_observer(xmigrate_observe);
}

int main(void)
{
    const module_spec_t spec = {.name = "xmigrate",
                                .register_programs = register_programs,
                                .apps = xmigrate_apps,
                                .num_apps = XMIGRATE_NUM_APPS,
                                .started = started};
    return module_main(&spec, 0, 0);
}
