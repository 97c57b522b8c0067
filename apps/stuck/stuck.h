/* SPDX-License-Identifier: MIT */
/*
 * Applications that hang a module (tests of the hub's watchdog): their
 * programs and their compiled descriptions (one per *.toml here).
 */
#ifndef APPS_STUCK_H
#define APPS_STUCK_H

#include <stdint.h>

#include "motet/types.h"

/* Generated from the *.toml files by `motet appc` at build time. */
extern const uint8_t stuck_spin_desc[];
extern const uint16_t stuck_spin_desc_len;
extern const uint8_t stuck_pingpong_desc[];
extern const uint16_t stuck_pingpong_desc_len;

/* Register the programs every module of these applications carries. */
void stuck_register(void);

#endif /* APPS_STUCK_H */
