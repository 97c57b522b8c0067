/* SPDX-License-Identifier: MIT */
/*
 * A module that hangs, as an ATmega128 image in the simavr harness
 * (`kind = "avr"`) or a Cortex-M3 image under QEMU (`kind = "cortex-m"`),
 * for the tests of the chip's watchdog: the same programs as the native
 * modules (stuck.c); the loader, on another module, loads the
 * description (module_main(), motet/module.h).
 */
#include "motet/module.h"
#include "stuck.h"
#include "stuck_apps.h"

int main(void)
{
    const module_spec_t spec = {.name = "stuck",
                                .register_programs = stuck_register,
                                .apps = stuck_apps,
                                .num_apps = STUCK_NUM_APPS};
    return module_main(&spec, 0, 0);
}
