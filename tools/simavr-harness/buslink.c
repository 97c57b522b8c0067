/* SPDX-License-Identifier: MIT */
/*
 * The harness on a device (buslink.h): the bus interface the AVR port's
 * driver programs (ports/avr/avr_bus_if.h) and the link to the hub, which
 * speaks the native modules' protocol (docs/bus.md, "Time-grant protocol")
 * with cycles for ticks.
 *
 * Lock-step. The core runs only up to the cycle the hub granted: a no-op
 * cycle timer at that cycle (the fence) keeps a sleeping core from skipping
 * past it. Then the harness asks again: asleep, it names the cycle of its
 * next timer (the hub leaves it alone until then, or until a frame comes);
 * running, it may act at any cycle and the hub grants it a short horizon
 * (the bus's lookahead). Each event the hub sends (a frame received, the
 * end of the frame sent) is due at an exact cycle, always in the core's
 * future; a cycle timer makes it arrive at the interface then, and the
 * interface presents one event at a time on INT7.
 *
 * What the core does between grants is reported stamped with its cycle: a
 * frame handed over (TX), a received frame taken with the kernel's verdict
 * (RXDONE), a time-sync probe's answer (PROBE: the kernel time and the
 * global time it makes of it), and each event's arrival (DELIVERED: the
 * cycle it came to the interface and the cycle it was due), so that the
 * hub can check the lock-step. Each request for time also says how many cycles the core has
 * slept so far: the hub's busy and asleep figures are the core's own.
 * Console output is flushed before every request, so the hub
 * reads each step's lines in order.
 */
#include "buslink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avr_bus_if.h"
#include "avr_ioport.h"
#include "hub_link.h"
#include "sim_cycle_timers.h"
#include "sim_io.h"
#include "sim_irq.h"

#define LINK_VERSION   3u
#define KERNEL_RETRIES 8u /* MOTET_BUS_RETRIES of the kernels this runs (config.h) */
#define FRAME_MAX      (12u + 60000u)
#define EVENTS_MAX     16u
#define FOREVER        UINT64_MAX

typedef struct bus_event {
    uint64_t due;
    uint8_t kind;
    uint8_t result;
    uint32_t probe; /* HUB_EV_PROBE: its id */
    uint16_t n;
    uint8_t frame[FRAME_MAX]; /* HUB_EV_RX */
} bus_event_t;

/* The hub sends each module's events in the order they are due, so one
 * ring holds them all: the first `arrived` of them are at the interface
 * (the head is presented, if `presenting`), the others wait for their
 * cycle. */
static struct {
    avr_t *avr;
    int fd;
    avr_irq_t *line;
    uint16_t rx_addr, rx_cap;
    bus_event_t ev[EVENTS_MAX];
    unsigned head, count, arrived;
    bool presenting;
} B = {.fd = -1};

static uint8_t msg[FRAME_MAX + 32];

/* ------------------------------------------------------------- the link */

static void link_fatal(const char *what)
{
    fprintf(stderr, "motet-simavr: bus: %s\n", what);
    exit(EXIT_ERROR);
}

static void write_all(const uint8_t *p, size_t n)
{
    if (!hub_link_write(B.fd, p, n)) link_fatal("hub link lost (write)");
}

static bool read_all(uint8_t *p, size_t n)
{
    hub_link_status_t st = hub_link_read(B.fd, p, n);
    if (st == HUB_LINK_BROKEN) link_fatal("hub link lost (read)");
    return st == HUB_LINK_OK; /* closed: the run is over */
}

/* One message: length, type, the core's cycle, body. */
static void send_msg(char type, const uint8_t *body, size_t n)
{
    uint8_t head[13];
    hub_link_put(head, 1u + 8u + n, 4);
    head[4] = (uint8_t) type;
    hub_link_put(head + 5, B.avr->cycle, 8);
    write_all(head, sizeof head);
    if (n) write_all(body, n);
}

/* One message from the hub into msg: its type, *n = body bytes; 0 when the
 * hub closed the link. */
