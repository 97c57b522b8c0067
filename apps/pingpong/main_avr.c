/* SPDX-License-Identifier: MIT */
/*
 * An ATmega128 module of a multi-module device (a module of `kind = "avr"`
 * in a device file, run by `motet run` in the simavr harness): the same
 * programs as the native modules (pingpong.c), compiled for the AVR. The
 * hub names the module, the device's modules and the loader through the
 * bus interface (ports/avr/avr_bus_if.h); the loader loads the pingpong
 * description.
 */
#include "avr.h"
#include "motet/motet.h"
#include "pingpong.h"

int main(void)
{
    motet_boot();
    pingpong_register();
    if (port_avr_bus_start() != MT_OK) port_halt(2);
    if (port_avr_bus_loader() && bus_app_load(pingpong_desc, pingpong_desc_len) != MT_OK)
        port_halt(1);
    sched_run();
    return 0;
}
