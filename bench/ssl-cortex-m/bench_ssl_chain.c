/* SPDX-License-Identifier: MIT */
/*
 * The full SSL chain (four channels: window, FFT and SC each, the vote,
 * HT by SRP-PHAT on the blocks voted sound) on the Cortex-M port, in
 * instructions under QEMU `-icount shift=0` (one instruction per ns; the
 * 25 MHz port_cycles() clock advances once per 40 instructions). Run by
 * tools/motetlib/bench_ssl_ports.py. Both builds read the same synthetic
 * blocks (board_bench.c) and must report the same detections:
 *     detect <block> <angle, tenths of a degree> <true angle or -1>
 *
 * BENCH_SSL_STANDALONE: the chain as plain calls, block after block, as
 * apps/ssl/standalone.c does it (static buffers, no kernel work); prints
 *     block <n> <clocks>
 * for n = N1, then N2 blocks after WARMUP blocks.
 *
 * Otherwise the Motet build: the application's own tasks (apps/ssl/
 * tasks_ssl.c: four mic, four fft, four sc, vote, ht, wired as ssl_single.toml wires
 * them, the decision multicast to the four sc) on a kernel with the SSL
 * heap (apps/ssl/ssl_kernel_config.h), each mic driven by its own periodic
 * timer. A driver task below them spins in a loop of four instructions an
 * iteration; the chain's cost is what the loop did not get between the
 * ends of blocks WARMUP - 1, WARMUP + N1 - 1 and WARMUP + N1 + N2 - 1:
 *     steal <n> <clocks> <iterations>
 * per block: (40 * dclocks - 4 * diterations) / (N2 - N1). Then the cost
 * of a block's heap operations alone (the four spectra's mem_alloc and
 * mem_free, in the chain's order), as a loop:
 *     mem <n> <clocks>
 */
#include <stdio.h>
#include <string.h>

#include "board_bench.h"
#include "cortex_m.h"
#include "dsp/fft.h"
#include "dsp/sc.h"
#include "dsp/srp.h"
#include "dsp/vote.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "ssl_app.h"

#define WARMUP         16u /* more than the SC's training blocks; a whole table */
#define N1             16u
#define N2             32u
#define MEM_N1         200u
#define MEM_N2         400u
#define MAX_DETECTIONS (WARMUP + N1 + N2)

typedef struct detection {
    uint16_t block;
    uint16_t angle_ddeg;
} detection_t;

static detection_t found[MAX_DETECTIONS];
static unsigned n_found;

static void record(uint16_t block, uint16_t angle_ddeg)
{
    if (n_found < MAX_DETECTIONS) found[n_found++] = (detection_t){block, angle_ddeg};
}

static void print_detections(unsigned blocks)
{
    for (unsigned i = 0; i < n_found; i++)
        printf("detect %u %u %ld\n", found[i].block, found[i].angle_ddeg,
               (long) board_bench_truth(found[i].block));
    printf("sound %u of %u\n", n_found, blocks);
}

#if BENCH_SSL_STANDALONE

typedef struct channel {
    sc_state_t sc;
    uint32_t noise[SSL_NBINS];
    cq15_t buf[SSL_N / 2]; /* samples, then the spectrum in place */
} channel_t;

static channel_t chan[SSL_CHANNELS];
static srp_t srp;
static int32_t srp_ws[24576 / sizeof(int32_t)];
static vote_t votes;
static const sc_config_t sc_cfg = SSL_SC_CONFIG;
static uint16_t next_block;

static int setup(void)
{
    srp_config_t cfg = {
        .n_angles = SSL_ANGLES, .log2n = SSL_LOG2N, .bin_lo = SSL_BIN_LO, .nbins = SSL_NBINS};
    srp_geometry_t g;
    board_geometry(&g);
    if (srp_workspace_size(&cfg) > sizeof srp_ws || srp_init(&srp, &cfg, &g, srp_ws) != 0)
        return -1;
    for (unsigned c = 0; c < SSL_CHANNELS; c++) sc_init(&chan[c].sc, chan[c].noise, &sc_cfg);
    return 0;
}

static void channel_block(channel_t *ch, uint8_t c, bool *sound)
{
    int16_t *samples = (int16_t *) (void *) ch->buf;
    board_mic_read(c, 0, samples, SSL_N);
    fft_window_hann(samples, SSL_LOG2N, SSL_PRESCALE);
    uint8_t e = fft_real(samples, SSL_LOG2N, NULL);
    sc_process(&ch->sc, &sc_cfg, ch->buf + SSL_BIN_LO, e, sound);
}

