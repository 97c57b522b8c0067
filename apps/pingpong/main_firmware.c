/* SPDX-License-Identifier: MIT */
/*
 * A module of a multi-module device on a firmware port: an ATmega128 in
 * the simavr harness (`kind = "avr"` in a device file) or a Cortex-M3
 * under QEMU (`kind = "cortex-m"`), run by `motet run` in lock-step with
 * the hub. The same programs as the native modules (pingpong.c); the hub
 * names the module, the device's modules and the loader through the bus
 * interface, and the loader loads the pingpong description
 * (module_main(), motet/module.h).
 */
#include "motet/module.h"
#include "pingpong.h"
#include "pingpong_apps.h"

int main(void)
{
    const module_spec_t spec = {.name = "pingpong",
                                .register_programs = pingpong_register,
                                .apps = pingpong_apps,
                                .num_apps = PINGPONG_NUM_APPS};
    return module_main(&spec, 0, 0);
}
