/* SPDX-License-Identifier: MIT */
/*
 * Fixed-point radix-2 FFT in Q15 with block floating point, for the small
 * modules: no floating point, no allocation, the same bits on every build.
 *
 * Block scaling. Before each of the log2(n) stages the largest |re| or |im|
 * of the array is known (the previous stage tracked it). If it is 8192 or
 * more, that stage halves its outputs (rounding) and the block exponent goes
 * up by one; otherwise it runs unscaled. With every magnitude at most
 * 16384 * sqrt(2) on entry (the input is pre-scaled until no component
 * exceeds 16384), an unscaled stage starts below 11585 and ends below 23171,
 * a scaled stage cannot grow, so no stage ever overflows: the result is the
 * DFT divided by 2^e exactly up to rounding, with e returned, whatever the
 * input. Quiet inputs keep their precision (few stages scale), loud ones
 * their range.
 *
 * The real transform packs n real samples into n/2 complex ones, runs the
 * n/2-point complex FFT and separates the even and odd halves; that split
 * halves once more (e + 1), so its outputs stay in the same range.
 *
 *     int16_t buf[512];              // 512 ADC samples, 12 bits
 *     fft_window_hann(buf, 9, 3);    // Hann, scaled to use 15 bits
 *     uint8_t e = fft_real(buf, 9);  // bins k = 1..255: X[k] = out[k] * 2^e
 */
#ifndef SSL_FFT_H
#define SSL_FFT_H

#include <stdint.h>

#include "q15.h"

/* Largest complex size: the trigonometric table has 1024 steps. */
#define FFT_MAX_LOG2 10u

/* Statistics of one transform, for the cost model. */
typedef struct fft_info {
    uint8_t exponent;      /* block exponent e */
    uint8_t scaled_stages; /* stages (and pre-scalings) that halved */
} fft_info_t;

/* In-place complex FFT of n = 2^log2n values (1 <= log2n <= FFT_MAX_LOG2),
 * X[k] = sum x[m] e^(-2 pi i k m / n) = out[k] * 2^e. Returns e. */
uint8_t fft_complex(cq15_t *x, uint8_t log2n, fft_info_t *info);

/* In-place FFT of n = 2^log2n real samples (2 <= log2n <= FFT_MAX_LOG2),
 * viewed afterwards as n/2 complex bins: out[0].re is the DC bin, out[0].im
 * the Nyquist bin n/2, out[k] bin k for 1 <= k < n/2; X[k] = out[k] * 2^e.
 * `buf` must be aligned for cq15_t. Returns e; info may be NULL. */
uint8_t fft_real(int16_t *buf, uint8_t log2n, fft_info_t *info);

/* Multiply n = 2^log2n samples by a periodic Hann window, after shifting
 * them left by `shift` bits (saturating): prepares ADC codes for fft_real. */
void fft_window_hann(int16_t *x, uint8_t log2n, uint8_t shift);

#endif /* SSL_FFT_H */
