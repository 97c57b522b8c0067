/* SPDX-License-Identifier: MIT */
/*
 * One channel of the SSL chain (apps/ssl: Hann window, 512-point real FFT,
 * SC noise estimate and detection, the vote) on the Cortex-M port, in
 * instructions under QEMU `-icount shift=0` (one instruction per ns; the
 * 25 MHz port_cycles() clock advances once per 40 instructions). Run by
 * tools/motetlib/bench_ssl_ports.py. Input: NBLOCKS fixed blocks of
 * deterministic samples (an LCG's noise, 24 dB louder in every other block),
 * made at boot; block k is a copy of table[k % NBLOCKS] (the "ADC read").
 *
 * BENCH_SSL_STANDALONE: the chain as plain calls in a loop; prints
 *     block <n> <clocks>
 * for n = N1, N2 blocks after a warm-up (per block: the difference / 16).
 *
 * Otherwise the Motet version, as apps/ssl/tasks_ssl.c does it: a periodic
 * timer drives mic (the samples copied into a mem_alloc()'d block, sent to
 * fft with MSG_HEAP); fft takes it, windows and transforms it in place and
 * sends it to sc with MSG_HEAP up to the band's top; sc takes it,
 * runs SC and sends its verdict to vote; vote decides and sends the
 * decision back; sc frees the block. Meanwhile the driver task spins in a
 * loop of four instructions an iteration; the chain's cost is what the
 * loop did not get. Prints
 *     steal <k> <clocks> <iterations>
 * for k = N1, N2 blocks after a warm-up; per block: (40 * dclocks - 4 *
 * diterations) / (N2 - N1). And the cost of the block's heap operations
 * alone (mem_alloc of the spectrum's size + mem_free), as a loop:
 *     mem <n> <clocks>
 */
#include <stdio.h>
#include <string.h>

#include "bench_spin.h"
#include "cortex_m.h"
#include "dsp/fft.h"
#include "dsp/sc.h"
#include "dsp/vote.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "ssl_app.h"

#define NBLOCKS 16u
#define WARMUP  16u /* more than the SC's training blocks */
#define N1      16u
#define N2      32u
#define MEM_N1  1000u
#define MEM_N2  2000u

static int16_t table[NBLOCKS][SSL_N];
static const sc_config_t sc_cfg = SSL_SC_CONFIG;
static uint32_t block_no;
static unsigned sound_blocks;

static void make_table(void)
{
    uint32_t x = 12345u;
    for (unsigned b = 0; b < NBLOCKS; b++) {
        for (unsigned i = 0; i < SSL_N; i++) {
            x = x * 1664525u + 1013904223u;
            int32_t v = (int32_t) (x >> 24) - 128; /* noise, +-128 codes */
            if (b & 1u) v *= 16;                   /* a loud broadband source: 24 dB up */
            table[b][i] = (int16_t) v;
        }
    }
}

static void adc_read(int16_t *out)
{
    memcpy(out, table[block_no % NBLOCKS], sizeof table[0]);
    block_no++;
}

#if BENCH_SSL_STANDALONE

static sc_state_t sc;
static uint32_t noise[SSL_NBINS];
static cq15_t buf[SSL_N / 2];
static vote_t votes;

__attribute__((noinline)) static void one_block(void)
{
    int16_t *samples = (int16_t *) (void *) buf;
    uint16_t block = (uint16_t) block_no;
    adc_read(samples);
    fft_window_hann(samples, SSL_LOG2N, SSL_PRESCALE);
    uint8_t e = fft_real(samples, SSL_LOG2N, NULL);
    bool sound;
    sc_process(&sc, &sc_cfg, buf + SSL_BIN_LO, e, &sound);
    if (vote_add(&votes, block, 0, sound, 1, 1) == VOTE_SOUND) sound_blocks++;
}

static uint32_t timed_blocks(unsigned n)
{
    uint32_t start = port_cycles();
    for (unsigned i = 0; i < n; i++) one_block();
    return port_cycles() - start;
}

int main(void)
{
    motet_boot();
    make_table();
    sc_init(&sc, noise, &sc_cfg);
    printf("bench_ssl: standalone, one channel\n");
    timed_blocks(WARMUP);
    uint32_t c1 = timed_blocks(N1);
    uint32_t c2 = timed_blocks(N2);
    printf("block %u %lu\n", N1, (unsigned long) c1);
    printf("block %u %lu\n", N2, (unsigned long) c2);
    printf("sound %u of %lu\n", sound_blocks, (unsigned long) block_no);
    int ok = sound_blocks > 0 && sound_blocks < block_no;
    printf("bench_ssl: %s\n", ok ? "done" : "FAILED");
    return ok ? 0 : 1;
}

#else                    /* the Motet version */

enum { PID_DRIVER = 0x20, PID_MIC, PID_SC, PID_VOTE, PID_FFT };
enum { PRIO_DRIVER = 1, PRIO_MIC = 3, PRIO_FFT = 3, PRIO_SC = 4, PRIO_VOTE = 5 };
#define PERIOD_TICKS 10u /* 1 ms: 1,000,000 instructions at shift 0 */
#define SPECTRUM_LEN ((uint16_t) (sizeof(ssl_spectrum_t) + SSL_N * sizeof(int16_t)))

