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

/* The kinds of an EVENT (hub -> module); HOST goes to native modules only. */
enum { HUB_EV_RX = 1, HUB_EV_TX_DONE = 2, HUB_EV_PROBE = 3, HUB_EV_HOST = 4 };
/* A TX_DONE's results: 0 sent, 1 rejected, 2 unreachable (port_bus_result_t). */
#define HUB_TX_RESULTS 3u

/* An EVENT's body read: its time, kind and the fields its kind has. */
typedef struct hub_link_event {
    uint64_t at;
    uint8_t kind;
    uint8_t result;      /* HUB_EV_TX_DONE: the interface's result */
    uint32_t value;      /* HUB_EV_RX: the counter capture; HUB_EV_PROBE: the probe's id */
    const uint8_t *data; /* HUB_EV_RX: the frame; HUB_EV_HOST: the message; inside the body */
    size_t n;            /* bytes at data */
} hub_link_event_t;

/* Reads the n-byte body of an EVENT into *e: false, and nothing of it to be
 * used, for a kind other than the four, a body that is not exactly its
 * kind's fields (a frame or message after them: at most data_max bytes), or
 * a TX_DONE result that is none of HUB_TX_RESULTS. */
bool hub_link_read_event(const uint8_t *body, size_t n, size_t data_max, hub_link_event_t *e);
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
