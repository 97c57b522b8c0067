/* SPDX-License-Identifier: MIT */
/*
 * Time sync: the offset and drift fit (exact on an exact clock, bounded
 * under quantised stamps, wrap-safe, restarting on an implausible pair,
 * offset-only with a window of 1) and the module's view of the global
 * clock (identity before any beacon and on the reference, in microseconds
 * whatever the port's kernel tick).
 *
 * The bound under quantised stamps. Both stamps of a pair are truncated to
 * a grid of q ticks, so each offset sample is wrong by less than q. The
 * least-squares line evaluated at x is a weighted sum of the samples,
 * sum_i w_i(x) y_i with w_i(x) = 1/n + (x - mean)(x_i - mean)/Sxx, so its
 * error is below q * sum_i |w_i(x)|. For n = 8 samples one period apart and
 * x up to one period after the newest, that sum is at most 1.857 (at x one
 * period on); the integer arithmetic adds at most 1 tick. The test checks
 * |error| <= 1.86 q + 1 at many instants between beacons.
 */
#include <string.h>

#include "test_support.h"
#include "timesync_internal.h"

#define US 1u /* ticks per microsecond on the reference clocks below */
/* Kernel ticks of this port in global microseconds. */
#define KERNEL_US(ticks) ((uint32_t) (ticks) * (1000000u / PORT_TICKS_PER_SECOND))

/* A local clock running `ppb` parts per billion fast, starting at `start`,
 * read at true time `t` (microseconds); truncated like a counter. */
static uint32_t clock_at(uint32_t start, int32_t ppb, uint64_t t)
{
    int64_t extra = (int64_t) t * ppb / 1000000000;
    return start + (uint32_t) (t + (uint64_t) extra);
}

/* Truncate to a stamp grid of `hz` (1000000: no truncation). */
static uint32_t quantise(uint32_t ticks, uint32_t hz)
{
    uint64_t edges = (uint64_t) ticks * hz / 1000000u;
    return (uint32_t) ((edges * 1000000u + hz - 1u) / hz);
}

/* |v| <= bound (cmocka's ranges are unsigned: shift into 0 .. 2 bound). */
static void assert_abs_at_most(int32_t v, int32_t bound)
{
    assert_in_range((int64_t) v + bound, 0, 2 * (int64_t) bound);
}

static void test_empty_fit_is_identity(void **state)
{
    (void) state;
    ts_fit_t f;
    ts_fit_reset(&f, 8);
    assert_int_equal(ts_fit_global(&f, 12345u), 12345u);
    assert_int_equal(ts_fit_drift_ppb(&f), 0);
}

static void test_one_pair_is_offset_only(void **state)
{
    (void) state;
    ts_fit_t f;
    ts_fit_reset(&f, 8);
    assert_true(ts_fit_add(&f, 1000u, 501000u));
    assert_int_equal(ts_fit_global(&f, 1000u), 501000u);
    assert_int_equal(ts_fit_global(&f, 3000000u), 3500000u);
    assert_int_equal(ts_fit_drift_ppb(&f), 0);
}

/* An exact linear clock: the fit reproduces it within a tick anywhere
 * near the pairs, at 1 Hz and at 0.1 Hz (where the sums need scaling). */
static void check_exact_clock(uint32_t start, int32_t ppb, uint64_t period)
{
    ts_fit_t f;
    ts_fit_reset(&f, 8);
    for (uint64_t k = 0; k < 12; k++) {
        uint64_t t = 5000 + k * period;
        ts_fit_add(&f, clock_at(start, ppb, t), (uint32_t) t);
    }
    int32_t err_ppb = ts_fit_drift_ppb(&f) + ppb; /* drift is global-local */
    assert_abs_at_most(err_ppb, 2);
    uint64_t last = 5000 + 11 * period;
    for (uint64_t dt = 0; dt <= period; dt += period / 16) {
        uint32_t est = ts_fit_global(&f, clock_at(start, ppb, last + dt));
        int32_t err = (int32_t) (est - (uint32_t) (last + dt));
        assert_abs_at_most(err, 1);
    }
}

static void test_exact_clock_is_reproduced(void **state)
{
    (void) state;
    check_exact_clock(0, 20000, 1000000u * US);
    check_exact_clock(7777777u, -20000, 1000000u * US);
    check_exact_clock(0, 40000, 10000000u * US);    /* 0.1 Hz */
    check_exact_clock(42u, -37000, 60000000u * US); /* one a minute */
}

/* Local and global counters both wrap during the run. */
static void test_wrap_around(void **state)
{
    (void) state;
    check_exact_clock(0xFFFFFFFFu - 3500000u, 15000, 1000000u * US);
    ts_fit_t f;
    ts_fit_reset(&f, 4);
    for (uint32_t k = 0; k < 6; k++) {
        uint32_t t = 0xFFF00000u + k * 100000u;
        ts_fit_add(&f, t - 0x80000000u, t);
    }
    /* The global time wraps between the newest pair and this instant. */
    assert_int_equal(ts_fit_global(&f, 0x7FFFFFFFu + 0x100001u), 0x100000u);
}

