/* SPDX-License-Identifier: MIT */
/*
 * The simulation side of motet-simavr: load the image into libsimavr, wire
 * USART0 to stdout, inject external interrupts at exact cycles, stamp GPIO
 * edges with the cycle counter, count the cycles spent asleep, and stop on
 * the firmware's halt marker.
 *
 * Cycle stamps. An edge is stamped with avr->cycle when the port register
 * changes, i.e. the cycle at which the writing instruction started (simavr
 * adds an instruction's cycles after executing it). Every edge is stamped
 * the same way, so differences between edges are exact instruction cycles.
 *
 * The run step. After SEI or RETI the chip executes one more instruction
 * before it takes a pending interrupt; simavr 1.6 executes two. So "sei;
 * sleep; cli" with an interrupt pending would never take it in simavr
 * (SLEEP does not sleep then, and CLI comes first), where the chip wakes at
 * once and runs the interrupt. The harness runs the core with its own copy
 * of simavr's run step (avr_callback_run_raw()) that shortens the wait to
 * one instruction, on every MCU.
 *
 * Fidelity fixes for the ATmega128, on by default:
 *  - external SRAM: the ATmega128 addresses up to 60 KB of external SRAM
 *    once MCUCR.SRE is set. simavr 1.6 has no external memory interface, so
 *    the data space is allocated to 64 KB and the limit simavr checks
 *    (ramend) follows SRE. Images that never set SRE keep the 4 KB limit.
 *  - timer hold: a 16-bit timer stopped by clearing its clock-select bits
 *    keeps TCNTn on the chip; simavr 1.6 restarts it from 0. The harness
 *    remembers the value at the stop and writes it back at the restart.
 *  - interrupt flag registers (TIFR, ETIFR, EIFR): on the chip a flag
 *    clears when written 1 and a 0 leaves it alone. simavr 1.6 stores EIFR
 *    as written, and its TIFR handlers (three timers share TIFR) can cancel
 *    an interrupt whose flag was written 0 -- e.g. a Timer1 overflow pending
 *    while OCF1B is cleared. The harness gives these registers the chip's
 *    write-one-to-clear behaviour, cancelling exactly the vectors written.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "avr_extint.h"
#include "avr_ioport.h"
#include "avr_uart.h"
#include "boardlink.h"
#include "buslink.h"
#include "harness.h"
#include "logtap.h"
#include "profile.h"
#include "sim_avr.h"
#include "sim_core.h"
#include "sim_elf.h"
#include "sim_interrupts.h"
#include "sim_io.h"
#include "sim_irq.h"

/* ATmega128 data-space addresses used by the fidelity fixes. */
#define M128_EIFR     0x58
#define M128_TIFR     0x56
#define M128_ETIFR    0x7C
#define M128_MCUCR    0x55
#define M128_MCUCSR   0x54
#define M128_WDRF     0x08
#define M128_SRE      0x80
#define M128_RAMEND   0x10FF
#define XRAM_END      0xFFFF
#define CS_MASK       0x07
#define TIMEOUT_CHECK 0x3FFFu /* run-loop iterations between wall-clock checks */

/* A 16-bit timer whose count is held while its clock is stopped. */
typedef struct timer_hold {
    uint16_t tccrb, tcntl, tcnth;
    avr_io_write_t cs_write, tcnt_write;
    void *cs_param, *tcnt_wparam;
    avr_io_read_t tcnt_read;
    void *tcnt_rparam;
    uint16_t held;
} timer_hold_t;

/* A pin level change the harness drives (half of an injected pulse). */
typedef struct drive {
    uint64_t cycle;
    uint8_t line;
    uint8_t level;
} drive_t;

static avr_t *avr;
static const options_t *opt;
static result_t *res;
static FILE *trace;

static drive_t *drives;
static size_t n_drives, next_drive;
static avr_irq_t *line_irq[HARNESS_LINES];

static uint8_t pin_level[HARNESS_MAX_PINS];
static bool profiling; /* --profile, and the gate (if any) is open */
static bool sleeping;
static uint8_t sleep_mode; /* SM2:0 of the sleep in progress */

