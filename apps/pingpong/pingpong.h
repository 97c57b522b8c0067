/* SPDX-License-Identifier: MIT */
/*
 * Applications that span the modules of a device, for tests and benchmarks:
 * their programs and their compiled descriptions (one per *.toml here).
 */
#ifndef APPS_PINGPONG_H
#define APPS_PINGPONG_H

#include <stdint.h>

#include "motet/types.h"

/* Generated from the *.toml files by `motet appc` at build time. */
extern const uint8_t pingpong_desc[];
extern const uint16_t pingpong_desc_len;
extern const uint8_t pingpong3_desc[];
extern const uint16_t pingpong3_desc_len;
extern const uint8_t pingpong_bench_desc[];
extern const uint16_t pingpong_bench_desc_len;
extern const uint8_t mcast_desc[];
extern const uint16_t mcast_desc_len;
extern const uint8_t sync_1hz_desc[];
extern const uint16_t sync_1hz_desc_len;
extern const uint8_t sync_0p1hz_desc[];
extern const uint16_t sync_0p1hz_desc_len;
extern const uint8_t misplaced_desc[];
extern const uint16_t misplaced_desc_len;
extern const uint8_t unregistered_desc[];
extern const uint16_t unregistered_desc_len;

/* Register the programs every module of these applications carries. */
void pingpong_register(void);

#endif /* APPS_PINGPONG_H */
