/* SPDX-License-Identifier: MIT */
/*
 * The SSL application's signal chain (apps/ssl/dsp), without the kernel:
 * the trigonometric table, the Q15 FFT against a double-precision DFT
 * (known bins, random signals, Parseval, the inverse through the forward
 * transform), SC's thresholds and noise tracking, the vote, SRP-PHAT on
 * synthetic plane-wave delays, and the FBD average and alert.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fbd.h"
#include "fft.h"
#include "sc.h"
#include "srp.h"
#include "trig.h"
#include "vote.h"

#define PI 3.14159265358979323846

/* ---- helpers ---- */

static uint32_t lcg_state = 12345u;

static int16_t rand12(void) /* deterministic, -2047 .. 2047 */
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (int16_t) ((int32_t) ((lcg_state >> 16) % 4095u) - 2047);
}

/* Largest |out * 2^e - DFT(x)| over bins 0..n-1 of a complex transform. */
static double dft_error(const double *xr, const double *xi, const cq15_t *out, unsigned n,
                        uint8_t e, double *peak)
{
    double worst = 0;
    *peak = 0;
    for (unsigned k = 0; k < n; k++) {
        double re = 0, im = 0;
        for (unsigned m = 0; m < n; m++) {
            double a = -2 * PI * (double) k * m / n;
            re += xr[m] * cos(a) - xi[m] * sin(a);
            im += xr[m] * sin(a) + xi[m] * cos(a);
        }
        double gr = ldexp(out[k].re, e), gi = ldexp(out[k].im, e);
        worst = fmax(worst, hypot(gr - re, gi - im));
        *peak = fmax(*peak, hypot(re, im));
    }
    return worst;
}

/* ---- trig ---- */

static void test_trig_table_matches_sin(void **state)
{
    (void) state;
    for (uint16_t i = 0; i < TRIG_STEPS; i++) {
        long want = lround(32767.0 * sin(2 * PI * i / TRIG_STEPS));
        assert_in_range(trig_sin(i) - want + 1, 0, 2);
        assert_int_equal(trig_cos(i), trig_sin((uint16_t) (i + 256u)));
    }
    assert_int_equal(trig_sin(256), 32767);
    assert_int_equal(trig_cos(512), -32767);
    assert_int_equal(trig_sin(1024 + 256), 32767); /* modulo a turn */
}

/* ---- FFT ---- */

static void test_fft_impulse_is_flat(void **state)
{
    (void) state;
    cq15_t x[64] = {{16000, 0}};
    uint8_t e = fft_complex(x, 6, NULL);
    for (unsigned k = 0; k < 64; k++) {
        assert_true(fabs(ldexp(x[k].re, e) - 16000.0) <= ldexp(1, e));
        assert_int_equal(x[k].im, 0);
    }
}

static void test_fft_tone_lands_in_its_bin(void **state)
{
    (void) state;
    static cq15_t x[256];
    for (unsigned m = 0; m < 256; m++) { /* e^(2 pi i 37 m / 256), amplitude 8000 */
        x[m].re = (int16_t) lround(8000 * cos(2 * PI * 37 * m / 256));
        x[m].im = (int16_t) lround(8000 * sin(2 * PI * 37 * m / 256));
    }
    uint8_t e = fft_complex(x, 8, NULL);
    for (unsigned k = 0; k < 256; k++) {
        double mag = ldexp(hypot(x[k].re, x[k].im), e);
        if (k == 37)
            assert_true(fabs(mag - 8000.0 * 256) < 0.002 * 8000.0 * 256);
        else
            assert_true(mag < 0.002 * 8000.0 * 256);
    }
}

static void test_fft_complex_matches_dft_at_any_level(void **state)
{
    (void) state;
    static cq15_t x[128];
    static double xr[128], xi[128];
    static const int16_t amp[] = {3, 200, 16384, 32767};
    for (unsigned a = 0; a < sizeof amp / sizeof amp[0]; a++) {
        for (unsigned m = 0; m < 128; m++) {
            x[m].re = (int16_t) (rand12() * (int32_t) amp[a] / 2047);
            x[m].im = (int16_t) (rand12() * (int32_t) amp[a] / 2047);
            xr[m] = x[m].re;
            xi[m] = x[m].im;
        }
        fft_info_t info;
        uint8_t e = fft_complex(x, 7, &info);
        assert_int_equal(e, info.exponent);
        double peak, err = dft_error(xr, xi, x, 128, e, &peak);
        /* Rounding: a few units of the last place per stage, scaled. */
        assert_true(err <= 8.0 * ldexp(1, e) + 1e-3 * peak);
    }
}