static void locate(uint16_t block)
{
    cq15_t *bands[SSL_CHANNELS];
    for (unsigned c = 0; c < SSL_CHANNELS; c++) {
        bands[c] = chan[c].buf + SSL_BIN_LO;
        srp_phat(bands[c], SSL_NBINS);
    }
    srp_cross(&srp, bands);
    srp_result_t r;
    srp_locate(&srp, &r);
    record(block, r.angle_ddeg);
}

__attribute__((noinline)) static void ssl_block(uint16_t block)
{
    vote_result_t v = VOTE_PENDING;
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        bool sound;
        channel_block(&chan[c], c, &sound);
        v = vote_add(&votes, block, c, sound, SSL_CHANNELS, SSL_VOTE_NEED);
    }
    if (v == VOTE_SOUND) locate(block);
}

static uint32_t timed_blocks(unsigned n)
{
    uint32_t start = port_cycles();
    for (unsigned i = 0; i < n; i++) ssl_block(next_block++);
    return port_cycles() - start;
}

int main(void)
{
    motet_boot();
    board_bench_make();
    printf("bench_ssl_chain: standalone, four channels with HT\n");
    if (setup() != 0) {
        printf("bench_ssl_chain: FAILED: the SRP workspace does not fit\n");
        return 1;
    }
    timed_blocks(WARMUP);
    uint32_t c1 = timed_blocks(N1);
    uint32_t c2 = timed_blocks(N2);
    printf("block %u %lu\n", N1, (unsigned long) c1);
    printf("block %u %lu\n", N2, (unsigned long) c2);
    print_detections(next_block);
    bool ok = n_found > 0 && n_found < next_block;
    printf("bench_ssl_chain: %s\n", ok ? "done" : "FAILED");
    return ok ? 0 : 1;
}

#else /* the Motet build */

#include "bench_spin.h"
#include "tasks.h"
#include "tasks_state.h"

enum {
    PID_DRIVER = 0x20,
    PID_MIC0 = 0x21, /* .. 0x24 */
    PID_SC0 = 0x25,  /* .. 0x28 */
    PID_VOTE = 0x29,
    PID_HT,
    PID_SINK,
    PID_FFT0 /* .. 0x2F */
};
enum { PRIO_DRIVER = 1, PRIO_SSL = 2 }; /* all SSL tasks share one, as in ssl_single.toml */
#define GROUP_SOUND  1
#define PERIOD_US    10000u /* a block every 10 ms: 10,000,000 instructions */
#define SPECTRUM_LEN ((uint16_t) (sizeof(ssl_spectrum_t) + SSL_N * sizeof(int16_t)))

static volatile uint32_t wake;
static unsigned failures;

/* ht's output: the detections, numbered from the first block read. */
static mt_err_t sink_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    const ssl_direction_t *d = data;
    if (port != PORT_0 || len != sizeof *d) return MT_OK;
    uint16_t first = (uint16_t) (board_bench_first_t_us() / PERIOD_US - 1u);
    record((uint16_t) (d->block - first), d->angle_ddeg);
    return MT_OK;
}

/* Spin until channel 0 has read `reads` blocks and the tick that read the
 * last of them is over; the clock then, and the iterations. */
static uint32_t wait_reads(uint32_t reads, uint32_t *iterations)
{
    wake = 0;
    board_bench_wake_at(reads, &wake);
    *iterations = spin_until_set(&wake);
    return port_cycles();
}

/* A block's heap operations, in the chain's order: the four mic tasks
 * allocate their spectra, then the four are freed (by ht, or by sc). */
__attribute__((noinline)) static uint32_t timed_mem(unsigned n)
{
    void *block[SSL_CHANNELS];
    uint32_t start = port_cycles();
    for (unsigned i = 0; i < n; i++) {
        for (unsigned c = 0; c < SSL_CHANNELS; c++) block[c] = mem_alloc(SPECTRUM_LEN);
        for (unsigned c = 0; c < SSL_CHANNELS; c++)
            if (!block[c] || mem_free(block[c]) != MT_OK) failures++;
    }
    return port_cycles() - start;
}

