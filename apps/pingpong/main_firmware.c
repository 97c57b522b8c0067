/* SPDX-License-Identifier: MIT */
/*
 * A module of a multi-module device on a firmware port: an ATmega128 in
 * the simavr harness (`kind = "avr"` in a device file) or a Cortex-M3
 * under QEMU (`kind = "cortex-m"`), run by `motet run` in lock-step with
 * the hub. The same programs as the native modules (pingpong.c); the hub
 * names the module, the device's modules and the loader through the bus
 * interface (port_bus_join()); the loader loads the pingpong description.
 */
#include "motet/motet.h"
#include "motet/port.h"
#include "pingpong.h"

int main(void)
{
    motet_boot();
    pingpong_register();
    if (port_bus_join() != MT_OK) port_halt(2);
    if (port_bus_loader() && bus_app_load(pingpong_desc, pingpong_desc_len) != MT_OK) port_halt(1);
    sched_run();
    return 0;
}
