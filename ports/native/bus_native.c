/* SPDX-License-Identifier: MIT */
/*
 * The native module's bus interface: the link to the hub (tools/motetlib/
 * hub.py) over a Unix stream socket. Protocol and bus model: docs/bus.md.
 *
 * Every message is a u32 length (of what follows), a type letter and a
 * little-endian body. The module speaks first (HELLO), learns the device's
 * modules (WELCOME), and from then on the link is driven by the simulated
 * clock: before the clock moves, the grant hook sends ADVANCE(now, want)
 * and blocks until the hub answers with the events that fall due on the way
 * (EVENT: a frame received, the end of our own frame, a measurement probe)
 * and the time the clock may move to (GRANT); QUIT ends the run. Between
 * grants the module reports what it does, stamped with its own time: a frame
 * handed to the interface (TX), a received frame taken (RXDONE, with the
 * kernel's accept or reject), a probe answered (PROBE).
 *
 * The watchdog. A module whose handlers compute forever (a loop, or tasks
 * exchanging messages in zero simulated time) never asks for time again,
 * and every other module waits for it. The hub notices that it burns CPU
 * without asking and sends it WATCHDOG_SIGNAL; the handler answers STACK
 * with the task on top of its stack, so that the hub can stop the run
 * naming it. It only reads the kernel's state, and it writes only when the
 * main code is not using the socket, so that no message is torn.
 *
 * The hub only ever talks while the module waits in the hook, so the socket
 * is never read or written by two frames of code at once, and events arrive
 * strictly in the module's future: each becomes an interrupt on
 * NATIVE_BUS_LINE at its exact tick, and the interrupt takes every event that
 * is due, in order.
 *
 * CPU cost: copying a frame into the interface (port_bus_send) or out of it
 * (the receive interrupt) keeps the processor busy for frame_ns + n *
 * byte_ns, as a polled bus driver does; the wire itself is the hub's.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hub_link.h"
#include "motet/bus.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "motet/program.h"
#include "native.h"

#define LINK_VERSION    3u
#define WATCHDOG_SIGNAL SIGUSR2 /* the hub asks which task is running */
#define STACK_NAME_MAX  32u     /* bytes of a program name in STACK */
#define EVENTS_MAX      16      /* events between two interrupts; the hub sends few */

/* Message types. */
enum {
    MSG_HELLO = 'H',   /* module -> hub: u8 module, u32 version, u8 MOTET_BUS_RETRIES */
    MSG_ADVANCE = 'A', /* u64 now, u64 want, u8 sleeping */
    MSG_TX = 'T',      /* u64 now, frame */
    MSG_RXDONE = 'R',  /* u64 now, u8 verdict: 0 rejected, 1 accepted, 2 busy (bus_rx_t) */
    MSG_PROBE = 'P',   /* u64 now, u32 id, u32 local, u32 global, u8 synced */
    MSG_STATS = 'K',   /* u32 counters..., at the end of the run */
    MSG_STACK = 'S',   /* u64 now, u8 pid (MT_PID_NONE: none), u8 depth, program name */
    MSG_WELCOME = 'W', /* hub -> module: u32 modules */
    MSG_EVENT = 'E',   /* u64 at, u8 kind, body */
    MSG_GRANT = 'G',   /* u64 to */
    MSG_QUIT = 'Q'     /* u8 status */
};

typedef struct bus_event {
    uint64_t at;
    uint8_t kind;
    uint8_t result;               /* HUB_EV_TX_DONE */
    uint32_t value;               /* HUB_EV_RX: counter capture; HUB_EV_PROBE: probe id */
    bool *accepted;               /* HUB_EV_RX injected by a test */
    uint16_t n;                   /* HUB_EV_RX: frame bytes; HUB_EV_HOST: message bytes */
    uint8_t frame[BUS_FRAME_MAX]; /* HUB_EV_HOST: the host's message */
} bus_event_t;

static struct {
    int fd;
    native_bus_options_t opt;
    bool tx_busy;
    native_bus_tx_fn capture; /* tests: frames go here, not to a hub */
    bus_event_t events[EVENTS_MAX];
    uint8_t head, count;
    native_host_fn host; /* the module program's reader of host messages */
} L = {.fd = -1};

static uint8_t msg_buf[BUS_FRAME_MAX + 32];
/* Non-zero while the main code reads or writes the socket: the watchdog's
 * answer then waits for the next signal rather than tear a message. */
static volatile sig_atomic_t link_busy;

/* ---------------------------------------------------------- socket I/O */

static void link_fatal(const char *what)
{
    fprintf(stderr, "bus: module %u: %s\n", L.opt.module, what);
    port_halt(2);
}