static avr_io_write_t mcucr_write;
static void *mcucr_param;
static timer_hold_t holds[2] = {
    {.tccrb = 0x4E, .tcntl = 0x4C, .tcnth = 0x4D}, /* Timer/Counter1 */
    {.tccrb = 0x8A, .tcntl = 0x88, .tcnth = 0x89}, /* Timer/Counter3 */
};

/* ---------------------------------------------------------------- logging */

/* simavr's own messages: errors only (crashes, bad addresses), on stderr. */
static void sim_logger(avr_t *a, const int level, const char *fmt, va_list ap)
{
    (void) a;
    if (level != LOG_ERROR) return;
    fputs("simavr: ", stderr);
    vfprintf(stderr, fmt, ap);
}

static void trace_event(uint64_t cycle, const char *name, unsigned level)
{
    if (trace) fprintf(trace, "%llu %s %u\n", (unsigned long long) cycle, name, level);
}

/* ------------------------------------------------------------------ USART0 */

static void uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void) irq;
    (void) param;
    putchar((int) (value & 0xFFu));
}

static void wire_uart(void)
{
    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    /* We print the bytes ourselves; and simavr's default usleep(1) on every
     * poll of the status register would make a polled console crawl. */
    flags &= ~(uint32_t) (AVR_UART_FLAG_STDIO | AVR_UART_FLAG_POLL_SLEEP);
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    avr_irq_t *out = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT);
    if (out) avr_irq_register_notify(out, uart_out, NULL);
}

/* ------------------------------------------------------------ GPIO edges */

static void pin_changed(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void) irq;
    unsigned i = (unsigned) (uintptr_t) param;
    uint8_t level = (uint8_t) (value & 1u); /* upper bits carry flags */
    if (level == pin_level[i]) return;      /* every PORT write notifies */
    pin_level[i] = level;
    res->edges++;
    char name[3] = {opt->pins[i].port, (char) ('0' + opt->pins[i].bit), 0};
    trace_event(avr->cycle, name, level);
}

static void gate_changed(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void) irq;
    (void) param;
    profiling = (value & 1u) != 0;
}

static int wire_pins(void)
{
    if (opt->profile_path && opt->profile_gated) {
        const trace_pin_t *g = &opt->profile_gate;
        avr_irq_t *irq = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(g->port), g->bit);
        if (!irq) return EXIT_ERROR;
        avr_irq_register_notify(irq, gate_changed, NULL);
    }
    profiling = opt->profile_path && !opt->profile_gated;
    for (unsigned i = 0; i < opt->n_pins; i++) {
        const trace_pin_t *p = &opt->pins[i];
        avr_irq_t *irq = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(p->port), p->bit);
        if (!irq) {
            fprintf(stderr, "motet-simavr: no pin %c%u on %s\n", p->port, p->bit, res->mcu);
            return EXIT_ERROR;
        }
        avr_irq_register_notify(irq, pin_changed, (void *) (uintptr_t) i);
    }
    return 0;
}

/* ------------------------------------------------------ injected interrupts */

/* INT0..3 are PD0..3, INT4..7 are PE4..7 on the ATmega128. */
static avr_irq_t *line_pin_irq(uint8_t line)
{
    char port = line < 4 ? 'D' : 'E';
    return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), line);
}

static int drive_cmp(const void *a, const void *b)
{
    const drive_t *x = a, *y = b;
    if (x->cycle != y->cycle) return x->cycle < y->cycle ? -1 : 1;
    return (int) x->level - (int) y->level; /* a release before a new pulse */
}

static void apply_drive(const drive_t *d)
{
    avr_raise_irq(line_irq[d->line], d->level);
    char name[5] = {'I', 'N', 'T', (char) ('0' + d->line), 0};
    trace_event(avr->cycle, name, d->level ? 0u : 1u); /* 1: pulse asserted */
    if (!d->level) res->injected++;
}

static avr_cycle_count_t drive_due(struct avr_t *a, avr_cycle_count_t when, void *param)
{
    (void) a;
    (void) param;
    while (next_drive < n_drives && drives[next_drive].cycle <= when)
        apply_drive(&drives[next_drive++]);
    return next_drive < n_drives ? drives[next_drive].cycle : 0;
}

