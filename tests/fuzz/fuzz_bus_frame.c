/* SPDX-License-Identifier: MIT */
/*
 * The bus frame decoder (bus_frame.c) on any bytes. A frame it accepts is
 * exactly what the encoder makes of the fields it decoded, and stamping a
 * beacon keeps it a good frame carrying that stamp.
 */
#include <string.h>

#include "bus_internal.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > UINT16_MAX) return 0;
    uint16_t n = (uint16_t) size;
    bus_frame_t f;
    if (bus_frame_decode(data, n, &f) != MT_OK) return 0;
    FUZZ_CHECK(f.type >= BUS_FRAME_DATA && f.type < BUS_FRAME_TYPE_END);
    FUZZ_CHECK(f.len <= MOTET_BUS_PAYLOAD_MAX && n == BUS_OVERHEAD + f.len);
    FUZZ_CHECK((f.len == 0) == (f.payload == NULL));
    FUZZ_CHECK(!f.len || (f.payload >= data && f.payload + f.len <= data + n));
    static uint8_t again[BUS_FRAME_MAX];
    FUZZ_CHECK(bus_frame_encode(&f, again, sizeof again) == n);
    FUZZ_CHECK(memcmp(again, data, n) == 0);
    FUZZ_CHECK(bus_frame_is_sync(data, n) == (f.type == BUS_FRAME_SYNC));
    if (f.type == BUS_FRAME_SYNC) {
        uint32_t stamp = bus_frame_sync_stamp(&f) ^ 0x5A5A5A5Au;
        bus_frame_stamp(again, n, stamp);
        bus_frame_t g;
        FUZZ_CHECK(bus_frame_decode(again, n, &g) == MT_OK);
        FUZZ_CHECK(bus_frame_sync_stamp(&g) == stamp);
    }
    return 0;
}
