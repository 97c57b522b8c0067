/* SPDX-License-Identifier: MIT */
/*
 * Radix-2 decimation-in-time FFT in Q15 with block floating point (fft.h).
 * Twiddle factors come from the 1024-step table of trig.c, so sizes up to
 * 1024 complex points need no table of their own.
 */
#include "fft.h"

#include "trig.h"

/* Stages start scaled when a component reaches this (see fft.h). */
#define SCALE_AT 8192
/* Inputs are halved until no component exceeds this. */
#define INPUT_MAX 16384

/* v / 2 and v / 4 rounded to nearest, ties to even: unbiased, so that the
 * rounding of many scaled stages does not pile up in the DC bin. */
static int32_t halve(int32_t v)
{
    return (v + ((v >> 1) & 1)) >> 1;
}

static int32_t quarter(int32_t v)
{
    return (v + 1 + ((v >> 2) & 1)) >> 2;
}

static int16_t abs16(int16_t v)
{
    return (int16_t) (v < 0 ? (v == -32768 ? 32767 : -v) : v);
}

static int16_t max_component(const cq15_t *x, uint16_t n)
{
    int16_t m = 0;
    for (uint16_t i = 0; i < n; i++) {
        int16_t a = abs16(x[i].re), b = abs16(x[i].im);
        if (a > m) m = a;
        if (b > m) m = b;
    }
    return m;
}

/* Halve everything (rounding) until the input bound holds; returns how often. */
static uint8_t prescale(cq15_t *x, uint16_t n, int16_t *peak)
{
    uint8_t shifts = 0;
    while (*peak > INPUT_MAX) {
        for (uint16_t i = 0; i < n; i++) {
            x[i].re = (int16_t) halve(x[i].re);
            x[i].im = (int16_t) halve(x[i].im);
        }
        *peak = max_component(x, n);
        shifts++;
    }
    return shifts;
}

static void bit_reverse(cq15_t *x, uint16_t n)
{
    for (uint16_t i = 1, j = 0; i < n; i++) {
        uint16_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            cq15_t t = x[i];
            x[i] = x[j];
            x[j] = t;
        }
    }
}

static void track(int16_t *peak, int32_t re, int32_t im)
{
    int16_t a = abs16((int16_t) re), b = abs16((int16_t) im);
    if (a > *peak) *peak = a;
    if (b > *peak) *peak = b;
}

/* One butterfly: a, b <- a + w b, a - w b, halved when `shift` is 1. */
static void butterfly(cq15_t *a, cq15_t *b, int16_t wr, int16_t wi, uint8_t shift, int16_t *peak)
{
    int32_t tr = ((int32_t) b->re * wr - (int32_t) b->im * wi + 0x4000) >> 15;
    int32_t ti = ((int32_t) b->re * wi + (int32_t) b->im * wr + 0x4000) >> 15;
    int32_t ar = a->re, ai = a->im;
    int32_t xr = ar + tr, xi = ai + ti, yr = ar - tr, yi = ai - ti;
    if (shift) {
        xr = halve(xr);
        xi = halve(xi);
        yr = halve(yr);
        yi = halve(yi);
    }
    a->re = (int16_t) xr;
    a->im = (int16_t) xi;
    b->re = (int16_t) yr;
    b->im = (int16_t) yi;
    track(peak, xr, xi);
    track(peak, yr, yi);
}

/* Stage with butterflies `half` apart; returns the new peak component. */
static int16_t stage(cq15_t *x, uint16_t n, uint16_t half, uint8_t shift)
{
    uint16_t step = (uint16_t) (TRIG_STEPS / (2u * half)); /* twiddle stride */
    int16_t peak = 0;
    for (uint16_t j = 0; j < half; j++) {
        /* w = e^(-2 pi i j / (2 half)) */
        int16_t wr = trig_cos((uint16_t) (j * step));
        int16_t wi = (int16_t) -trig_sin((uint16_t) (j * step));
        for (uint16_t i = j; i < n; i = (uint16_t) (i + 2u * half))
            butterfly(&x[i], &x[i + half], wr, wi, shift, &peak);
    }
    return peak;
}