/* Quantised stamps, random clocks within +/-20 ppm of the reference. */
static void test_quantised_stamps_stay_within_the_bound(void **state)
{
    (void) state;
    const uint32_t hz[] = {32768u, 1000000u};
    const uint64_t periods[] = {1000000u, 10000000u}; /* 1 Hz and 0.1 Hz */
    uint32_t seed = 12345u;
    for (unsigned h = 0; h < 2; h++) {
        uint32_t q = (1000000u + hz[h] - 1u) / hz[h];
        int32_t bound = (int32_t) (q * 186u / 100u + 1u);
        for (unsigned p = 0; p < 2; p++) {
            for (unsigned run = 0; run < 4; run++) {
                seed = seed * 1103515245u + 12345u;
                int32_t ppb = (int32_t) (seed % 80001u) - 40000; /* relative: up to 40 ppm */
                uint32_t start = seed * 2654435761u;
                ts_fit_t f;
                ts_fit_reset(&f, 8);
                for (uint64_t k = 0; k < 16; k++) {
                    uint64_t t = 1234 + k * periods[p];
                    ts_fit_add(&f, quantise(clock_at(start, ppb, t), hz[h]),
                               quantise((uint32_t) t, hz[h]));
                    if (k < 8) continue; /* the window fills first */
                    for (uint64_t dt = 0; dt < periods[p]; dt += periods[p] / 10 + 7) {
                        uint32_t est = ts_fit_global(&f, clock_at(start, ppb, t + dt));
                        int32_t err = (int32_t) (est - (uint32_t) (t + dt));
                        assert_abs_at_most(err, bound);
                    }
                }
            }
        }
    }
}

/* A new reference (offset jumps by 10 ms): the fit starts over. */
static void test_implausible_pair_restarts_the_fit(void **state)
{
    (void) state;
    ts_fit_t f;
    ts_fit_reset(&f, 8);
    for (uint32_t k = 0; k < 5; k++) assert_true(ts_fit_add(&f, k * 1000000u, k * 1000020u));
    assert_false(ts_fit_add(&f, 5000000u, 5000100u + 10000u));
    assert_int_equal(f.count, 1);
    assert_int_equal(ts_fit_global(&f, 6000000u), 6010100u); /* offset only again */
}

static void test_window_of_one_is_offset_only(void **state)
{
    (void) state;
    ts_fit_t f;
    ts_fit_reset(&f, 1);
    for (uint32_t k = 0; k < 5; k++) ts_fit_add(&f, k * 1000000u, k * 1000020u + 7u);
    assert_int_equal(ts_fit_drift_ppb(&f), 0);
    assert_int_equal(f.count, 1);
    assert_int_equal(ts_fit_global(&f, 5000000u), 5000000u + 4u * 20u + 7u);
    ts_fit_reset(&f, 0); /* clamped to 1 */
    assert_int_equal(f.window, 1);
    ts_fit_reset(&f, 255); /* clamped to the configured window */
    assert_int_equal(f.window, MOTET_TIMESYNC_WINDOW);
}

/* ---- the module's clock ---- */

static void test_module_clock_before_and_after_beacons(void **state)
{
    (void) state;
    timesync_reset();
    assert_false(timesync_synced());
    assert_int_equal(timesync_global(777u), KERNEL_US(777u));
    timesync_beacon(1000000u + KERNEL_US(500u), 500u);
    assert_true(timesync_synced());
    assert_false(timesync_is_reference());
    assert_int_equal(timesync_beacons(), 1);
    assert_int_equal(timesync_global(600u), 1000000u + KERNEL_US(600u));
    timesync_beacon_sent(); /* this module now keeps the global clock */
    assert_true(timesync_is_reference());
    assert_int_equal(timesync_global(600u), KERNEL_US(600u));
    timesync_beacon(2000000u, 1000u); /* and another module takes it back */
    assert_false(timesync_is_reference());
}

static void test_module_window_setting(void **state)
{
    (void) state;
    timesync_reset();
    assert_int_equal(timesync_set_window(0), MT_ERR_INVALID);
    assert_int_equal(timesync_set_window(MOTET_TIMESYNC_WINDOW + 1), MT_ERR_INVALID);
    assert_int_equal(timesync_set_window(1), MT_OK);
    timesync_beacon(1000u, 0u);
    timesync_beacon(KERNEL_US(1000000u) + 1100u, 1000000u); /* 100 us more: no drift kept */
    assert_int_equal(timesync_global(2000000u), KERNEL_US(2000000u) + 1100u);
    assert_int_equal(timesync_set_window(2), MT_OK); /* restarts the fit */
    timesync_beacon(1000u, 0u);
    timesync_beacon(KERNEL_US(1000000u) + 1100u, 1000000u);
    assert_int_equal(timesync_global(2000000u), KERNEL_US(2000000u) + 1200u); /* drift kept */
}

static void test_global_spans_convert_to_kernel_ticks(void **state)
{
    (void) state;
    assert_int_equal(timesync_ticks(KERNEL_US(1234u)), 1234u);
    assert_int_equal(timesync_ticks(KERNEL_US(1234u) + KERNEL_US(1u) - 1u), 1234u); /* down */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_fit_is_identity),
        cmocka_unit_test(test_one_pair_is_offset_only),
        cmocka_unit_test(test_exact_clock_is_reproduced),
        cmocka_unit_test(test_wrap_around),
        cmocka_unit_test(test_quantised_stamps_stay_within_the_bound),
        cmocka_unit_test(test_implausible_pair_restarts_the_fit),
        cmocka_unit_test(test_window_of_one_is_offset_only),
        cmocka_unit_test_setup(test_module_clock_before_and_after_beacons, test_boot),
        cmocka_unit_test_setup(test_module_window_setting, test_boot),
        cmocka_unit_test(test_global_spans_convert_to_kernel_ticks),
    };
    return cmocka_run_group_tests_name("time sync", tests, NULL, NULL);
}