static char recv_msg(size_t *n)
{
    uint8_t head[5];
    if (!read_all(head, sizeof head)) return 0;
    size_t len = (size_t) hub_link_get(head, 4);
    if (len < 1 || len - 1 > sizeof msg) link_fatal("bad message from the hub");
    *n = len - 1;
    if (!read_all(msg, *n)) return 0;
    return (char) head[4];
}

/* ------------------------------------------------------- the interface */

static void reg_set16(uint16_t lo_addr, uint16_t v)
{
    B.avr->data[lo_addr] = (uint8_t) v;
    B.avr->data[lo_addr + 1] = (uint8_t) (v >> 8);
}

static uint16_t reg_get16(uint16_t lo_addr)
{
    return (uint16_t) (B.avr->data[lo_addr] | B.avr->data[lo_addr + 1] << 8);
}

static void drop_head(void)
{
    B.head = (B.head + 1u) % EVENTS_MAX;
    B.count--;
    B.arrived--;
}

/* Present the oldest event that arrived, if none is presented: its
 * registers, the frame in the driver's buffer, INT7 low. Until the driver
 * has given its buffer (RXBUF: it has booted and joined the bus) events
 * wait, as a frame waits in a receive buffer nobody has read: the hub's
 * acknowledgement timeout bounds the wait. */
static void present_next(void)
{
    while (!B.presenting && B.arrived > 0 && B.rx_addr != 0) {
        bus_event_t *e = &B.ev[B.head];
        avr_t *avr = B.avr;
        if (e->kind == HUB_EV_RX && e->n > B.rx_cap) {
            /* Too long for the driver's buffer: the interface rejects it. */
            uint8_t verdict = 0;
            send_msg('R', &verdict, 1);
            drop_head();
            continue;
        }
        if (e->kind == HUB_EV_RX) {
            memcpy(avr->data + B.rx_addr, e->frame, e->n);
            reg_set16(AVR_BUS_IF_LEN_LO, e->n);
            avr->data[AVR_BUS_IF_EVENT] = AVR_BUS_EV_RX;
        } else if (e->kind == HUB_EV_TX_DONE) {
            avr->data[AVR_BUS_IF_RESULT] = e->result;
            avr->data[AVR_BUS_IF_EVENT] = AVR_BUS_EV_TX_DONE;
        } else {
            avr->data[AVR_BUS_IF_EVENT] = AVR_BUS_EV_PROBE;
        }
        B.presenting = true;
        avr_raise_irq(B.line, 0);
    }
}

/* The driver answered the event presented: release the line, drop it. */
static void event_taken(uint8_t kind)
{
    if (!B.presenting || B.ev[B.head].kind != kind) return; /* a stray command */
    drop_head();
    B.presenting = false;
    B.avr->data[AVR_BUS_IF_EVENT] = AVR_BUS_EV_NONE;
    avr_raise_irq(B.line, 1);
    present_next();
}

static void send_frame(void)
{
    avr_t *avr = B.avr;
    uint16_t addr = reg_get16(AVR_BUS_IF_ADDR_LO), n = reg_get16(AVR_BUS_IF_LEN_LO);
    if ((uint32_t) addr + n > (uint32_t) avr->ramend + 1u) {
        fprintf(stderr, "motet-simavr: bus: frame of %u bytes at 0x%04x is outside SRAM\n", n,
                addr);
        return;
    }
    send_msg('T', avr->data + addr, n);
}

/* The answer to the probe presented: u32 id, then the driver's 9 bytes. */
static void probe_done(void)
{
    avr_t *avr = B.avr;
    uint16_t addr = reg_get16(AVR_BUS_IF_ADDR_LO), n = reg_get16(AVR_BUS_IF_LEN_LO);
    if (n != AVR_BUS_PROBE_ANSWER || (uint32_t) addr + n > (uint32_t) avr->ramend + 1u) {
        fprintf(stderr, "motet-simavr: bus: a probe answer of %u bytes at 0x%04x, not %u\n", n,
                addr, AVR_BUS_PROBE_ANSWER);
    } else {
        uint8_t body[4 + AVR_BUS_PROBE_ANSWER];
        hub_link_put(body, B.ev[B.head].probe, 4);
        memcpy(body + 4, avr->data + addr, n);
        send_msg('P', body, sizeof body);
    }
    event_taken(HUB_EV_PROBE);
}