static uint32_t sc_noise[SSL_NBINS];
static sc_state_t sc;
static ssl_spectrum_t *held;
static vote_t votes;
static volatile uint32_t goal, done_blocks, done_flag;
static volatile unsigned failures;
static int status;

static void check(bool ok)
{
    if (!ok) failures++;
}

/* Hand a heap block on along output 0; on failure it is still ours. */
static mt_err_t send_block(ssl_spectrum_t *sp, uint16_t len)
{
    mt_err_t err = sched_send(0, sp, len, MSG_HEAP);
    if (err) mem_free(sp);
    return err;
}

static mt_err_t mic_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_TIMEOUT0) return MT_OK;
    ssl_spectrum_t *sp = mem_alloc(SPECTRUM_LEN);
    if (!sp) return MT_ERR_NO_MEM;
    memset(sp, 0, sizeof *sp);
    sp->block = (uint16_t) block_no;
    adc_read((int16_t *) (void *) sp->bins);
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
        bool sound;
        sp->signal_bins = sc_process(&sc, &sc_cfg, sp->bins + SSL_BIN_LO, sp->exponent, &sound);
        mem_free(held);
        held = sp;
        ssl_verdict_t v = {.block = sp->block, .channel = 0, .sound = sound};
        return sched_send(0, &v, sizeof v, 0);
    }
    if (port == PORT_0 + 1) {
        const ssl_decision_t *d = data;
        if (len != sizeof *d || !held || held->block != d->block) return MT_OK;
        if (d->sound) sound_blocks++;
        ssl_spectrum_t *sp = held;
        held = NULL;
        mt_err_t err = mem_free(sp); /* one channel: no HT to send it to */
        if (++done_blocks == goal) {
            check(timer_stop_for(PID_MIC, 0) == MT_OK);
            done_flag = 1;
        }
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

static void steal(uint32_t blocks, bool print)
{
    goal = blocks;
    done_blocks = 0;
    done_flag = 0;
    uint32_t start = port_cycles();
    check(timer_start_for(PID_MIC, 0, PERIOD_TICKS, true) == MT_OK);
    uint32_t iterations = spin_until_set(&done_flag);
    uint32_t clocks = port_cycles() - start;
    if (done_blocks != blocks || failures) {
        printf("FAILED: %lu of %lu blocks, %u API errors\n", (unsigned long) done_blocks,
               (unsigned long) blocks, failures);
        status = 1;
        return;
    }
    if (print)
        printf("steal %lu %lu %lu\n", (unsigned long) blocks, (unsigned long) clocks,
               (unsigned long) iterations);
}

__attribute__((noinline)) static uint32_t timed_mem(unsigned n)
{
    uint32_t start = port_cycles();
    for (unsigned i = 0; i < n; i++) {
        void *p = mem_alloc(SPECTRUM_LEN);
        check(p != NULL && mem_free(p) == MT_OK);
    }
    return port_cycles() - start;
}

static mt_err_t driver_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_INIT) return MT_OK;
    steal(WARMUP, false);
    steal(N1, true);
    steal(N2, true);
    timed_mem(16);
    uint32_t m1 = timed_mem(MEM_N1), m2 = timed_mem(MEM_N2);
    printf("mem %u %lu\nmem %u %lu\n", MEM_N1, (unsigned long) m1, MEM_N2, (unsigned long) m2);
    printf("sound %u of %lu\n", sound_blocks, (unsigned long) block_no);
    if (failures || sound_blocks == 0 || sound_blocks >= block_no) status = 1;
    return MT_OK;
}

static void create_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler, mt_pid_t to,
                        uint8_t port)
{
    route_t route = {.pid = to, .port = port};
    task_spec_t spec = {
        .pid = pid, .prio = prio, .handler = handler, .routes = &route, .n_routes = to ? 1 : 0};
    mt_err_t err = sched_task_create(&spec);
    if (err == MT_OK) err = sched_task_init(pid, NULL, 0);
    if (err != MT_OK) {
        printf("FAILED: cannot create task 0x%02x: %s\n", pid, mt_strerror(err));
        port_halt(1);
    }
}

int main(void)
{
    motet_boot();
    make_table();
    sc_init(&sc, sc_noise, &sc_cfg);
    printf("bench_ssl: motet, one channel, event log %s\n", MOTET_EVENT_LOG ? "on" : "off");
    create_task(PID_MIC, PRIO_MIC, mic_task, PID_FFT, PORT_0);
    create_task(PID_FFT, PRIO_FFT, fft_task, PID_SC, PORT_0);
    create_task(PID_SC, PRIO_SC, sc_task, PID_VOTE, PORT_0);
    create_task(PID_VOTE, PRIO_VOTE, vote_task, PID_SC, PORT_0 + 1);
    create_task(PID_DRIVER, PRIO_DRIVER, driver_task, 0, 0); /* runs everything */
    printf("bench_ssl: %s\n", status ? "FAILED" : "done");
    return status;
}

#endif
