/* SPDX-License-Identifier: MIT */
/*
 * module_main() of a port without a command line (module.h): firmware
 * boots, registers its programs, joins the device's bus if a hub drives its
 * bus interface, loads its default description (alone, or as the device's
 * loader) and runs.
 * A port with a command line (PORT_HAS_COMMAND_LINE, port.h) brings its
 * own, which takes the options first (ports/native/module_native.c).
 */
#include "motet/module.h"
#include "motet/motet.h"
#include "motet/port.h"

#if MOTET_APPMGR && !defined(PORT_HAS_COMMAND_LINE)

int module_main(const module_spec_t *spec, int argc, char **argv)
{
    (void) argc;
    (void) argv;
    motet_boot();
    spec->register_programs();
    if (spec->started) spec->started();
    /* Alone, or on a device whose hub names this module through the bus
     * interface: then only the loader loads (the others create their part
     * when the description reaches them), and everyone knows its names. */
    bool load = true;
#if MOTET_BUS
    if (port_bus_join() == MT_OK) load = port_bus_loader();
#endif
    mt_err_t err = spec->num_apps ? module_use_app(spec->apps[0], load) : MT_OK;
    if (!err && load && spec->num_apps && !bus_active()) err = appmgr_last_result()->err;
    if (err) port_halt(1);
    sched_run();
    return 0;
}

#endif
