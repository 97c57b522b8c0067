/* SPDX-License-Identifier: MIT */
/*
 * The hello application: its programs and its compiled description.
 */
#ifndef APPS_HELLO_H
#define APPS_HELLO_H

#include <stdint.h>

#include "motet/types.h"

/* Generated from hello.toml by `motet appc` at build time. */
extern const uint8_t hello_desc[];
extern const uint16_t hello_desc_len;

/* Register the programs and load the description; after motet_boot(). */
mt_err_t hello_start(void);

#endif /* APPS_HELLO_H */