static void test_fft_real_matches_dft(void **state)
{
    (void) state;
    static int16_t buf[512];
    static double xr[512];
    for (unsigned m = 0; m < 512; m++) {
        buf[m] = (int16_t) (rand12() * 8);
        xr[m] = buf[m];
    }
    uint8_t e = fft_real(buf, 9, NULL);
    const cq15_t *z = (const cq15_t *) (const void *) buf;
    double dc = 0, ny = 0;
    for (unsigned m = 0; m < 512; m++) {
        dc += xr[m];
        ny += (m & 1) ? -xr[m] : xr[m];
    }
    assert_true(fabs(ldexp(z[0].re, e) - dc) <= 2 * ldexp(1, e));
    assert_true(fabs(ldexp(z[0].im, e) - ny) <= 2 * ldexp(1, e));
    for (unsigned k = 1; k < 256; k += 5) {
        double re = 0, im = 0;
        for (unsigned m = 0; m < 512; m++) {
            re += xr[m] * cos(2 * PI * k * m / 512);
            im -= xr[m] * sin(2 * PI * k * m / 512);
        }
        assert_true(hypot(ldexp(z[k].re, e) - re, ldexp(z[k].im, e) - im) <= 4 * ldexp(1, e));
    }
}

/* Parseval: sum |x|^2 * n = sum |X|^2, within the rounding of the output. */
static void test_fft_keeps_energy(void **state)
{
    (void) state;
    static cq15_t x[512];
    double ex = 0, eX = 0;
    for (unsigned m = 0; m < 512; m++) {
        x[m] = (cq15_t){(int16_t) (rand12() * 4), (int16_t) (rand12() * 4)};
        ex += (double) x[m].re * x[m].re + (double) x[m].im * x[m].im;
    }
    uint8_t e = fft_complex(x, 9, NULL);
    for (unsigned k = 0; k < 512; k++)
        eX += ldexp((double) x[k].re * x[k].re + (double) x[k].im * x[k].im, 2 * e);
    assert_true(fabs(eX / (ex * 512) - 1.0) < 0.01);
}

/* The inverse through the forward transform: x = conj(FFT(conj(X))) / n. */
static void test_fft_inverse_recovers_the_input(void **state)
{
    (void) state;
    static cq15_t x[256], orig[256];
    for (unsigned m = 0; m < 256; m++) orig[m] = x[m] = (cq15_t){rand12(), rand12()};
    uint8_t e1 = fft_complex(x, 8, NULL);
    for (unsigned k = 0; k < 256; k++) x[k].im = (int16_t) -x[k].im;
    uint8_t e2 = fft_complex(x, 8, NULL);
    for (unsigned m = 0; m < 256; m++) {
        double re = ldexp(x[m].re, e1 + e2) / 256, im = -ldexp(x[m].im, e1 + e2) / 256;
        assert_true(fabs(re - orig[m].re) <= 3 && fabs(im - orig[m].im) <= 3);
    }
}

static void test_hann_window_and_prescale(void **state)
{
    (void) state;
    int16_t x[16];
    for (unsigned i = 0; i < 16; i++) x[i] = 1000;
    fft_window_hann(x, 4, 3);
    assert_int_equal(x[0], 0);
    assert_int_equal(x[8], 8000); /* the top of the window, times 2^3 */
    assert_int_equal(x[4], x[12]);
    assert_in_range(x[4], 3999, 4001);
    int16_t big[4] = {4095, -4096, 4095, 4095};
    fft_window_hann(big, 2, 4); /* saturates instead of wrapping */
    assert_in_range(big[2], 32766, 32767);
    assert_in_range(big[1], -16384, -16383);
}

/* ---- SC ---- */

#define SC_BINS 40
static const sc_config_t sc_cfg = {.bin_lo = 0,
                                   .nbins = SC_BINS,
                                   .thresh_shift = 2,
                                   .min_bins = 8,
                                   .rate_shift = 3,
                                   .train_blocks = 2,
                                   .power_shift = 0};

static void fill(cq15_t *b, int16_t v)
{
    for (unsigned i = 0; i < SC_BINS; i++) b[i] = (cq15_t){v, 0};
}

static void test_sc_power_scales_and_saturates(void **state)
{
    (void) state;
    assert_int_equal(sc_power((cq15_t){3, 4}, 0, 0), 25);
    assert_int_equal(sc_power((cq15_t){3, 4}, 2, 0), 400);      /* 4^2 */
    assert_int_equal(sc_power((cq15_t){300, 400}, 0, 6), 3906); /* 250000 / 64 */
    assert_int_equal(sc_power((cq15_t){-32768, -32768}, 9, 0), UINT32_MAX);
    assert_int_equal(sc_power((cq15_t){0, 0}, 20, 0), 0);
}

