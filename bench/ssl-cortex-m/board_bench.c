/* SPDX-License-Identifier: MIT */
/*
 * The benchmark board (board_bench.h): the synthetic microphone array.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "board_bench.h"
#include "ssl_app.h"

#define PI          3.14159265358979323846
#define SIDE_M      0.20 /* the square array of apps/ssl/sim (array.c) */
#define SAMPLE_RATE 16000.0
#define SOUND_SPEED 343.0
#define MAX_DELAY   16   /* samples; the diagonal is 13.2 */
#define QUIET       64   /* sensor noise, +- ADC codes */
#define LOUD        1024 /* the source, +- ADC codes: 24 dB over the noise */

/* Azimuths (degrees) of the odd blocks' sources: eight, around the circle. */
static const uint16_t source_deg[BOARD_BENCH_BLOCKS / 2] = {30, 120, 210, 300, 75, 165, 255, 345};
static const int8_t corner_x[SSL_CHANNELS] = {1, -1, -1, 1},
                    corner_y[SSL_CHANNELS] = {1, 1, -1, -1};

static int16_t table[BOARD_BENCH_BLOCKS][SSL_CHANNELS][SSL_N];
static uint32_t reads[SSL_CHANNELS];
static uint32_t wake_reads;
static volatile uint32_t *wake_flag;
static volatile uint32_t *stop_flag;
static uint8_t refused; /* bit c: channel c was refused */
static bool stopping;
static uint32_t first_t_us;

static uint32_t lcg(uint32_t *x)
{
    *x = *x * 1664525u + 1013904223u;
    return *x >> 16;
}

/* A value in [-amplitude, amplitude). */
static int32_t uniform(uint32_t *x, int32_t amplitude)
{
    return (int32_t) (lcg(x) % (uint32_t) (2 * amplitude)) - amplitude;
}

/* Delay of the plane wave from `deg` at microphone m, in whole samples,
 * relative to the array centre: a microphone nearer the source hears it
 * earlier, so its signal is the source's `delay` samples ahead. */
static int delay_samples(uint16_t deg, unsigned m)
{
    double th = deg * PI / 180.0;
    double ahead = (corner_x[m] * cos(th) + corner_y[m] * sin(th)) * SIDE_M / 2 / SOUND_SPEED;
    return (int) lround(ahead * SAMPLE_RATE);
}

void board_bench_make(void)
{
    static int16_t source[SSL_N + 2 * MAX_DELAY];
    uint32_t x = 12345u;
    for (unsigned b = 0; b < BOARD_BENCH_BLOCKS; b++) {
        bool loud = b & 1u;
        for (unsigned i = 0; i < SSL_N + 2 * MAX_DELAY; i++)
            source[i] = loud ? (int16_t) uniform(&x, LOUD) : 0;
        for (unsigned m = 0; m < SSL_CHANNELS; m++) {
            int d = loud ? delay_samples(source_deg[b / 2], m) : 0;
            for (unsigned i = 0; i < SSL_N; i++)
                table[b][m][i] = (int16_t) (source[(int) i + MAX_DELAY + d] + uniform(&x, QUIET));
        }
    }
}

int32_t board_bench_truth(uint32_t k)
{
    uint32_t b = k % BOARD_BENCH_BLOCKS;
    return (b & 1u) ? (int32_t) source_deg[b / 2] * 10 : -1;
}

void board_bench_wake_at(uint32_t n, volatile uint32_t *flag)
{
    wake_reads = n;
    wake_flag = flag;
}

void board_bench_stop(volatile uint32_t *flag)
{
    stop_flag = flag;
    stopping = true;
}

uint32_t board_bench_first_t_us(void)
{
    return first_t_us;
}

bool board_mic_read(uint8_t ch, uint32_t t_us, int16_t *out, uint16_t n)
{
    if (ch >= SSL_CHANNELS || n != SSL_N) return false;
    if (stopping) {
        refused |= (uint8_t) (1u << ch);
        if (refused == (1u << SSL_CHANNELS) - 1u && stop_flag) *stop_flag = 1;
        return false;
    }
    if (ch == 0 && reads[0] == 0) first_t_us = t_us;
    memcpy(out, table[reads[ch] % BOARD_BENCH_BLOCKS][ch], sizeof table[0][0]);
    reads[ch]++;
    if (ch == 0 && reads[0] == wake_reads && wake_flag) *wake_flag = 1;
    return true;
}

bool board_temp_read(uint32_t t_us, int16_t *temp_q4)
{
    (void) t_us;
    (void) temp_q4;
    return false;
}

bool board_has_mic(uint8_t ch)
{
    return ch < SSL_CHANNELS;
}

bool board_has_temp(void)
{
    return false;
}

bool board_has_radio(void)
{
    return false;
}

void board_geometry(srp_geometry_t *g)
{
    for (unsigned m = 0; m < SSL_CHANNELS; m++) {
        g->x[m] = corner_x[m] * SIDE_M / 2;
        g->y[m] = corner_y[m] * SIDE_M / 2;
    }
    g->sample_rate = SAMPLE_RATE;
    g->speed_of_sound = SOUND_SPEED;
}

int32_t board_true_angle(uint32_t t_us, uint16_t n)
{
    (void) t_us;
    (void) n;
    return -2; /* by block number instead: board_bench_truth() */
}

void board_work(const cost_t *c)
{
    (void) c; /* real time: the work took its own time */
}
