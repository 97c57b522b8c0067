/* SPDX-License-Identifier: MIT */
/*
 * The start of a native module program of a multi-module device (run by
 * `motet run DEVICE.toml`, one process per module): the native port's and
 * the bus's options, booting, and loading the description on the module
 * that loads it. The programs differ in their own options and in what they
 * register between booting and joining the bus, so each keeps its main()
 * and calls these in this order:
 *
 *     native_module_parse_args, [its own options], native_module_boot,
 *     [its registrations], port_native_bus_start, [load], sched_run
 *
 * Native only: it includes the port's header (native.h), as the programs'
 * main files do; portable code must not include this.
 */
#ifndef APPS_NATIVE_MODULE_H
#define APPS_NATIVE_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "native.h"

/* A description built into the program, picked by --app NAME. */
typedef struct native_module_app {
    const char *name;
    const uint8_t *desc;
    const uint16_t *len;
} native_module_app_t;

typedef struct native_module {
    native_options_t opt;           /* port_native_parse_args() */
    native_bus_options_t bus;       /* port_native_bus_parse_args() */
    bool loader;                    /* --loader: this module loads the description */
    const native_module_app_t *app; /* --app NAME (native_module_app_option) */
} native_module_t;

/* Takes the port's and the bus's options out of argv into m (loader
 * false, app NULL); returns how many arguments are left, argv[0 .. n-1]. */
int native_module_parse_args(int argc, char **argv, native_module_t *m);

/* Takes argv[*i] (and its value) if it is an option of a program with
 * built-in descriptions: --loader, --app NAME (one of apps[0 .. n_apps-1])
 * or --sensor S (ignored: the device file records the sensors, these
 * programs have none); 1 if taken, 0 if not one of them, -1 after printing
 * "PROG: no application 'NAME'". */
int native_module_app_option(native_module_t *m, const char *prog, const native_module_app_t *apps,
                             size_t n_apps, int argc, char **argv, int *i);

/* Configures the port and boots the kernel: the program registers its
 * programs next, then joins the bus (port_native_bus_start). */
void native_module_boot(const native_module_t *m);

/* True on the module that loads the description: the device's loader, or
 * a module alone (no --bus), which must load it itself. */
bool native_module_loads(const native_module_t *m);

/* Loads m->app on the device if this module loads it: 0, or 1 after
 * printing "PROG: cannot load 'NAME': ERROR". */
int native_module_load_app(const native_module_t *m, const char *prog);

#endif /* APPS_NATIVE_MODULE_H */
