/* SPDX-License-Identifier: MIT */
/*
 * The EVENT a module takes from the hub (hub_link.c, docs/bus.md), on any
 * bytes: the reader shared by the native port's bus interface and the
 * simavr harness. The first byte bounds a frame's or message's bytes
 * (data_max, 0 .. 255; BUS_FRAME_MAX when 255), the rest is the body.
 * Checked against the protocol's table, read independently here: an
 * accepted event has a kind of the four and exactly its kind's fields, a
 * result one of the three, a frame or message inside the body and within
 * data_max, and the body's time and capture or id; every other body is
 * refused.
 */
#include "fuzz_support.h"
#include "hub_link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Least significant byte first, as the link lays every number out. */
static uint64_t little(const uint8_t *p, unsigned bytes)
{
    uint64_t v = 0;
    while (bytes--) v = v << 8 | p[bytes];
    return v;
}

/* What the protocol's table allows for an n-byte body. */
static bool allowed(const uint8_t *body, size_t n, size_t data_max)
{
    if (n < 9) return false;
    switch (body[8]) {
    case HUB_EV_TX_DONE:
        return n == 10 && body[9] < HUB_TX_RESULTS;
    case HUB_EV_PROBE:
        return n == 13;
    case HUB_EV_RX:
        return n >= 13 && n - 13 <= data_max;
    case HUB_EV_HOST:
        return n - 9 <= data_max;
    default:
        return false;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t data_max = data[0] == 0xFF ? BUS_FRAME_MAX : data[0];
    const uint8_t *body = data + 1;
    size_t n = size - 1;
    hub_link_event_t e;
    bool ok = hub_link_read_event(body, n, data_max, &e);
    FUZZ_CHECK(ok == allowed(body, n, data_max));
    if (!ok) return 0;
    FUZZ_CHECK(e.at == little(body, 8) && e.kind == body[8]);
    if (e.kind == HUB_EV_TX_DONE) FUZZ_CHECK(e.result == body[9] && e.n == 0 && !e.data);
    if (e.kind == HUB_EV_PROBE) FUZZ_CHECK(e.value == little(body + 9, 4) && e.n == 0 && !e.data);
    if (e.kind == HUB_EV_RX) {
        FUZZ_CHECK(e.value == little(body + 9, 4));
        FUZZ_CHECK(e.data == body + 13 && e.n == n - 13);
    }
    if (e.kind == HUB_EV_HOST) FUZZ_CHECK(e.data == body + 9 && e.n == n - 9);
    FUZZ_CHECK(e.n <= data_max && (!e.n || (e.data >= body && e.data + e.n <= body + n)));
    return 0;
}
