/* SPDX-License-Identifier: MIT */
/*
 * Programs for task migration between modules of different instruction
 * sets (xmigrate.c); the build compiles their descriptions (one per *.toml
 * here) into xmigrate_apps.h.
 */
#ifndef APPS_XMIGRATE_H
#define APPS_XMIGRATE_H

#include <stdbool.h>

#include "motet/migrate.h"

/* Register the programs this module carries: all of them, or none of the
 * movable ones (a module whose firmware lacks them: a migration there is
 * refused). */
void xmigrate_register(bool with_meter);
/* The observer every module installs: one line per migration phase. */
void xmigrate_observe(const migrate_event_t *ev);

#endif /* APPS_XMIGRATE_H */