static mt_err_t driver_task(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_INIT) return MT_OK;
    uint32_t i0, i1, i2;
    uint32_t c0 = wait_reads(WARMUP, &i0);
    uint32_t c1 = wait_reads(WARMUP + N1, &i1);
    uint32_t c2 = wait_reads(WARMUP + N1 + N2, &i2);
    wake = 0;
    board_bench_stop(&wake);
    spin_until_set(&wake);
    printf("steal %u %lu %lu\n", N1, (unsigned long) (c1 - c0), (unsigned long) i1);
    printf("steal %u %lu %lu\n", N2, (unsigned long) (c2 - c1), (unsigned long) i2);
    timed_mem(16);
    uint32_t m1 = timed_mem(MEM_N1), m2 = timed_mem(MEM_N2);
    printf("mem %u %lu\nmem %u %lu\n", MEM_N1, (unsigned long) m1, MEM_N2, (unsigned long) m2);
    mem_stats_t st;
    mem_get_stats(&st);
    printf("heap high water %u of %u bytes, %u allocation failures\n", (unsigned) st.high_water,
           (unsigned) st.heap_size, (unsigned) st.failures);
    print_detections(WARMUP + N1 + N2);
    bool ok = !failures && !st.failures && n_found > 0 && n_found < WARMUP + N1 + N2;
    printf("bench_ssl_chain: %s\n", ok ? "done" : "FAILED");
    port_halt(ok ? 0 : 1);
    return MT_OK;
}

static void create_task(mt_pid_t pid, task_handler_t handler, uint16_t state_size,
                        const route_t *routes, uint8_t n_routes, const void *init, uint16_t len)
{
    task_spec_t spec = {.pid = pid,
                        .prio = pid == PID_DRIVER ? PRIO_DRIVER : PRIO_SSL,
                        .handler = handler,
                        .state_size = state_size,
                        .routes = routes,
                        .n_routes = n_routes};
    mt_err_t err = sched_task_create(&spec);
    if (err == MT_OK) err = sched_task_init(pid, init, len);
    if (err != MT_OK) {
        printf("bench_ssl_chain: FAILED: cannot create task 0x%02x: %s\n", pid, mt_strerror(err));
        port_halt(1);
    }
}

static void create_chain(void)
{
    static const route_t to_vote_ht[2] = {{.pid = PID_VOTE, .port = PORT_0},
                                          {.pid = PID_HT, .port = PORT_0}};
    static const route_t to_sound = {.pid = MT_PID_MULTICAST, .port = GROUP_SOUND};
    static const route_t to_sink = {.pid = PID_SINK, .port = PORT_0};
    static route_t to_fft[SSL_CHANNELS], to_sc[SSL_CHANNELS];
    create_task(PID_SINK, sink_task, 0, NULL, 0, NULL, 0);
    create_task(PID_HT, ssl_ht_task, sizeof(ht_state_t), &to_sink, 1, NULL, 0);
    create_task(PID_VOTE, ssl_vote_task, sizeof(vote_t), &to_sound, 1, NULL, 0);
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        create_task((mt_pid_t) (PID_SC0 + c), ssl_sc_task, sizeof(sc_task_state_t), to_vote_ht, 2,
                    &c, 1);
        if (mcast_join(GROUP_SOUND, (mt_pid_t) (PID_SC0 + c), PORT_0 + 1) != MT_OK) port_halt(1);
    }
    for (uint8_t c = 0; c < SSL_CHANNELS; c++) {
        const uint8_t init[5] = {c, PERIOD_US & 0xFFu, (PERIOD_US >> 8) & 0xFFu,
                                 (PERIOD_US >> 16) & 0xFFu, PERIOD_US >> 24};
        to_sc[c] = (route_t){.pid = (mt_pid_t) (PID_SC0 + c), .port = PORT_0};
        create_task((mt_pid_t) (PID_FFT0 + c), ssl_fft_task, 0, &to_sc[c], 1, NULL, 0);
        to_fft[c] = (route_t){.pid = (mt_pid_t) (PID_FFT0 + c), .port = PORT_0};
        create_task((mt_pid_t) (PID_MIC0 + c), ssl_mic_task, sizeof(mic_state_t), &to_fft[c], 1,
                    init, sizeof init);
    }
}

int main(void)
{
    motet_boot();
    board_bench_make();
    printf("bench_ssl_chain: motet, four channels with HT, event log %s\n",
           MOTET_EVENT_LOG ? "on" : "off");
    create_chain();
    create_task(PID_DRIVER, driver_task, 0, NULL, 0, NULL, 0); /* runs everything */
    printf("bench_ssl_chain: FAILED: the driver returned\n");
    return 1;
}

#endif