/* Every injection becomes a falling edge at its cycle and a rising edge
 * `pulse` cycles later; the lines idle high (as with pull-ups). */
static int plan_injections(void)
{
    if (!opt->n_injects) return 0;
    drives = calloc(opt->n_injects * 2, sizeof *drives);
    if (!drives) return EXIT_ERROR;
    for (size_t i = 0; i < opt->n_injects; i++) {
        const inject_t *in = &opt->injects[i];
        drives[n_drives++] = (drive_t){in->cycle, in->line, 0};
        drives[n_drives++] = (drive_t){in->cycle + opt->pulse, in->line, 1};
    }
    qsort(drives, n_drives, sizeof *drives, drive_cmp);
    for (uint8_t line = 0; line < HARNESS_LINES; line++) {
        line_irq[line] = line_pin_irq(line);
        if (!line_irq[line]) return EXIT_ERROR;
    }
    for (size_t i = 0; i < n_drives; i++)
        if (drives[i].level) avr_raise_irq(line_irq[drives[i].line], 1);
    uint64_t first = drives[0].cycle > avr->cycle ? drives[0].cycle - avr->cycle : 1;
    avr_cycle_timer_register(avr, first, drive_due, NULL);
    return 0;
}

/* ---------------------------------------------------- external SRAM (XMEM) */

static void mcucr_written(struct avr_t *a, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void) param;
    if (mcucr_write)
        mcucr_write(a, addr, v, mcucr_param);
    else
        a->data[addr] = v;
    a->ramend = (v & M128_SRE) ? XRAM_END : M128_RAMEND;
}

static void wire_xram(void)
{
    avr_io_addr_t io = AVR_DATA_TO_IO(M128_MCUCR);
    mcucr_write = avr->io[io].w.c;
    mcucr_param = avr->io[io].w.param;
    avr->io[io].w.c = mcucr_written;
    avr->io[io].w.param = NULL;
}

/* ---------------------------------------------------- interrupt flags */

/* Write one to clear: each bit written 1 clears its flag and cancels the
 * interrupt it requests; bits written 0 change nothing. */
static void flags_written(struct avr_t *a, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void) param;
    avr_int_table_p table = &a->interrupts;
    for (int i = 0; i < table->vector_count; i++) {
        avr_int_vector_t *vec = table->vector[i];
        if (vec->raised.reg == addr && (v >> vec->raised.bit) & 1u) avr_clear_interrupt(a, vec);
    }
    a->data[addr] &= (uint8_t) ~v;
}

static void wire_flags(void)
{
    static const uint16_t regs[] = {M128_TIFR, M128_ETIFR, M128_EIFR};
    for (unsigned i = 0; i < sizeof regs / sizeof regs[0]; i++) {
        avr_io_addr_t io = AVR_DATA_TO_IO(regs[i]);
        avr->io[io].w.c = flags_written;
        avr->io[io].w.param = NULL;
    }
}

/* ------------------------------------------------------------ timer hold */

static bool hold_stopped(const timer_hold_t *h)
{
    return (avr->data[h->tccrb] & CS_MASK) == 0;
}

static uint16_t hold_read_running(timer_hold_t *h)
{
    uint8_t lo = h->tcnt_read ? h->tcnt_read(avr, h->tcntl, h->tcnt_rparam) : avr->data[h->tcntl];
    return (uint16_t) (lo | avr->data[h->tcnth] << 8);
}

/* simavr rebases the timer on a TCNT write; it maps 0xFFFF to 0, so that
 * value is written as 0xFFFE, which it places at the very end of its tick
 * (the next count follows within a cycle). */
static void hold_restore(timer_hold_t *h)
{
    uint16_t v = h->held == 0xFFFFu ? 0xFFFEu : h->held;
    avr->data[h->tcnth] = (uint8_t) (v >> 8);
    h->tcnt_write(avr, h->tcntl, (uint8_t) v, h->tcnt_wparam);
}