static void test_sc_trains_then_detects_at_the_threshold(void **state)
{
    (void) state;
    sc_state_t sc;
    uint32_t noise[SC_BINS];
    cq15_t b[SC_BINS];
    bool sound;
    sc_init(&sc, noise, &sc_cfg);
    for (int i = 0; i < 2; i++) { /* training: never sound */
        fill(b, 100);
        assert_int_equal(sc_process(&sc, &sc_cfg, b, 0, &sound), 0);
        assert_false(sound);
    }
    assert_int_equal(noise[0], 10000);
    /* 8 bins just over 4x the noise power (201^2 > 4 * 100^2): sound. */
    fill(b, 100);
    for (unsigned i = 0; i < 8; i++) b[i].re = 201;
    assert_int_equal(sc_process(&sc, &sc_cfg, b, 0, &sound), 8);
    assert_true(sound);
    assert_int_equal(b[0].re, 201);    /* signal bins kept */
    assert_int_equal(b[8].re, 0);      /* the others zeroed */
    assert_int_equal(noise[0], 10000); /* signal bins hold their estimate */
    /* Exactly 4x (200^2) is not over the threshold; 7 bins are too few. */
    fill(b, 100);
    for (unsigned i = 0; i < 8; i++) b[i].re = 200;
    b[0].re = 250;
    assert_int_equal(sc_process(&sc, &sc_cfg, b, 0, &sound), 1);
    assert_false(sound);
}

static void test_sc_noise_estimate_follows_both_ways(void **state)
{
    (void) state;
    sc_state_t sc;
    uint32_t noise[SC_BINS];
    cq15_t b[SC_BINS];
    bool sound;
    sc_init(&sc, noise, &sc_cfg);
    for (int i = 0; i < 2; i++) {
        fill(b, 100);
        sc_process(&sc, &sc_cfg, b, 0, &sound);
    }
    /* The noise doubles in power: each block moves 1/8 of the way up. */
    fill(b, 141); /* 19881 */
    sc_process(&sc, &sc_cfg, b, 0, &sound);
    assert_int_equal(noise[0], 10000 + (19881 - 10000) / 8);
    for (int i = 0; i < 60; i++) {
        fill(b, 141);
        sc_process(&sc, &sc_cfg, b, 0, &sound);
        assert_false(sound);
    }
    assert_in_range(noise[0], 19800, 19881);
    for (int i = 0; i < 60; i++) { /* and back down */
        fill(b, 100);
        sc_process(&sc, &sc_cfg, b, 0, &sound);
    }
    assert_in_range(noise[0], 10000, 10100);
}

/* Random (deterministic) noise blocks after training: never a sound. */
static void test_sc_noise_only_is_not_sound(void **state)
{
    (void) state;
    sc_state_t sc;
    uint32_t noise[SC_BINS];
    cq15_t b[SC_BINS];
    bool sound;
    sc_init(&sc, noise, &sc_cfg);
    unsigned sounds = 0;
    for (int i = 0; i < 500; i++) {
        for (unsigned k = 0; k < SC_BINS; k++) b[k] = (cq15_t){rand12(), rand12()};
        sc_process(&sc, &sc_cfg, b, 0, &sound);
        sounds += sound;
    }
    assert_int_equal(sounds, 0);
}

/* ---- vote ---- */

static void test_vote_needs_three_of_four(void **state)
{
    (void) state;
    vote_t v = {0};
    assert_int_equal(vote_add(&v, 5, 0, true, 4, 3), VOTE_PENDING);
    assert_int_equal(vote_add(&v, 5, 1, true, 4, 3), VOTE_PENDING);
    assert_int_equal(vote_add(&v, 5, 1, false, 4, 3), VOTE_PENDING); /* repeat: ignored */
    assert_int_equal(vote_add(&v, 5, 2, false, 4, 3), VOTE_PENDING);
    assert_int_equal(vote_add(&v, 5, 3, true, 4, 3), VOTE_SOUND);
    for (uint8_t c = 0; c < 4; c++)
        assert_int_equal(vote_add(&v, 6, c, c < 2, 4, 3), c < 3 ? VOTE_PENDING : VOTE_NOISE);
}

