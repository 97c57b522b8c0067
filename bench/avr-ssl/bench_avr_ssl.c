/* SPDX-License-Identifier: MIT */
/*
 * A sensing module's share of the SSL chain on the ATmega128, in cycles
 * under simavr (tools/motetlib/bench_ssl_avr.py): sampling a 512-sample
 * block, the Hann window, the Q15 512-point real FFT, SC on the band and
 * the verdict to the vote, whose decision comes back (on the device these
 * two messages cross the bus; here the vote runs on the same module). The
 * same DSP code as apps/ssl (dsp/), the same blocks in both builds; every
 * build prints the blocks voted sound ("sound <block>", then "of <blocks>")
 * and the script checks that they are the same.
 *
 * "Sampling" generates the block with a 16-bit xorshift (standing in for
 * the ADC reads; every other block 24 dB louder), so no table of samples
 * takes RAM.
 *
 * Marker pins, stamped to the cycle by the harness: PA1 high over blocks
 * WARMUP .. WARMUP + N1 - 1, PA3 over the next N2 blocks; PA2 and PA4 over
 * MEM_N and 2 * MEM_N passes of the Motet build's heap operations of a
 * block (mem_alloc of the spectrum, mem_free). Per block: standalone
 * (window(PA3) - window(PA1)) / (N2 - N1); Motet, the same of the windows
 * less the cycles the driver's spin loop (spin_until_set) got in them (the
 * harness's profile gated on each pin), i.e. the stolen time; heap
 * operations (window(PA4) - window(PA2)) / MEM_N.
 *
 * BENCH_SSL_STANDALONE: the chain as plain calls. Otherwise the Motet
 * version as apps/ssl/tasks_ssl.c does it: a periodic timer drives mic
 * (a mem_alloc()'d block of samples, sent to fft with MSG_HEAP); fft
 * takes it, windows and transforms it in place and sends it on to sc up to
 * the band's top; sc takes it, runs SC, sends its
 * verdict to vote; vote decides and sends the decision back; sc frees the
 * band (no HT on this module). A driver task below them spins.
 */
#include <avr/io.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dsp/fft.h"
#include "dsp/sc.h"
#include "dsp/vote.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "ssl_app.h"

#define WARMUP 8u /* more than SC's four training blocks */
#define N1     8u
#define N2     16u
#define BLOCKS (WARMUP + N1 + N2)
#define MEM_N  32u

#define MARK_UP(bit) __asm__ volatile("sbi %0, %1" ::"I"(_SFR_IO_ADDR(PORTA)), "I"(bit) : "memory")
#define MARK_DOWN(bit)                                                                             \
    __asm__ volatile("cbi %0, %1" ::"I"(_SFR_IO_ADDR(PORTA)), "I"(bit) : "memory")
#define PIN_FIRST  1
#define PIN_MEM    2
#define PIN_SECOND 3
#define PIN_MEM2   4

static const sc_config_t sc_cfg = SSL_SC_CONFIG;
static uint32_t noise[SSL_NBINS];
static sc_state_t sc;
static vote_t votes;
static uint8_t sound[BLOCKS / 8u + 1u]; /* bit per block: voted sound */

/* Block `block`'s samples (ADC codes): xorshift noise, +-128 codes, or
 * +-2048 in every odd block (a loud broadband source). Neither inlined nor
 * cloned: it stands for the board's ADC read (board_mic_read() in
 * apps/ssl), one function both builds call, so that where the compiler
 * would inline it (into mic or into the standalone's loop) or specialise
 * it (for the standalone's static buffer: about 1,000 cycles a block
 * faster) does not show as overhead. */
__attribute__((noinline, noclone)) static void sample_block(int16_t *out, uint16_t block)
{
    uint16_t x = (uint16_t) (0xACE1u + block * 0x9E37u);
    for (uint16_t i = 0; i < SSL_N; i++) {
        x ^= (uint16_t) (x << 7);
        x ^= (uint16_t) (x >> 9);
        x ^= (uint16_t) (x << 8);
        int16_t v = (int16_t) ((int16_t) x >> 8);
        out[i] = (block & 1u) ? (int16_t) (v * 16) : v;
    }
}

/* A line on the console (USART0). */
static void say(const char *fmt, ...)
{
    char line[32];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) port_console_write(line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
}