uint8_t fft_complex(cq15_t *x, uint8_t log2n, fft_info_t *info)
{
    uint16_t n = (uint16_t) (1u << log2n);
    int16_t peak = max_component(x, n);
    uint8_t e = prescale(x, n, &peak);
    uint8_t scaled = e;
    bit_reverse(x, n);
    for (uint16_t half = 1; half < n; half = (uint16_t) (half * 2u)) {
        uint8_t shift = peak >= SCALE_AT ? 1u : 0u;
        peak = stage(x, n, half, shift);
        e = (uint8_t) (e + shift);
        scaled = (uint8_t) (scaled + shift);
    }
    if (info) {
        info->exponent = e;
        info->scaled_stages = scaled;
    }
    return e;
}

/* Bins k and m-k of the n = 2m point real transform from Z = FFT_m(z). */
static void split_pair(cq15_t *z, uint16_t k, uint16_t m, uint16_t step)
{
    int32_t ar = z[k].re, ai = z[k].im, br = z[m - k].re, bi = z[m - k].im;
    int32_t er = ar + br, ei = ai - bi;  /* 2 * FFT of the even samples */
    int32_t or_ = ai + bi, oi = br - ar; /* 2 * FFT of the odd samples */
    int16_t wr = trig_cos((uint16_t) (k * step));
    int16_t wi = (int16_t) -trig_sin((uint16_t) (k * step));
    int32_t tr = (or_ * wr - oi * wi + 0x4000) >> 15;
    int32_t ti = (or_ * wi + oi * wr + 0x4000) >> 15;
    /* X[k] = (E + W O) / 2 and X[m-k] = conj(E - W O) / 2, both halved. */
    z[k].re = (int16_t) quarter(er + tr);
    z[k].im = (int16_t) quarter(ei + ti);
    if (k != m - k) {
        z[m - k].re = (int16_t) quarter(er - tr);
        z[m - k].im = (int16_t) quarter(ti - ei);
    }
}

uint8_t fft_real(int16_t *buf, uint8_t log2n, fft_info_t *info)
{
    cq15_t *z = (cq15_t *) (void *) buf; /* x[2i] + j x[2i+1] */
    uint8_t log2m = (uint8_t) (log2n - 1u);
    uint16_t m = (uint16_t) (1u << log2m);
    fft_info_t fi;
    uint8_t e = fft_complex(z, log2m, &fi);
    int32_t dc = z[0].re, ny = z[0].im;
    z[0].re = (int16_t) halve(dc + ny);
    z[0].im = (int16_t) halve(dc - ny);
    uint16_t step = (uint16_t) (TRIG_STEPS >> log2n); /* W = e^(-2 pi i k / n) */
    for (uint16_t k = 1; k <= m / 2u; k++) split_pair(z, k, m, step);
    if (info) {
        info->exponent = (uint8_t) (e + 1u);
        info->scaled_stages = fi.scaled_stages;
    }
    return (uint8_t) (e + 1u);
}

void fft_window_hann(int16_t *x, uint8_t log2n, uint8_t shift)
{
    uint16_t n = (uint16_t) (1u << log2n);
    uint16_t step = (uint16_t) (TRIG_STEPS >> log2n);
    for (uint16_t i = 0; i < n; i++) {
        /* w = (1 - cos(2 pi i / n)) / 2 in Q15 */
        int16_t w = (int16_t) ((32767 - (int32_t) trig_cos((uint16_t) (i * step))) >> 1);
        int32_t v = q15_sat((int32_t) x[i] * (int32_t) (1L << shift));
        x[i] = (int16_t) ((v * w + 0x4000) >> 15);
    }
}