static void hold_cs_written(struct avr_t *a, avr_io_addr_t addr, uint8_t v, void *param)
{
    timer_hold_t *h = param;
    bool was_stopped = hold_stopped(h);
    bool stops = (v & CS_MASK) == 0;
    if (!was_stopped && stops) h->held = hold_read_running(h);
    h->cs_write(a, addr, v, h->cs_param);
    if (was_stopped && !stops) hold_restore(h);
}

static uint8_t hold_tcnt_read(struct avr_t *a, avr_io_addr_t addr, void *param)
{
    timer_hold_t *h = param;
    if (!hold_stopped(h)) return h->tcnt_read(a, addr, h->tcnt_rparam);
    a->data[h->tcntl] = (uint8_t) h->held;
    a->data[h->tcnth] = (uint8_t) (h->held >> 8); /* the high byte reads latched */
    return (uint8_t) h->held;
}

static void hold_tcnt_written(struct avr_t *a, avr_io_addr_t addr, uint8_t v, void *param)
{
    timer_hold_t *h = param;
    if (!hold_stopped(h)) {
        h->tcnt_write(a, addr, v, h->tcnt_wparam);
        return;
    }
    a->data[h->tcntl] = v;
    h->held = (uint16_t) (v | a->data[h->tcnth] << 8);
}

static void wire_hold(timer_hold_t *h)
{
    avr_io_addr_t cs = AVR_DATA_TO_IO(h->tccrb), cnt = AVR_DATA_TO_IO(h->tcntl);
    h->cs_write = avr->io[cs].w.c;
    h->cs_param = avr->io[cs].w.param;
    h->tcnt_write = avr->io[cnt].w.c;
    h->tcnt_wparam = avr->io[cnt].w.param;
    h->tcnt_read = avr->io[cnt].r.c;
    h->tcnt_rparam = avr->io[cnt].r.param;
    if (!h->cs_write || !h->tcnt_write || !h->tcnt_read) return; /* not a timer here */
    h->held = 0;
    avr->io[cs].w.c = hold_cs_written;
    avr->io[cs].w.param = h;
    avr->io[cnt].w.c = hold_tcnt_written;
    avr->io[cnt].w.param = h;
    avr->io[cnt].r.c = hold_tcnt_read;
    avr->io[cnt].r.param = h;
}

/* ------------------------------------------------------------- start-up */

/* -------------------------------------------------------- the run step */

/* simavr sets interrupt_state to -2 when SEI or RETI sets the I bit: two
 * more instructions before a pending interrupt is taken. */
#define SIMAVR_I_DELAY (-2)

/* simavr 1.6's avr_callback_run_raw(), step for step, with the chip's
 * one-instruction delay after SEI/RETI. */
static void run_step(avr_t *a)
{
    avr_flashaddr_t new_pc = a->pc;
    if (a->state == cpu_Running) {
        uint64_t c0 = a->cycle;
        avr_flashaddr_t pc = a->pc;
        bool counted = profiling; /* as the gate stood when the instruction began */
        new_pc = avr_run_one(a);
        if (counted) profile_add(pc, a->cycle - c0);
        logtap_step();
    }
    if (a->interrupt_state == SIMAVR_I_DELAY) a->interrupt_state = SIMAVR_I_DELAY + 1;
    avr_cycle_count_t how_long = avr_cycle_timer_process(a);
    a->pc = new_pc;
    if (a->state == cpu_Sleeping) {
        if (!a->sreg[S_I]) {
            a->state = cpu_Done; /* sleeping with interrupts off */
            return;
        }
        a->sleep(a, how_long);
        a->cycle += 1 + how_long;
    }
    if ((a->state == cpu_Running || a->state == cpu_Sleeping) && a->interrupt_state)
        avr_service_interrupts(a);
}

/* ---------------------------------------------------------------- sleep */

/* simavr calls this each time a sleeping core skips ahead to its next
 * cycle timer, then adds 1 + how_long to the cycle counter; the core may
 * enter and leave the sleep within one avr_run(). Its default paces the
 * skip to real time, which a measurement wants none of: here it is only
 * counted. */