static void command(struct avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void) addr;
    (void) param;
    if (v == AVR_BUS_CMD_SEND) {
        send_frame();
    } else if (v == AVR_BUS_CMD_RXBUF) {
        B.rx_addr = reg_get16(AVR_BUS_IF_ADDR_LO);
        B.rx_cap = reg_get16(AVR_BUS_IF_LEN_LO);
        if ((uint32_t) B.rx_addr + B.rx_cap > (uint32_t) avr->ramend + 1u) B.rx_cap = 0;
        present_next();
    } else if (v == AVR_BUS_CMD_EVENT_DONE) {
        event_taken(HUB_EV_TX_DONE);
    } else if (v == AVR_BUS_CMD_PROBE_DONE && B.presenting && B.ev[B.head].kind == HUB_EV_PROBE) {
        probe_done();
    } else if ((v & 0xF0u) == AVR_BUS_CMD_RX_DONE && B.presenting &&
               B.ev[B.head].kind == HUB_EV_RX) {
        uint8_t verdict = (uint8_t) (v & 0x0Fu);
        send_msg('R', &verdict, 1);
        event_taken(HUB_EV_RX);
    }
}

/* ------------------------------------------------------------ events */

/* A cycle timer: the event reaches the interface at its cycle. The hub
 * hears when, to check that lock-step kept every event in the future. */
static avr_cycle_count_t event_due(struct avr_t *avr, avr_cycle_count_t when, void *param)
{
    (void) avr;
    (void) when;
    (void) param; /* each event's own slot, only to keep the timers apart */
    const bus_event_t *e = &B.ev[(B.head + B.arrived) % EVENTS_MAX]; /* due in order */
    uint8_t body[9];
    hub_link_put(body, e->due, 8);
    body[8] = e->kind;
    send_msg('D', body, sizeof body);
    B.arrived++;
    present_next();
    return 0;
}

/* An EVENT from the hub: u64 due, u8 kind, body (a frame, a result, a
 * probe's id). */
static void take_event(const uint8_t *body, size_t n)
{
    hub_link_event_t r;
    /* A host's message is for native modules' programs only. */
    if (!hub_link_read_event(body, n, FRAME_MAX, &r) || r.kind == HUB_EV_HOST)
        link_fatal("bad bus event from the hub");
    if (B.count == EVENTS_MAX) link_fatal("too many bus events pending");
    bus_event_t *e = &B.ev[(B.head + B.count) % EVENTS_MAX];
    e->due = r.at;
    e->kind = r.kind;
    e->result = r.result;
    e->probe = r.kind == HUB_EV_PROBE ? r.value : 0u;
    e->n = (uint16_t) r.n; /* a frame's, after the capture, which the driver takes itself */
    if (r.n) memcpy(e->frame, r.data, r.n);
    B.count++;
    uint64_t now = B.avr->cycle;
    avr_cycle_timer_register(B.avr, e->due > now ? e->due - now : 1u, event_due, e);
}

/* ------------------------------------------------------------ the grant */

/* The fence at the grant's cycle. simavr runs the cycle timers after each
 * instruction and then lets a sleeping core skip to the next timer due: a
 * SLEEP ending on the fence's cycle would fire it and skip straight on to
 * the next peripheral timer (a Timer1 overflow two seconds on), past the
 * grant. So once due the fence stays one cycle ahead until the grant is
 * over (buslink_grant() cancels it): a sleeping core stops a cycle or two
 * past the grant, the most the hub allows for an instruction. */
static avr_cycle_count_t fence(struct avr_t *avr, avr_cycle_count_t when, void *param)
{
    (void) avr;
    (void) param;
    return when + 1u;
}

/* Asleep: the cycle of the earliest cycle timer (a peripheral's, or an
 * event's), FOREVER without one. Running: the next cycle. */
