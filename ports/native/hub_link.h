/* SPDX-License-Identifier: MIT */
/*
 * The byte level of the link between a module and the hub (docs/bus.md,
 * "Time-grant protocol"): little-endian fields, whole reads and writes on a
 * Unix stream socket. Shared by the native port's bus interface
 * (bus_native.c) and the simavr harness (tools/simavr-harness/buslink.c),
 * which speak the same protocol; each decides what a broken link means.
 */
#ifndef HUB_LINK_H
#define HUB_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    HUB_LINK_OK,
    HUB_LINK_CLOSED, /* the hub closed the link: the run is over */
    HUB_LINK_BROKEN  /* an error other than an interrupted call */
} hub_link_status_t;

/* Writes v into p[0 .. bytes-1], least significant byte first; returns p + bytes. */
uint8_t *hub_link_put(uint8_t *p, uint64_t v, uint8_t bytes);
/* The little-endian number in p[0 .. bytes-1]. */
uint64_t hub_link_get(const uint8_t *p, uint8_t bytes);
/* Writes all n bytes to fd, again after an interrupted call: false if the link broke. */
bool hub_link_write(int fd, const uint8_t *p, size_t n);
/* Reads exactly n bytes from fd, again after an interrupted call. */
hub_link_status_t hub_link_read(int fd, uint8_t *p, size_t n);
/* A stream socket connected to the hub at `path`, or -1 (errno says why). */
int hub_link_connect(const char *path);

#endif /* HUB_LINK_H */
