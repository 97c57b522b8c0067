/* SPDX-License-Identifier: MIT */
/*
 * The jobs' computation in the tree-position benchmark (energy.c, floor.c):
 * busy work of exactly `cycles` (a multiple of 4) in _delay_loop_2's four
 * cycles per turn, interruptible everywhere. Inline at each call, whose
 * length is a constant: the loop folds away and a job costs its cycles
 * only, where a shared out-of-line copy did its 32-bit counting at run time
 * (about 30 cycles more per job when l_s and l_p differ), which the figures
 * charged to the kernel.
 */
#ifndef ENERGY_WORK_H
#define ENERGY_WORK_H

#include <stdint.h>
#include <util/delay_basic.h>

static inline __attribute__((always_inline)) void energy_work(uint32_t cycles)
{
    while (cycles >= 4UL * 60000UL) {
        _delay_loop_2(60000u);
        cycles -= 4UL * 60000UL;
    }
    if (cycles >= 4u) _delay_loop_2((uint16_t) (cycles / 4u));
}

#endif /* ENERGY_WORK_H */