static void test_vote_newer_block_abandons_older(void **state)
{
    (void) state;
    vote_t v = {0};
    vote_add(&v, 7, 0, true, 4, 3);
    vote_add(&v, 7, 1, true, 4, 3);
    assert_int_equal(vote_add(&v, 8, 0, true, 4, 3), VOTE_PENDING);
    assert_int_equal(vote_add(&v, 7, 2, true, 4, 3), VOTE_PENDING); /* stale */
    vote_add(&v, 8, 1, true, 4, 3);
    vote_add(&v, 8, 2, false, 4, 3);
    assert_int_equal(vote_add(&v, 8, 3, false, 4, 3), VOTE_NOISE);
    vote_add(&v, 0xFFFF, 0, true, 4, 3);                            /* older than 8 modulo 2^16 */
    assert_int_equal(vote_add(&v, 0, 0, true, 4, 3), VOTE_PENDING); /* newer: wraps */
}

/* ---- SRP-PHAT ---- */

#define SRP_BINS 151
static srp_t srp;
static int32_t srp_ws[20000 / 4];
static cq15_t spec[SRP_MICS][SRP_BINS];
static const srp_config_t srp_cfg = {.n_angles = 360, .log2n = 9, .bin_lo = 10, .nbins = SRP_BINS};
static const srp_geometry_t square = {.x = {0.1, -0.1, -0.1, 0.1},
                                      .y = {0.1, 0.1, -0.1, -0.1},
                                      .sample_rate = 16000,
                                      .speed_of_sound = 343};

/* Unit spectra of a plane wave from `deg`: X_m[k] = e^(-2 pi i k tau_m fs / n),
 * tau_m = -(p_m . u) / c. Bins with (k % skip) != 0 are zeroed (masked). */
static void plane_wave(double deg, unsigned skip)
{
    double ux = cos(deg * PI / 180), uy = sin(deg * PI / 180);
    for (unsigned m = 0; m < SRP_MICS; m++) {
        double tau = -(square.x[m] * ux + square.y[m] * uy) / square.speed_of_sound;
        for (unsigned i = 0; i < SRP_BINS; i++) {
            unsigned k = srp_cfg.bin_lo + i;
            double ph = -2 * PI * k * tau * square.sample_rate / 512;
            bool on = k % skip == 0;
            spec[m][i] = (cq15_t){(int16_t) (on ? lround(9000 * cos(ph)) : 0),
                                  (int16_t) (on ? lround(9000 * sin(ph)) : 0)};
        }
    }
}

static srp_result_t locate(void)
{
    cq15_t *s[SRP_MICS] = {spec[0], spec[1], spec[2], spec[3]};
    for (unsigned m = 0; m < SRP_MICS; m++) srp_phat(s[m], SRP_BINS);
    srp_cross(&srp, s);
    srp_result_t r;
    srp_locate(&srp, &r);
    return r;
}

static double angle_error(double got, double want)
{
    return fabs(fmod(got - want + 540.0, 360.0) - 180.0);
}

static void test_srp_isqrt(void **state)
{
    (void) state;
    static const uint32_t v[] = {0,   1,     2,           3,           4,         99,
                                 100, 65535, 1073741824u, 2147483648u, UINT32_MAX};
    for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint32_t r = srp_isqrt(v[i]);
        assert_true((uint64_t) r * r <= v[i] && (uint64_t) (r + 1) * (r + 1) > v[i]);
    }
}

static void test_srp_phat_whitens(void **state)
{
    (void) state;
    cq15_t b[3] = {{300, -400}, {0, 0}, {-7, 0}};
    srp_phat(b, 3);
    assert_int_equal(b[0].re, 19660); /* 0.6 */
    assert_int_equal(b[0].im, -26213);
    assert_int_equal(b[1].re, 0); /* masked stays masked */
    assert_int_equal(b[2].re, -32767);
}

static void test_srp_finds_synthetic_plane_waves(void **state)
{
    (void) state;
    assert_true(srp_workspace_size(&srp_cfg) <= sizeof srp_ws);
    assert_int_equal(srp_init(&srp, &srp_cfg, &square, srp_ws), 0);
    for (double deg = 0; deg < 360; deg += 7.3) {
        plane_wave(deg, 1);
        srp_result_t r = locate();
        assert_int_equal(r.entries, 6 * SRP_BINS);
        assert_true(angle_error(r.angle_ddeg / 10.0, deg) <= 0.3);
    }
}