static void note_decision(uint16_t block, bool is_sound)
{
    if (is_sound && block < BLOCKS) sound[block / 8u] |= (uint8_t) (1u << (block % 8u));
}

static unsigned print_sound(void)
{
    unsigned n = 0;
    for (uint16_t b = 0; b < BLOCKS; b++) {
        if (!(sound[b / 8u] & (1u << (b % 8u)))) continue;
        say("sound %u\n", b);
        n++;
    }
    say("of %u\n", BLOCKS);
    return n;
}

#if BENCH_SSL_STANDALONE

static cq15_t buf[SSL_N / 2]; /* samples, then the spectrum in place */
static uint16_t next_block;

__attribute__((noinline)) static void one_block(void)
{
    int16_t *samples = (int16_t *) (void *) buf;
    uint16_t block = next_block++;
    sample_block(samples, block);
    fft_window_hann(samples, SSL_LOG2N, SSL_PRESCALE);
    uint8_t e = fft_real(samples, SSL_LOG2N, NULL);
    bool is_sound;
    sc_process(&sc, &sc_cfg, buf + SSL_BIN_LO, e, &is_sound);
    vote_result_t r = vote_add(&votes, block, 0, is_sound, 1, 1);
    note_decision(block, r == VOTE_SOUND);
}

int main(void)
{
    motet_boot();
    DDRA = 0xFF;
    sc_init(&sc, noise, &sc_cfg);
    for (unsigned i = 0; i < WARMUP; i++) one_block();
    MARK_UP(PIN_FIRST);
    for (unsigned i = 0; i < N1; i++) one_block();
    MARK_DOWN(PIN_FIRST);
    MARK_UP(PIN_SECOND);
    for (unsigned i = 0; i < N2; i++) one_block();
    MARK_DOWN(PIN_SECOND);
    unsigned n = print_sound();
    say(n > 0 && n < BLOCKS ? "done\n" : "FAILED\n");
    port_halt(n > 0 && n < BLOCKS ? 0 : 1);
    return 0;
}

#else /* the Motet build */

enum { PID_DRIVER = 0x20, PID_MIC, PID_SC, PID_VOTE, PID_FFT };
enum { PRIO_DRIVER = 1, PRIO_SSL = 2 }; /* the SSL tasks share one, as in ssl_single.toml */
/* A block every 1.6 million cycles (200 ms at 8 MHz, 400 ms at 4): the
 * chain takes about 1.14 million, so each block's expiry comes after the
 * block before has ended, at either clock. A period fixed in time would
 * come while the chain still runs at 4 MHz (285 ms), and mic's next
 * expiry, queued ahead of the decision that frees the last spectrum, would
 * find the heap full. */
#define PERIOD_US    (1600000u / (F_CPU / 1000000u))
#define SPECTRUM_LEN ((uint16_t) (sizeof(ssl_spectrum_t) + SSL_N * sizeof(int16_t)))

static uint16_t mic_block;
static ssl_spectrum_t *held;
static volatile uint8_t wake;
static volatile uint16_t done_blocks, wake_at;
static volatile uint8_t failures; /* an API call failed: the driver gives up */

/* Hand a heap block on along output 0; on failure it is still ours. */
static mt_err_t send_block(ssl_spectrum_t *sp, uint16_t len)
{
    mt_err_t err = sched_send(0, sp, len, MSG_HEAP);
    if (err) {
        failures++;
        mem_free(sp);
    }
    return err;
}

static mt_err_t mic_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_TIMEOUT0) return MT_OK;
    if (mic_block == BLOCKS) return timer_stop(0);
    ssl_spectrum_t *sp = mem_alloc(SPECTRUM_LEN);
    if (!sp) {
        failures++;
        return MT_ERR_NO_MEM;
    }
    memset(sp, 0, sizeof *sp);
    sp->block = mic_block++;
    sample_block((int16_t *) (void *) sp->bins, sp->block);
    return send_block(sp, SSL_SAMPLES_MSG_LEN);
}

static mt_err_t fft_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port != PORT_0) return MT_OK;
    ssl_spectrum_t *sp = sched_take(data, len);
    if (!sp) return MT_ERR_NO_MEM;
    ssl_transform_block(sp);
    return send_block(sp, SSL_SPECTRUM_MSG_LEN);
}

