/* SPDX-License-Identifier: MIT */
/*
 * Sine and cosine in Q15 on a circle of 1024 steps, from one quarter-wave
 * table of 257 entries (514 bytes of constants). The FFT takes its twiddle
 * factors here, the window its Hann curve, SRP-PHAT its steering phases.
 *
 *     int16_t s = trig_sin(256);   // sin(pi/2) = 32767
 */
#ifndef SSL_TRIG_H
#define SSL_TRIG_H

#include <stdint.h>

/* Steps in a full turn. */
#define TRIG_STEPS 1024u

/* round(32767 * sin(2 pi i / 1024)); any i, taken modulo 1024. */
int16_t trig_sin(uint16_t i);
/* round(32767 * cos(2 pi i / 1024)); any i, taken modulo 1024. */
int16_t trig_cos(uint16_t i);

#endif /* SSL_TRIG_H */