static void write_all(const uint8_t *p, size_t n)
{
    if (!hub_link_write(L.fd, p, n)) link_fatal("hub link lost (write)");
}

static void read_all(uint8_t *p, size_t n)
{
    hub_link_status_t st = hub_link_read(L.fd, p, n);
    if (st == HUB_LINK_CLOSED) port_halt(3); /* the hub went away: the run is over */
    if (st != HUB_LINK_OK) link_fatal("hub link lost (read)");
}

/* Lay out one message in buf: length, type, the module's time, `body`;
 * returns its size. */
static size_t frame_msg(uint8_t *buf, uint8_t type, const uint8_t *body, size_t n)
{
    uint8_t *p = hub_link_put(buf, 1u + 8u + n, 4);
    *p++ = type;
    p = hub_link_put(p, port_native_time(), 8);
    memcpy(p, body, n);
    return (size_t) (p - buf) + n;
}

/* Send one message: type, the module's time, then `body`. */
static void send_msg(uint8_t type, const uint8_t *body, size_t n)
{
    link_busy++;
    write_all(msg_buf, frame_msg(msg_buf, type, body, n));
    link_busy--;
}

/* Read one message into msg_buf; returns its type, *n = body bytes. */
static uint8_t recv_msg(size_t *n)
{
    uint8_t hdr[5];
    link_busy++;
    read_all(hdr, sizeof hdr);
    size_t len = (size_t) hub_link_get(hdr, 4);
    if (len < 1 || len - 1 > sizeof msg_buf) link_fatal("bad message from the hub");
    *n = len - 1;
    read_all(msg_buf, *n);
    link_busy--;
    return hdr[4];
}

/* WATCHDOG_SIGNAL: answer STACK with the running task and its program's
 * name. Async-signal-safe: reads, a local buffer and write(2); a failed
 * write is left to the hub, which stops the run without the name. */
static void on_watchdog(int sig)
{
    (void) sig;
    if (link_busy || L.fd < 0) return;
    int saved_errno = errno;
    uint8_t body[2 + STACK_NAME_MAX], buf[sizeof body + 16];
    mt_pid_t pid = sched_current_pid();
    /* sched_task_program() probes the task table under the lock. Its
     * restore would take interrupts that came meanwhile, here inside a
     * signal handler: the flag is held around it and given back as it
     * was, what came left pending for the interrupted code's next enable. */
    sig_atomic_t irq_was_disabled = port_native_irq_disabled;
    port_native_irq_disabled = 1;
    const program_t *prog = pid == MT_PID_NONE ? NULL : sched_task_program(pid);
    port_native_irq_disabled = irq_was_disabled;
    size_t n = 0;
    body[n++] = pid;
    body[n++] = sched_stack_depth();
    for (const char *c = prog ? prog->name : ""; *c && n < sizeof body; c++)
        body[n++] = (uint8_t) *c;
    size_t len = frame_msg(buf, MSG_STACK, body, n);
    (void) hub_link_write(L.fd, buf, len); /* async-signal-safe: write(2) only */
    errno = saved_errno;
}

static void install_watchdog(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_watchdog;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(WATCHDOG_SIGNAL, &sa, NULL) != 0) link_fatal("cannot take the watchdog signal");
}

/* ------------------------------------------------------------- events */

static void push_event(const bus_event_t *e)
{
    if (L.count == EVENTS_MAX) link_fatal("too many bus events pending");
    bus_event_t *slot = &L.events[(L.head + L.count) % EVENTS_MAX];
    *slot = *e;
    L.count++;
    port_native_irq_schedule(NATIVE_BUS_LINE, e->at);
}

/* An EVENT message from the hub: always in our future, of a known kind,
 * with every field its kind has (hub_link_read_event()); anything else ends
 * the run before any of it is used (the hub and this module disagree about
 * the link). */
static void take_event(const uint8_t *body, size_t n)
{
    hub_link_event_t r;
    _Static_assert(PORT_BUS_UNREACHABLE + 1 == HUB_TX_RESULTS, "the link's results are the port's");
    if (!hub_link_read_event(body, n, BUS_FRAME_MAX, &r)) link_fatal("bad bus event from the hub");
    if (r.at <= port_native_time()) link_fatal("bus event in the past");
    bus_event_t e = {.at = r.at, .kind = r.kind, .result = r.result, .value = r.value};
    e.n = (uint16_t) r.n;
    if (r.n) memcpy(e.frame, r.data, r.n);
    push_event(&e);
}

/* CPU ticks to copy an n-byte frame to or from the interface. */
static uint32_t copy_ticks(uint16_t n)
{
    uint64_t ns = L.opt.frame_ns + (uint64_t) n * L.opt.byte_ns;
    return (uint32_t) ((ns * PORT_TICKS_PER_SECOND + 999999999u) / 1000000000u);
}

