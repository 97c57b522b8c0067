/* SPDX-License-Identifier: MIT */
/*
 * One module of the SSL device on a firmware port: an ATmega128 sensing
 * module (the simavr harness, `kind = "avr"`) or the Cortex-M3 compute
 * module (QEMU, `kind = "cortex-m"`) of devices/ssl-mixed.toml, run by
 * `motet run` in lock-step with the hub. The same tasks as the native
 * modules (tasks_*.c) on the chip's own time: no cost model
 * (SSL_COST_MODEL=0), the board of the port (board_avr.c: the sensors
 * served on the host; board_none.c: none). The hub names the module and
 * the loader; the loader loads ssl_device.toml on the whole device.
 */
#include "motet/module.h"
#include "ssl_device_apps.h"
#include "tasks.h"

int main(void)
{
    const module_spec_t spec = {.name = "ssl_device",
                                .register_programs = ssl_register,
                                .apps = ssl_device_apps,
                                .num_apps = SSL_DEVICE_NUM_APPS};
    return module_main(&spec, 0, 0);
}
