/* SPDX-License-Identifier: MIT */
/*
 * Applications that span the modules of a device, for tests and benchmarks:
 * their programs (the build compiles their descriptions, one per *.toml
 * here, into pingpong_apps.h).
 */
#ifndef APPS_PINGPONG_H
#define APPS_PINGPONG_H

/* Register the programs every module of these applications carries. */
void pingpong_register(void);

#endif /* APPS_PINGPONG_H */
