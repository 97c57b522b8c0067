/* SPDX-License-Identifier: MIT */
/*
 * board.h on an ATmega128 module of a device: the sensors through the
 * board interface (ports/avr/avr_board_if.h), answered on the host by
 * ssl_board (board_host.h). Time is the chip's: board_work() charges
 * nothing, the code costs the cycles it executes.
 */
#include <avr/io.h>
#include <string.h>

#include "avr_board_if.h"
#include "board.h"
#include "board_host.h"
#include "motet/port.h"

#define BOARD_REG(addr) _SFR_MEM8(addr)

static uint8_t sensors;
static bool sensors_known;

static void put_u32(uint8_t *p, uint32_t v)
{
    for (uint8_t i = 0; i < 4; i++) p[i] = (uint8_t) (v >> (8u * i));
}

/* One request; the answer's length, or -1 if the call failed. With
 * interrupts held off: a task preempting this one may call too, and the
 * registers hold one call at a time (it completes within the STS). */
static int32_t call(const uint8_t *req, uint8_t n, void *answer, uint16_t cap)
{
    port_irq_state_t s = port_irq_save();
    BOARD_REG(AVR_BOARD_IF_REQ_LO) = (uint8_t) (uintptr_t) req;
    BOARD_REG(AVR_BOARD_IF_REQ_HI) = (uint8_t) ((uintptr_t) req >> 8);
    BOARD_REG(AVR_BOARD_IF_REQ_LEN) = n;
    BOARD_REG(AVR_BOARD_IF_ANS_LO) = (uint8_t) (uintptr_t) answer;
    BOARD_REG(AVR_BOARD_IF_ANS_HI) = (uint8_t) ((uintptr_t) answer >> 8);
    BOARD_REG(AVR_BOARD_IF_ANS_LEN_LO) = (uint8_t) cap;
    BOARD_REG(AVR_BOARD_IF_ANS_LEN_HI) = (uint8_t) (cap >> 8);
    BOARD_REG(AVR_BOARD_IF_CMD) = AVR_BOARD_CMD_CALL;
    uint8_t status = BOARD_REG(AVR_BOARD_IF_STATUS);
    uint16_t len =
        (uint16_t) (BOARD_REG(AVR_BOARD_IF_ANS_LEN_LO) | BOARD_REG(AVR_BOARD_IF_ANS_LEN_HI) << 8);
    port_irq_restore(s);
    return status == AVR_BOARD_OK ? (int32_t) len : -1;
}

static uint8_t board_sensors(void)
{
    if (!sensors_known) {
        static const uint8_t req[1] = {SSL_BOARD_SENSORS};
        uint8_t mask;
        sensors = call(req, sizeof req, &mask, 1) == 1 ? mask : 0;
        sensors_known = true;
    }
    return sensors;
}

bool board_has_mic(uint8_t ch)
{
    return ch < SRP_MICS && (board_sensors() >> ch & 1u);
}

bool board_has_temp(void)
{
    return board_sensors() & SSL_BOARD_HAS_TEMP;
}

bool board_has_radio(void)
{
    return board_sensors() & SSL_BOARD_HAS_RADIO;
}

bool board_mic_read(uint8_t ch, uint32_t t_us, int16_t *out, uint16_t n)
{
    uint8_t req[8] = {SSL_BOARD_MIC, ch};
    put_u32(req + 2, t_us);
    req[6] = (uint8_t) n;
    req[7] = (uint8_t) (n >> 8);
    return call(req, sizeof req, out, (uint16_t) (n * sizeof *out)) == (int32_t) (n * sizeof *out);
}

bool board_temp_read(uint32_t t_us, int16_t *temp_q4)
{
    uint8_t req[5] = {SSL_BOARD_TEMP};
    put_u32(req + 1, t_us);
    return call(req, sizeof req, temp_q4, sizeof *temp_q4) == (int32_t) sizeof *temp_q4;
}

int32_t board_true_angle(uint32_t t_us, uint16_t n)
{
    uint8_t req[7] = {SSL_BOARD_TRUTH};
    put_u32(req + 1, t_us);
    req[5] = (uint8_t) n;
    req[6] = (uint8_t) (n >> 8);
    int32_t angle;
    return call(req, sizeof req, &angle, sizeof angle) == (int32_t) sizeof angle ? angle : -1;
}

void board_work(const cost_t *c)
{
    (void) c;
}
