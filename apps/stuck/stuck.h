/* SPDX-License-Identifier: MIT */
/*
 * Applications that hang a module (tests of the hub's watchdog): their
 * programs (the build compiles their descriptions, one per *.toml here,
 * into stuck_apps.h).
 */
#ifndef APPS_STUCK_H
#define APPS_STUCK_H

/* Register the programs every module of these applications carries. */
void stuck_register(void);

#endif /* APPS_STUCK_H */