static void print_stats(void);

/* The grant hook: ask the hub, take its events, return its grant. */
static uint64_t grant(uint64_t now, uint64_t want, bool sleeping)
{
    (void) now;
    uint8_t body[9];
    hub_link_put(body, want, 8);
    body[8] = sleeping ? 1u : 0u;
    send_msg(MSG_ADVANCE, body, sizeof body);
    for (;;) {
        size_t n;
        uint8_t type = recv_msg(&n);
        if (type == MSG_EVENT) {
            take_event(msg_buf, n);
        } else if (type == MSG_GRANT && n == 8) {
            return hub_link_get(msg_buf, 8);
        } else if (type == MSG_QUIT) {
            int status = n ? msg_buf[0] : 0; /* read before STATS reuses the buffer */
            print_stats();
            port_halt(status);
        } else {
            link_fatal("unexpected message from the hub");
        }
    }
}

/* ---------------------------------------------------- the bus interrupt */

static void send_rxdone(bus_rx_t verdict)
{
    uint8_t b = (uint8_t) verdict;
    if (L.fd >= 0) send_msg(MSG_RXDONE, &b, 1);
}

static void answer_probe(const bus_event_t *e)
{
    /* The kernel time at the probe's tick, however late this runs. */
    uint32_t local = (uint32_t) (port_counter_read() - (port_native_time() - e->at));
    uint8_t body[13];
    uint8_t *p = hub_link_put(body, e->value, 4);
    p = hub_link_put(p, local, 4);
    p = hub_link_put(p, timesync_global(local), 4);
    *p = timesync_synced() ? 1u : 0u;
    send_msg(MSG_PROBE, body, sizeof body);
}

static void handle(bus_event_t *e)
{
    if (e->kind == HUB_EV_RX) {
        port_native_busy(copy_ticks(e->n)); /* the CPU reads the frame out */
        bus_rx_t verdict = bus_isr_rx(e->frame, e->n, (port_counter_t) e->value);
        if (e->accepted) *e->accepted = verdict == BUS_RX_ACCEPTED;
        send_rxdone(verdict);
    } else if (e->kind == HUB_EV_TX_DONE) {
        L.tx_busy = false;
        bus_isr_tx_done((port_bus_result_t) e->result);
    } else if (e->kind == HUB_EV_PROBE && L.fd >= 0) {
        answer_probe(e);
    } else if (e->kind == HUB_EV_HOST && L.host) {
        L.host(e->frame, e->n);
    }
}

void port_native_bus_on_host(native_host_fn fn)
{
    L.host = fn;
}

/* Take every event that is due, in order; work done on the way may make
 * more due (each also raised its own line, which then finds nothing). */
static void bus_isr(void)
{
    while (L.count > 0 && L.events[L.head].at <= port_native_time()) {
        handle(&L.events[L.head]);
        L.head = (uint8_t) ((L.head + 1u) % EVENTS_MAX);
        L.count--;
    }
}

/* ------------------------------------------------------------- port hook */

bool port_bus_send(const uint8_t *frame, uint16_t n)
{
    if (L.tx_busy || (L.fd < 0 && !L.capture)) return false;
    L.tx_busy = true;
    port_native_busy(copy_ticks(n)); /* the CPU writes the frame in */
    if (L.capture)
        L.capture(frame, n);
    else
        send_msg(MSG_TX, frame, n);
    return true;
}

/* ------------------------------------------------------ start and stop */

static void print_stats(void)
{
    const bus_stats_t *s = bus_stats();
    printf("bus: module %u sent %lu frames (%lu retransmitted, %lu given up, %lu unreachable), "
           "received %lu (%lu corrupt rejected, %lu duplicates, %lu undeliverable, "
           "%lu malformed dropped, %lu missed)\n",
           L.opt.module, (unsigned long) s->tx_frames, (unsigned long) s->tx_retransmits,
           (unsigned long) s->tx_given_up, (unsigned long) s->tx_unreachable,
           (unsigned long) s->rx_frames, (unsigned long) s->rx_corrupt,
           (unsigned long) s->rx_duplicates, (unsigned long) s->rx_undeliverable,
           (unsigned long) s->rx_bad, (unsigned long) s->rx_missed);
    uint32_t c[] = {s->tx_frames,      s->tx_bytes,         s->tx_retransmits, s->tx_given_up,
                    s->tx_unreachable, s->tx_queue_full,    s->rx_frames,      s->rx_corrupt,
                    s->rx_duplicates,  s->rx_undeliverable, s->tx_queue_high,  timesync_beacons(),
                    s->rx_bad,         s->rx_missed};
    uint8_t body[sizeof c], *p = body;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) p = hub_link_put(p, c[i], 4);
    fflush(stdout);
    if (L.fd >= 0) send_msg(MSG_STATS, body, sizeof body);
}