static uint64_t want(bool sleeping)
{
    if (!sleeping) return B.avr->cycle + 1u;
    uint64_t first = FOREVER;
    for (avr_cycle_timer_slot_p t = B.avr->cycle_timers.timer; t; t = t->next)
        if (t->when < first) first = t->when;
    return first;
}

/* A grant past the wake-up a sleeping core asked for: the module was
 * powered off meanwhile (docs/bus.md, "The bus model": its clock ran on, it
 * executed nothing and was not woken by its own timers). The core's clock
 * jumps to the grant and what fell due meanwhile is taken late, at once;
 * the cycles skipped go with the asleep ones, from which the hub takes the
 * time off. Returns them. */
static uint64_t power_on(uint64_t asked, uint64_t until)
{
    uint64_t now = B.avr->cycle;
    if (B.avr->state != cpu_Sleeping || asked <= now || until <= asked) return 0;
    /* One cycle short of the grant: the step to it takes what is due. */
    B.avr->cycle = until - 1u;
    return until - 1u - now;
}

bool buslink_grant(uint64_t *asleep, uint64_t *until, int *status)
{
    fflush(stdout);
    /* The fence is not a reason to wake: a sleeping core skips one cycle
     * past it (simavr adds the cycle of SLEEP itself), leaving it pending. */
    avr_cycle_timer_cancel(B.avr, fence, NULL);
    bool sleeping = B.avr->state == cpu_Sleeping;
    uint64_t asked = want(sleeping);
    uint8_t body[17];
    hub_link_put(body, asked, 8);
    body[8] = sleeping ? 1u : 0u;
    hub_link_put(body + 9, *asleep, 8);
    send_msg('A', body, sizeof body);
    for (;;) {
        size_t n;
        char type = recv_msg(&n);
        if (type == 'E') {
            take_event(msg, n);
        } else if (type == 'G' && n == 8) {
            *until = hub_link_get(msg, 8);
            *asleep += power_on(asked, *until);
            if (*until > B.avr->cycle)
                avr_cycle_timer_register(B.avr, *until - B.avr->cycle, fence, NULL);
            return true;
        } else if (type == 'Q' || type == 0) {
            *status = type == 'Q' && n ? msg[0] : 0;
            return false;
        } else {
            link_fatal("unexpected message from the hub");
        }
    }
}

/* ------------------------------------------------------------- start */

int buslink_start(avr_t *core, const options_t *opt)
{
    B.avr = core;
    B.line = avr_io_getirq(core, AVR_IOCTL_IOPORT_GETIRQ('E'), AVR_BUS_IRQ_LINE);
    if (!B.line) {
        fprintf(stderr, "motet-simavr: bus: no pin PE%u for the interrupt line\n",
                AVR_BUS_IRQ_LINE);
        return EXIT_ERROR;
    }
    B.fd = hub_link_connect(opt->bus_socket);
    if (B.fd < 0) {
        fprintf(stderr, "motet-simavr: bus: module %u cannot reach the hub at %s: %s\n",
                opt->bus_module, opt->bus_socket, strerror(errno));
        return EXIT_ERROR;
    }
    uint8_t hello[6];
    hello[0] = opt->bus_module;
    hub_link_put(hello + 1, LINK_VERSION, 4);
    hello[5] = KERNEL_RETRIES;
    send_msg('H', hello, sizeof hello);
    size_t n;
    if (recv_msg(&n) != 'W' || n != 4) {
        fprintf(stderr, "motet-simavr: bus: no welcome from the hub\n");
        return EXIT_ERROR;
    }
    core->data[AVR_BUS_IF_MODULE] = opt->bus_module;
    for (unsigned i = 0; i < 4; i++) core->data[AVR_BUS_IF_MODULES0 + i] = msg[i];
    core->data[AVR_BUS_IF_FLAGS] =
        (uint8_t) (AVR_BUS_FLAG_LINKED | (opt->bus_loader ? AVR_BUS_FLAG_LOADER : 0));
    core->data[AVR_BUS_IF_EVENT] = AVR_BUS_EV_NONE;
    avr_register_io_write(core, AVR_BUS_IF_CMD, command, NULL);
    avr_raise_irq(B.line, 1); /* the line idles high */
    return 0;
}
