/* SPDX-License-Identifier: MIT */
/*
 * The AVR port's bus driver: frames in and out through the module's bus
 * interface (avr_bus_if.h), a DMA peripheral with one interrupt line. The
 * frame format, CRC, flow control and retries are the kernel's and the
 * bus's (docs/bus.md); the driver only moves whole frames and answers for
 * the kernel. Under simavr the interface is the harness's, joined to the
 * hub in lock-step (docs/simavr-harness.md, "On a device").
 *
 * Time is the chip's: the kernel's encoding, CRC and handling run as
 * instructions and cost their real cycles; the copy is the interface's DMA
 * and costs the CPU nothing. A received frame's capture is the counter as
 * the interrupt is taken, which is as close to the frame's end as a driver
 * without capture hardware gets (a few cycles; a counter tick is 256).
 */
#include "motet/motet.h"

#if MOTET_BUS
#include "avr.h"
#include "avr_bus_if.h"
#include "motet/bus.h"

#define BUS_IF(reg) (*(volatile uint8_t *) (reg))

/* The receive buffer holds the longest frame this module takes: by
 * default any frame the kernel can send; an image that knows its traffic
 * passes the largest payload it receives (PORT_AVR_BUS_RX_PAYLOAD), at
 * least a description's. A longer frame is rejected by the interface, as
 * a corrupt one is: its sender tries again, gives up and is told
 * (MT_ERR_BUS_CORRUPT). */
#ifndef PORT_AVR_BUS_RX_PAYLOAD
#define PORT_AVR_BUS_RX_PAYLOAD MOTET_BUS_PAYLOAD_MAX
#endif
_Static_assert(PORT_AVR_BUS_RX_PAYLOAD >= MOTET_APP_DESC_MAX &&
                   PORT_AVR_BUS_RX_PAYLOAD <= MOTET_BUS_PAYLOAD_MAX,
               "the receive buffer takes a description and no more than the bus carries");

static uint8_t rx_frame[BUS_OVERHEAD + PORT_AVR_BUS_RX_PAYLOAD];
static uint8_t probe_answer[AVR_BUS_PROBE_ANSWER];
static bool tx_busy; /* the interface holds a frame until its TX_DONE */

static void bus_if_set(uint16_t addr, uint16_t len, uint8_t cmd)
{
    BUS_IF(AVR_BUS_IF_ADDR_LO) = (uint8_t) addr;
    BUS_IF(AVR_BUS_IF_ADDR_HI) = (uint8_t) (addr >> 8);
    BUS_IF(AVR_BUS_IF_LEN_LO) = (uint8_t) len;
    BUS_IF(AVR_BUS_IF_LEN_HI) = (uint8_t) (len >> 8);
    BUS_IF(AVR_BUS_IF_CMD) = cmd;
}

bool port_bus_send(const uint8_t *frame, uint16_t n)
{
    uint8_t irq = port_irq_save(); /* the interrupt sends too (from TX_DONE) */
    bool taken = !tx_busy;
    if (taken) {
        tx_busy = true;
        bus_if_set((uint16_t) (uintptr_t) frame, n, AVR_BUS_CMD_SEND);
    }
    port_irq_restore(irq);
    return taken;
}

/* One event per interrupt: the interface presents the next with a new edge. */
PORT_AVR_ISR(INT7_vect)
{
    uint8_t event = BUS_IF(AVR_BUS_IF_EVENT);
    if (event == AVR_BUS_EV_RX) {
        uint16_t n = (uint16_t) (BUS_IF(AVR_BUS_IF_LEN_LO) | BUS_IF(AVR_BUS_IF_LEN_HI) << 8);
        bus_rx_t verdict = bus_isr_rx(rx_frame, n, port_counter_read_irq_off());
        BUS_IF(AVR_BUS_IF_CMD) = (uint8_t) (AVR_BUS_CMD_RX_DONE | verdict);
    } else if (event == AVR_BUS_EV_TX_DONE) {
        port_bus_result_t result = (port_bus_result_t) BUS_IF(AVR_BUS_IF_RESULT);
        BUS_IF(AVR_BUS_IF_CMD) = AVR_BUS_CMD_EVENT_DONE;
        tx_busy = false;
        bus_isr_tx_done(result); /* may hand the next frame over at once */
    } else if (event == AVR_BUS_EV_PROBE) {
        /* Presented at the probe's cycle: the handler runs within a tick.
         * The kernel's time, not the 16-bit counter. */
        uint32_t local = timer_now();
        uint32_t global = timesync_global(local);
        for (uint8_t i = 0; i < 4; i++) {
            probe_answer[i] = (uint8_t) (local >> (8u * i));
            probe_answer[4 + i] = (uint8_t) (global >> (8u * i));
        }
        probe_answer[8] = timesync_synced() ? 1u : 0u;
        bus_if_set((uint16_t) (uintptr_t) probe_answer, sizeof probe_answer,
                   AVR_BUS_CMD_PROBE_DONE);
    }
}

mt_err_t port_bus_join(void)
{
    if (!(BUS_IF(AVR_BUS_IF_FLAGS) & AVR_BUS_FLAG_LINKED)) return MT_ERR_STATE;
    uint32_t modules = 0;
    for (uint8_t i = 0; i < 4; i++)
        modules |= (uint32_t) BUS_IF(AVR_BUS_IF_MODULES0 + i) << (8u * i);
    mt_err_t err = bus_start(BUS_IF(AVR_BUS_IF_MODULE), modules);
    if (err) return err;
    uint8_t irq = port_irq_save();
    tx_busy = false;
    DDRE &= (uint8_t) ~_BV(AVR_BUS_IRQ_LINE);
    EICRB = (uint8_t) ((EICRB & ~(3u << 6)) | _BV(ISC71)); /* falling edge */
    EIFR = _BV(INTF7);
    EIMSK |= _BV(INT7);
    /* Last: the interface presents what waited for us from here on. */
    bus_if_set((uint16_t) (uintptr_t) rx_frame, sizeof rx_frame, AVR_BUS_CMD_RXBUF);
    port_irq_restore(irq);
    return MT_OK;
}

bool port_bus_loader(void)
{
    return (BUS_IF(AVR_BUS_IF_FLAGS) & AVR_BUS_FLAG_LOADER) != 0;
}
#endif /* MOTET_BUS */