/* The retry limit goes along so that the hub, which sees only frames, can
 * tell a frame that will be sent again from one its sender gives up. */
static uint32_t handshake(void)
{
    uint8_t body[6];
    body[0] = L.opt.module;
    hub_link_put(body + 1, LINK_VERSION, 4);
    body[5] = MOTET_BUS_RETRIES;
    send_msg(MSG_HELLO, body, sizeof body);
    size_t n;
    if (recv_msg(&n) != MSG_WELCOME || n != 4) link_fatal("no welcome from the hub");
    return (uint32_t) hub_link_get(msg_buf, 4);
}

void port_native_bus_start(const native_bus_options_t *opt)
{
    L.opt = *opt;
    if (!opt->socket) return;
    if (port_native_realtime()) link_fatal("the bus link needs the simulated clock (--sim)");
    L.fd = hub_link_connect(opt->socket);
    if (L.fd < 0) {
        fprintf(stderr, "bus: module %u cannot reach the hub at %s: %s\n", opt->module, opt->socket,
                strerror(errno));
        port_halt(1); /* not 2: that status says it refused its arguments */
    }
    uint32_t modules = handshake();
    install_watchdog();
    L.tx_busy = false;
    L.head = L.count = 0;
    port_native_irq_attach(NATIVE_BUS_LINE, bus_isr);
    if (bus_start(opt->module, modules) != MT_OK) link_fatal("bad module address or set");
    if (opt->timesync_window) timesync_set_window(opt->timesync_window);
    port_native_set_grant_hook(grant);
}

bool port_native_bus_connected(void)
{
    return L.fd >= 0;
}

/* -------------------------------------------------------- tests: no hub */

void native_bus_reset(void)
{
    L.capture = NULL;
    L.tx_busy = false;
    L.head = L.count = 0;
}

void port_native_bus_capture(native_bus_tx_fn fn)
{
    L.capture = fn;
    L.tx_busy = false;
    L.head = L.count = 0;
    if (fn) port_native_irq_attach(NATIVE_BUS_LINE, bus_isr);
}

void port_native_bus_inject_rx(const uint8_t *frame, uint16_t n, uint64_t at, bool *accepted)
{
    bus_event_t e = {.at = at, .kind = HUB_EV_RX, .accepted = accepted, .n = n};
    if (n > BUS_FRAME_MAX) link_fatal("injected frame too long");
    memcpy(e.frame, frame, n);
    /* The capture: the counter at `at`, as the interface latches it. */
    e.value = (uint32_t) (port_counter_read() + (at - port_native_time()));
    push_event(&e);
}

void port_native_bus_inject_tx_done(uint8_t result, uint64_t at)
{
    push_event(&(bus_event_t){.at = at, .kind = HUB_EV_TX_DONE, .result = result});
}

/* ------------------------------------------------------------- options */

static void usage(const char *bad)
{
    fprintf(stderr,
            "bus: bad argument '%s'\n"
            "usage: [--bus SOCKET] [--module N] [--bus-frame-ns N] [--bus-byte-ns N]"
            " [--timesync-window N]\n",
            bad);
    exit(2);
}

static uint32_t number(const char *text, uint32_t max)
{
    char *end;
    if (!isdigit((unsigned char) text[0])) usage(text);
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno || *end || v > max) usage(text);
    return (uint32_t) v;
}

/* `--name VALUE` or `--name=VALUE`; advances *i past a separate value. */
static const char *value_of(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != '\0') return NULL;
    if (*i + 1 >= argc) usage(argv[*i]);
    return argv[++*i];
}

int port_native_bus_parse_args(int argc, char **argv, native_bus_options_t *opt)
{
    *opt = (native_bus_options_t){.socket = NULL};
    int kept = argc > 0 ? 1 : 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = value_of(argc, argv, &i, "--bus")))
            opt->socket = v;
        else if ((v = value_of(argc, argv, &i, "--module")))
            opt->module = (uint8_t) number(v, MOTET_BUS_MODULES - 1u);
        else if ((v = value_of(argc, argv, &i, "--bus-frame-ns")))
            opt->frame_ns = number(v, 100000000u);
        else if ((v = value_of(argc, argv, &i, "--bus-byte-ns")))
            opt->byte_ns = number(v, 100000000u);
        else if ((v = value_of(argc, argv, &i, "--timesync-window")))
            opt->timesync_window = (uint8_t) number(v, MOTET_TIMESYNC_WINDOW);
        else
            argv[kept++] = argv[i];
    }
    if (kept < argc) argv[kept] = NULL;
    return kept;
}
