/* SPDX-License-Identifier: MIT */
/*
 * The Cortex-M benchmarks' idle wait. QEMU's -icount counts instructions,
 * so a benchmark that waits for an interrupt spins in a loop of a known
 * size and subtracts the loop's instructions from its window.
 */
#ifndef BENCH_SPIN_H
#define BENCH_SPIN_H

#include <stdint.h>

/* Spin until *flag is set: exactly four instructions an iteration (load,
 * count, compare, branch); returns the iterations. */
static inline uint32_t spin_until_set(volatile uint32_t *flag)
{
    uint32_t n = 0, seen;
    __asm volatile("1: ldr %1, [%2]\n"
                   "adds %0, %0, #1\n"
                   "cmp %1, #0\n"
                   "beq 1b\n"
                   : "+r"(n), "=&r"(seen)
                   : "r"(flag)
                   : "cc", "memory");
    return n;
}

#endif /* BENCH_SPIN_H */
