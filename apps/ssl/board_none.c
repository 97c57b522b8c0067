/* SPDX-License-Identifier: MIT */
/*
 * board.h on a firmware module without sensors (the compute module of a
 * mixed device, on the Cortex-M3): no microphone, no temperature sensor,
 * no radio, so a task needing one refuses INIT there and says so. Time is
 * the chip's: board_work() charges nothing.
 */
#include "board.h"

bool board_has_mic(uint8_t ch)
{
    (void) ch;
    return false;
}

bool board_has_temp(void)
{
    return false;
}

bool board_has_radio(void)
{
    return false;
}

bool board_mic_read(uint8_t ch, uint32_t t_us, int16_t *out, uint16_t n)
{
    (void) ch;
    (void) t_us;
    (void) out;
    (void) n;
    return false;
}

bool board_temp_read(uint32_t t_us, int16_t *temp_q4)
{
    (void) t_us;
    (void) temp_q4;
    return false;
}

int32_t board_true_angle(uint32_t t_us, uint16_t n)
{
    (void) t_us;
    (void) n;
    return -1;
}

void board_work(const cost_t *c)
{
    (void) c;
}