static mt_err_t sc_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_0) {
        ssl_spectrum_t *sp = sched_take(data, len);
        if (!sp) return MT_ERR_NO_MEM;
        bool is_sound;
        sp->signal_bins = sc_process(&sc, &sc_cfg, sp->bins + SSL_BIN_LO, sp->exponent, &is_sound);
        mem_free(held);
        held = sp;
        ssl_verdict_t v = {.block = sp->block, .channel = 0, .sound = is_sound};
        return sched_send(0, &v, sizeof v, 0);
    }
    if (port == PORT_0 + 1) {
        const ssl_decision_t *d = data;
        if (len != sizeof *d || !held || held->block != d->block) return MT_OK;
        note_decision(d->block, d->sound);
        ssl_spectrum_t *sp = held;
        held = NULL;
        mt_err_t err = mem_free(sp); /* no HT on this module to send it to */
        if (++done_blocks == wake_at) wake = 1;
        return err;
    }
    return MT_OK;
}

static mt_err_t vote_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    const ssl_verdict_t *in = data;
    if (port != PORT_0 || len != sizeof *in) return MT_OK;
    vote_result_t r = vote_add(&votes, in->block, in->channel, in->sound != 0, 1, 1);
    if (r == VOTE_PENDING) return MT_OK;
    ssl_decision_t d = {.block = in->block, .sound = r == VOTE_SOUND};
    return sched_send(0, &d, sizeof d, 0);
}

/* The driver's idle loop: the cycles it gets in a window are the ones the
 * chain did not take (the harness profiles this function). It gives up
 * when a task failed. */
__attribute__((noinline)) static void spin_until_set(void)
{
    while (!wake && !failures) {
    }
}

static void wait_blocks(uint16_t n)
{
    wake = 0;
    wake_at = n;
    spin_until_set();
}

__attribute__((noinline)) static void heap_passes(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        void *p = mem_alloc(SPECTRUM_LEN);
        if (!p || mem_free(p) != MT_OK) failures++;
    }
}

static mt_err_t driver_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_INIT) return MT_OK;
    wait_blocks(WARMUP);
    MARK_UP(PIN_FIRST);
    wait_blocks(WARMUP + N1);
    MARK_DOWN(PIN_FIRST);
    MARK_UP(PIN_SECOND);
    wait_blocks(WARMUP + N1 + N2);
    MARK_DOWN(PIN_SECOND);
    heap_passes(1); /* warm-up */
    MARK_UP(PIN_MEM);
    heap_passes(MEM_N);
    MARK_DOWN(PIN_MEM);
    MARK_UP(PIN_MEM2);
    heap_passes(2 * MEM_N);
    MARK_DOWN(PIN_MEM2);
    mem_stats_t st;
    mem_get_stats(&st);
    say("heap %u of %u\n", st.high_water, st.heap_size);
    unsigned n = print_sound();
    bool ok = !failures && !st.failures && n > 0 && n < BLOCKS;
    say(ok ? "done\n" : "FAILED\n");
    port_halt(ok ? 0 : 1);
    return MT_OK;
}

static void create_task(mt_pid_t pid, task_handler_t handler, mt_pid_t to, uint8_t port)
{
    route_t route = {.pid = to, .port = port};
    task_spec_t spec = {.pid = pid,
                        .prio = pid == PID_DRIVER ? PRIO_DRIVER : PRIO_SSL,
                        .handler = handler,
                        .routes = &route,
                        .n_routes = to ? 1 : 0};
    mt_err_t err = sched_task_create(&spec);
    if (err == MT_OK) err = sched_task_init(pid, NULL, 0);
    if (err != MT_OK) {
        say("FAILED: task %u: %d\n", pid, err);
        port_halt(1);
    }
}

int main(void)
{
    motet_boot();
    DDRA = 0xFF;
    sc_init(&sc, noise, &sc_cfg);
    create_task(PID_MIC, mic_task, PID_FFT, PORT_0);
    create_task(PID_FFT, fft_task, PID_SC, PORT_0);
    create_task(PID_SC, sc_task, PID_VOTE, PORT_0);
    create_task(PID_VOTE, vote_task, PID_SC, PORT_0 + 1);
    if (timer_start_for(PID_MIC, 0, TIMER_US(PERIOD_US), true) != MT_OK) port_halt(1);
    create_task(PID_DRIVER, driver_task, 0, 0); /* runs everything */
    say("FAILED: the driver returned\n");
    return 1;
}

#endif