static void test_srp_uses_only_unmasked_bins(void **state)
{
    (void) state;
    assert_int_equal(srp_init(&srp, &srp_cfg, &square, srp_ws), 0);
    plane_wave(123.4, 3); /* every third bin */
    srp_result_t r = locate();
    assert_int_equal(r.entries, 6 * 50); /* bins 12, 15, ..., 159 */
    assert_true(angle_error(r.angle_ddeg / 10.0, 123.4) <= 0.3);
    assert_true(r.peak > 5 * r.mean);
}

static void test_srp_rejects_bad_configurations(void **state)
{
    (void) state;
    srp_config_t c = srp_cfg;
    c.nbins = 250; /* past the last bin of a 512-point FFT */
    assert_int_equal(srp_init(&srp, &c, &square, srp_ws), -1);
    c = srp_cfg;
    c.log2n = 10;
    assert_int_equal(srp_init(&srp, &c, &square, srp_ws), -1);
}

/* ---- FBD ---- */

static const fbd_alert_config_t alert_cfg = {.threshold_q16 = 64u * 64u, .shift = 1};

static void test_ewma_starts_at_the_first_sample_and_converges(void **state)
{
    (void) state;
    fbd_ewma_t f = {0};
    assert_int_equal(fbd_ewma_update(&f, 21 * 16, 2), 21 * 256);
    int32_t y = 0;
    for (int i = 0; i < 60; i++) y = fbd_ewma_update(&f, 30 * 16, 2);
    assert_in_range(y, 30 * 256 - 4, 30 * 256);
}

static void test_alert_quiet_for_noise_raised_by_a_climb_and_rearmed(void **state)
{
    (void) state;
    fbd_ewma_t f = {0};
    fbd_alert_t a = {0};
    int alerts = 0, first = -1;
    for (int i = 0; i < 400; i++) {
        /* 21 C +- 2/16 C of noise; from sample 100 on, +1.5 C a second
         * (0.375 per sample at 4 Hz) for 10 s; cooling from sample 300 */
        int16_t t = (int16_t) (21 * 16 + (i % 3) - 1);
        if (i >= 100 && i < 140) t = (int16_t) (t + (i - 100) * 6);
        if (i >= 140) t = (int16_t) (t + 240);
        if (i >= 300) t = (int16_t) (21 * 16);
        bool raised = fbd_alert_update(&a, &alert_cfg, fbd_ewma_update(&f, t, 2));
        if (raised && first < 0) first = i;
        alerts += raised;
    }
    assert_int_equal(alerts, 2); /* the climb, then the cooling: each once */
    assert_in_range(first, 100, 106);
}

/* A draught (a 1 C spike for one sample) and a room warming by 2 C in ten
 * minutes are changes too, but without the energy of a fire. */
static void test_alert_ignores_spikes_and_slow_drift(void **state)
{
    (void) state;
    fbd_ewma_t f = {0};
    fbd_alert_t a = {0};
    for (int i = 0; i < 2400; i++) {
        int16_t t = (int16_t) (21 * 16 + i * 32 / 2400 + (i % 40 == 20 ? 16 : 0));
        assert_false(fbd_alert_update(&a, &alert_cfg, fbd_ewma_update(&f, t, 2)));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trig_table_matches_sin),
        cmocka_unit_test(test_fft_impulse_is_flat),
        cmocka_unit_test(test_fft_tone_lands_in_its_bin),
        cmocka_unit_test(test_fft_complex_matches_dft_at_any_level),
        cmocka_unit_test(test_fft_real_matches_dft),
        cmocka_unit_test(test_fft_keeps_energy),
        cmocka_unit_test(test_fft_inverse_recovers_the_input),
        cmocka_unit_test(test_hann_window_and_prescale),
        cmocka_unit_test(test_sc_power_scales_and_saturates),
        cmocka_unit_test(test_sc_trains_then_detects_at_the_threshold),
        cmocka_unit_test(test_sc_noise_estimate_follows_both_ways),
        cmocka_unit_test(test_sc_noise_only_is_not_sound),
        cmocka_unit_test(test_vote_needs_three_of_four),
        cmocka_unit_test(test_vote_newer_block_abandons_older),
        cmocka_unit_test(test_srp_isqrt),
        cmocka_unit_test(test_srp_phat_whitens),
        cmocka_unit_test(test_srp_finds_synthetic_plane_waves),
        cmocka_unit_test(test_srp_uses_only_unmasked_bins),
        cmocka_unit_test(test_srp_rejects_bad_configurations),
        cmocka_unit_test(test_ewma_starts_at_the_first_sample_and_converges),
        cmocka_unit_test(test_alert_quiet_for_noise_raised_by_a_climb_and_rearmed),
        cmocka_unit_test(test_alert_ignores_spikes_and_slow_drift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