static void sim_sleep(avr_t *a, avr_cycle_count_t how_long)
{
    if (!sleeping) {
        sleeping = true;
        res->sleeps++;
        sleep_mode = (a->data[M128_MCUCR] >> 2) & 0x7u; /* SM2 in bit 2, SM1:0 in 4:3 */
        sleep_mode = (uint8_t) ((sleep_mode & 1u) << 2 | sleep_mode >> 1);
        if (opt->trace_sleep) trace_event(a->cycle, "SLEEP", 1u + sleep_mode);
    }
    res->asleep += 1 + how_long;
    res->asleep_mode[sleep_mode] += 1 + how_long;
}

/* Called after every step: the sleep ended once the core runs again. */
static void sleep_check(int state)
{
    if (!sleeping || state == cpu_Sleeping) return;
    sleeping = false;
    if (opt->trace_sleep) trace_event(avr->cycle, "SLEEP", 0);
}

static bool is_atmega128(void)
{
    return strcmp(res->mcu, "atmega128") == 0;
}

static bool is_m128; /* is_atmega128(), for the run step */

static int make_core(elf_firmware_t *fw)
{
    snprintf(res->mcu, sizeof res->mcu, "%s",
             opt->mcu      ? opt->mcu
             : fw->mmcu[0] ? fw->mmcu
                           : "atmega128");
    avr = avr_make_mcu_by_name(res->mcu);
    if (!avr) {
        fprintf(stderr, "motet-simavr: simavr does not know the MCU '%s'\n", res->mcu);
        return EXIT_ERROR;
    }
    bool xram = opt->xram && is_atmega128();
    if (xram) avr->ramend = XRAM_END; /* allocate the whole data space */
    avr_init(avr);
    if (xram) avr->ramend = M128_RAMEND; /* until the firmware sets SRE */
    avr_load_firmware(avr, fw);
    res->freq = opt->freq ? opt->freq : fw->frequency ? fw->frequency : 8000000u;
    avr->frequency = res->freq;
    avr->run = run_step;
    avr->sleep = sim_sleep;
    avr->log = LOG_ERROR;
    if (xram) wire_xram();
    is_m128 = is_atmega128();
    if (is_m128) wire_flags();
    if (opt->timer_hold && is_atmega128())
        for (unsigned i = 0; i < sizeof holds / sizeof holds[0]; i++) wire_hold(&holds[i]);
    return 0;
}

/* The image as simavr read it: the profile keeps its symbol names, so it
 * lives as long as the run (free_firmware()). */
static elf_firmware_t fw;

static void free_firmware(void)
{
    free(fw.flash);
    free(fw.eeprom);
    free(fw.fuse);
    free(fw.lockbits);
    for (uint32_t i = 0; i < fw.symbolcount; i++) free(fw.symbol[i]);
    free(fw.symbol);
    memset(&fw, 0, sizeof fw);
}

static int load(void)
{
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(opt->elf, &fw) != 0) {
        fprintf(stderr, "motet-simavr: cannot load '%s' as an AVR ELF image\n", opt->elf);
        return EXIT_ERROR;
    }
    if (opt->profile_path && profile_init(&fw) != 0) return EXIT_ERROR;
    int err = make_core(&fw);
    if (!err) wire_uart();
    if (!err) err = wire_pins();
    if (!err) err = plan_injections();
    if (!err) err = boardlink_start(avr, opt);
    if (!err && opt->log_path &&
        logtap_open(opt->log_path, &opt->log_ring, avr,
                    opt->xram && is_m128 ? XRAM_END : avr->ramend, res->freq) != 0)
        err = EXIT_ERROR;
    if (!err && opt->bus_socket) err = buslink_start(avr, opt);
    return err;
}

/* ---------------------------------------------------------------- running */

double harness_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static uint16_t reg_pair(unsigned r)
{
    return (uint16_t) (avr->data[r] | avr->data[r + 1] << 8);
}

