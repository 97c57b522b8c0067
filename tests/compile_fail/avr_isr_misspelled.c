/* SPDX-License-Identifier: MIT */
/*
 * Must not compile (the test avr_isr_misspelled_vector, tests/CMakeLists.txt):
 * INT5_vec is no avr-libc vector name (INT5_vect is). PORT_AVR_ISR refuses
 * it, where a symbol of that name would link and leave the real vector on
 * BADISR, a halt at run time.
 */
#include "avr.h"

PORT_AVR_ISR(INT5_vec)
{
}
