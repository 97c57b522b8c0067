/* SPDX-License-Identifier: MIT */
/*
 * Time-sync beacons (timesync.c) on any pairs of (local time, stamp): the
 * fit holds at most its window of pairs, its drift stays within what any
 * plausible clock can have, a pair it cannot explain starts it over, and
 * reading the global time never overflows (UBSan watches the arithmetic).
 * The first byte picks the window; each pair is a local time that moves
 * forward by a u16 delta scaled by a u8 shift, and a u32 stamp given as a
 * signed offset from the local time or, with the top bit of the shift, as
 * it is.
 */
#include "fuzz_support.h"
#include "timesync_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_PAIRS 64u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input_t in = {.data = data, .size = size};
    ts_fit_t fit;
    uint8_t window = (uint8_t) (fuzz_u8(&in) % (MOTET_TIMESYNC_WINDOW + 1u));
    ts_fit_reset(&fit, window);
    FUZZ_CHECK(fit.window >= 1 && fit.window <= MOTET_TIMESYNC_WINDOW && fit.count == 0);
    int32_t limit = TIMESYNC_MAX_PPM * 1000 + 1; /* ppb, and a unit for rounding */
    uint32_t local = fuzz_u32(&in);
    for (unsigned k = 0; k < MAX_PAIRS && fuzz_more(&in); k++) {
        uint8_t how = fuzz_u8(&in);
        local += (uint32_t) fuzz_u16(&in) << (how & 0x0Fu);
        uint32_t word = fuzz_u32(&in);
        uint32_t stamp = (how & 0x80u) ? word : local + (uint32_t) (int32_t) (int16_t) word;
        uint8_t before = fit.count;
        bool plausible = ts_fit_add(&fit, local, stamp);
        FUZZ_CHECK(fit.count >= 1 && fit.count <= fit.window);
        FUZZ_CHECK(plausible ? fit.count == (before < fit.window ? before + 1 : before)
                             : fit.count == 1);
        int32_t drift = ts_fit_drift_ppb(&fit);
        FUZZ_CHECK(drift >= -limit && drift <= limit);
        (void) ts_fit_global(&fit, local);
        (void) ts_fit_global(&fit, local + fuzz_u16(&in));
    }
    return 0;
}
