/* SPDX-License-Identifier: MIT */
/*
 * Q15 fixed point, the number format of the signal chain on the small
 * modules: an int16_t v stands for v / 32768, so it covers [-1, 1). A
 * product of two Q15 numbers is Q30 in 32 bits and goes back to Q15 with a
 * rounding shift by 15. Everything here is plain C11 with explicit widths,
 * so it behaves the same with a 16-bit int (avr-gcc) as with a 32-bit one.
 *
 * Right shifts of negative values are arithmetic on every compiler Motet
 * targets (gcc, avr-gcc, arm-none-eabi-gcc document it); C11 leaves it
 * implementation-defined, so this is the one assumption the DSP makes.
 */
#ifndef SSL_Q15_H
#define SSL_Q15_H

#include <stdint.h>

/* One complex Q15 value (a spectrum bin). */
typedef struct cq15 {
    int16_t re;
    int16_t im;
} cq15_t;

/* Q15 product, rounded to nearest. */
static inline int16_t q15_mul(int16_t a, int16_t b)
{
    return (int16_t) (((int32_t) a * b + 0x4000) >> 15);
}

/* Clamp a 32-bit value into int16_t. */
static inline int16_t q15_sat(int32_t v)
{
    return (int16_t) (v > 32767 ? 32767 : v < -32768 ? -32768 : v);
}

#endif /* SSL_Q15_H */
