/* SPDX-License-Identifier: MIT */
/*
 * The Cortex-M port's bus driver, for a module of a device run under QEMU
 * (docs/bus.md, "Emulated modules"). The bus interface is a mailbox in RAM
 * (port_cm_bus_if) that the lock-step adapter (tools/motetlib/qemu_module.py)
 * reads and writes through QEMU's qtest while the virtual CPU is parked,
 * one spare interrupt line, and a doorbell: a call of
 * port_cm_bus_doorbell(), where the adapter's TCG plugin parks the CPU so
 * that the adapter acts on the command at that instant. Frames, CRC, flow
 * control and retries are the kernel's; the driver only moves whole frames.
 *
 * Joining: JOIN with the doorbell, and the adapter fills in the module's
 * address, the device's modules and the flags (the mailbox is in .bss,
 * which start-up clears); READY once the kernel's bus is started.
 * Sending: the frame's address and length, SEND, the doorbell; the adapter
 * reads the frame out of RAM then (it stays put until TX_DONE, as
 * port_bus_send() promises). Receiving: the adapter writes the frame into
 * the mailbox and raises the line; the handler answers with the kernel's
 * verdict (RX_DONE), or takes the end of its own frame (EVENT_DONE), each
 * with the doorbell; the adapter then presents the next event, if any.
 * A time-sync probe (the hub measuring the sync error, docs/bus.md) is an
 * event too: the handler answers it with the kernel time and the global
 * time it makes of it (PROBE).
 */
#include "motet/motet.h"

#if MOTET_BUS
#include "cortex_m.h"
#include "motet/bus.h"

/* The mailbox's layout is the adapter's too: keep qemu_module.py in step. */
enum { CMD_NONE, CMD_SEND, CMD_RX_DONE, CMD_EVENT_DONE, CMD_READY, CMD_JOIN, CMD_PROBE };
enum { EV_NONE, EV_RX, EV_TX_DONE, EV_PROBE };
#define FLAG_LINKED 0x01u
#define FLAG_LOADER 0x02u

typedef struct cm_bus_if {
    uint32_t module;  /* adapter: this module's address */
    uint32_t modules; /* adapter: the device's modules, a mask */
    uint32_t flags;   /* adapter: FLAG_* */
    uint32_t event;   /* adapter: the event presented, EV_* */
    uint32_t result;  /* adapter: EV_TX_DONE's port_bus_result_t */
    uint32_t rx_len;  /* adapter: EV_RX's frame bytes */
    uint32_t cmd;     /* driver: CMD_* with the doorbell */
    uint32_t arg;     /* driver: CMD_RX_DONE's verdict */
    uint32_t tx_addr; /* driver: CMD_SEND's frame */
    uint32_t tx_len;
    uint32_t local;                  /* driver: CMD_PROBE's kernel time */
    uint32_t global;                 /* driver: CMD_PROBE's global time; arg: synced */
    uint8_t rx_frame[BUS_FRAME_MAX]; /* adapter: EV_RX's frame */
} cm_bus_if_t;

volatile cm_bus_if_t port_cm_bus_if;
static bool tx_busy; /* the interface holds a frame until its TX_DONE */

/* The adapter's plugin parks the CPU on entry, acts on `cmd`, resumes. */
__attribute__((noinline, used)) void port_cm_bus_doorbell(void)
{
    __asm__ volatile("" ::: "memory");
}

static void command(uint32_t cmd, uint32_t arg)
{
    port_cm_bus_if.arg = arg;
    port_cm_bus_if.cmd = cmd;
    port_cm_bus_doorbell();
    port_cm_bus_if.cmd = CMD_NONE;
}

bool port_bus_send(const uint8_t *frame, uint16_t n)
{
    port_irq_state_t s = port_irq_save(); /* the handler sends too (after TX_DONE) */
    bool taken = !tx_busy;
    if (taken) {
        tx_busy = true;
        port_cm_bus_if.tx_addr = (uint32_t) (uintptr_t) frame;
        port_cm_bus_if.tx_len = n;
        command(CMD_SEND, 0);
    }
    port_irq_restore(s);
    return taken;
}

static void bus_isr(void)
{
    uint32_t event = port_cm_bus_if.event;
    if (event == EV_RX) {
        bus_rx_t verdict = bus_isr_rx((const uint8_t *) port_cm_bus_if.rx_frame,
                                      (uint16_t) port_cm_bus_if.rx_len, port_counter_read());
        command(CMD_RX_DONE, verdict);
    } else if (event == EV_TX_DONE) {
        port_bus_result_t result = (port_bus_result_t) port_cm_bus_if.result;
        command(CMD_EVENT_DONE, 0);
        tx_busy = false;
        bus_isr_tx_done(result); /* may hand the next frame over at once */
    } else if (event == EV_PROBE) {
        /* Presented at the probe's tick: the handler runs within a tick. */
        uint32_t local = timer_now();
        port_cm_bus_if.local = local;
        port_cm_bus_if.global = timesync_global(local);
        command(CMD_PROBE, timesync_synced() ? 1u : 0u);
    }
}

mt_err_t port_bus_join(void)
{
    command(CMD_JOIN, 0); /* the adapter fills in module, modules and flags */
    if (!(port_cm_bus_if.flags & FLAG_LINKED)) return MT_ERR_STATE;
    mt_err_t err = bus_start((mt_module_t) port_cm_bus_if.module, port_cm_bus_if.modules);
    if (err) return err;
    tx_busy = false;
    port_cm_irq_attach(PORT_CM_BUS_IRQ, bus_isr);
    command(CMD_READY, 0); /* events may come from here on */
    return MT_OK;
}

bool port_bus_loader(void)
{
    return (port_cm_bus_if.flags & FLAG_LOADER) != 0;
}
#endif /* MOTET_BUS */