/* cpu_Done means "slept with interrupts off": was it port_halt()? */
static void read_halt(void)
{
    if (avr->data[HALT_REG_MAGIC] != HALT_MAGIC_LO ||
        avr->data[HALT_REG_MAGIC + 1] != HALT_MAGIC_HI) {
        res->end = RUN_STOPPED;
        return;
    }
    res->end = RUN_HALTED;
    res->status = (int16_t) reg_pair(HALT_REG_STATUS);
    res->stack_used = reg_pair(HALT_REG_STACK);
}

/* simavr 1.6 models the ATmega128's watchdog (avr_watchdog.c): WDTCR's
 * timed sequence arms it for 2048 << WDP cycles of a 128 kHz clock (16 ms
 * << WDP, the data sheet's 16 K << WDP cycles of 1 MHz within 2 %), WDR
 * restarts it, and on expiry it resets the core and sets MCUCSR.WDRF. The
 * harness counts a reset when WDRF rises; the AVR port clears the flags at
 * every boot, so each reset is seen. */
static bool wdrf_was;

/* True when the watchdog has just reset the core. */
static bool watchdog_fired(void)
{
    bool wdrf = is_m128 && (avr->data[M128_MCUCSR] & M128_WDRF);
    bool fired = wdrf && !wdrf_was;
    wdrf_was = wdrf;
    if (!fired) return false;
    res->wdt_resets++;
    res->wdt_cycle = avr->cycle;
    fprintf(stderr, "motet-simavr: the watchdog reset the core at cycle %llu (%.6f s)\n",
            (unsigned long long) avr->cycle, (double) avr->cycle / res->freq);
    return true;
}

/* One simavr step; true while the firmware keeps running. */
static bool step(void)
{
    int state = avr_run(avr);
    sleep_check(state);
    if (watchdog_fired() && opt->bus_socket) {
        res->end = RUN_WATCHDOG; /* no rejoining the bus: docs/simavr-harness.md */
        return false;
    }
    if (state == cpu_Done) {
        read_halt();
        return false;
    }
    if (state == cpu_Crashed) {
        res->end = RUN_CRASHED;
        return false;
    }
    return true;
}

/* On a device: run to each grant of the hub until it ends the run. */
static void lockstep_loop(void)
{
    uint64_t until;
    while (buslink_grant(&res->asleep, &until, &res->status))
        while (avr->cycle < until)
            if (!step()) return;
    res->end = RUN_ENDED;
}

static void run_loop(double start)
{
    if (opt->bus_socket) {
        lockstep_loop();
        return;
    }
    for (unsigned long n = 1;; n++) {
        if (!step()) return;
        if (opt->max_cycles && avr->cycle >= opt->max_cycles) {
            res->end = RUN_LIMIT;
            return;
        }
        if (opt->timeout > 0 && (n & TIMEOUT_CHECK) == 0 &&
            harness_now_seconds() - start > opt->timeout) {
            res->end = RUN_TIMEOUT;
            return;
        }
    }
}

int harness_run(const options_t *options, result_t *result)
{
    opt = options;
    res = result;
    memset(res, 0, sizeof *res);
    avr_global_logger_set(sim_logger);
    if (opt->trace_path) {
        trace = fopen(opt->trace_path, "w");
        if (!trace) {
            perror(opt->trace_path);
            return EXIT_ERROR;
        }
        fprintf(trace, "# motet-simavr trace: cycle name level (cycles at %s)\n", opt->elf);
    }
    int err = load();
    if (err) return err;
    double start = harness_now_seconds();
    run_loop(start);
    res->wall = harness_now_seconds() - start;
    boardlink_stop();
    res->cycles = avr->cycle;
    logtap_close();
    fflush(stdout);
    if (trace) fclose(trace);
    if (opt->profile_path) {
        char what[48] = "the whole run";
        if (opt->profile_gated)
            snprintf(what, sizeof what, "while %c%u is high", opt->profile_gate.port,
                     opt->profile_gate.bit);
        /* Per address first: profile_write() sorts the functions by cycles. */
        if (opt->profile_pc_path && profile_write_pcs(opt->profile_pc_path, what) != 0)
            return EXIT_ERROR;
        if (profile_write(opt->profile_path, what) != 0) return EXIT_ERROR;
    }
    avr_terminate(avr);
    free_firmware();
    return 0;
}
