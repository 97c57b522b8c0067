/* SPDX-License-Identifier: MIT */
/*
 * The cost model (cost.h): processor tables and per-stage operation counts.
 *
 * Processor tables, from the instruction timings in the vendors' manuals
 * (approximate: addressing modes vary, wait states are ignored):
 *
 * msp430 (MSP430F1611, 6 MHz as in the paper's sensing modules): register
 *   ALU 1 cycle, two for 32 bits; indexed load 3, store 4; the hardware
 *   multiplier is a peripheral (two operand writes of 4 cycles, two result
 *   reads of 3: 14); no barrel shifter (a 32-bit shift by a constant is a
 *   few swaps and single-bit rotates, ~8); division is a library call.
 * arm7 (ARM7TDMI as in the OKI ML67Q5003 compute module, 60 MHz): single
 *   cycle ALU, LDR 3 cycles, STR 2, MUL 2-4, shifts folded into the barrel
 *   shifter, taken branch 3 (pipeline refill), no divide instruction.
 * atmega128 (AVR, 16 MHz, for the AVR port): 8-bit ALU (2 cycles per
 *   16-bit operation), 2-cycle loads per byte, an 8x8 multiplier (four
 *   partial products for 16x16).
 */
#include "cost.h"

#include <string.h>

/*                  ALU16 ALU32 LD16 LD32 ST16 ST32 MUL16 MUL32 DIV32 SH32 BR CALL */
static const cost_cpu_t cpus[] = {
    {"msp430", "MSP430F1611", 6000000u, {1, 2, 3, 6, 4, 8, 14, 60, 350, 8, 2, 12}},
    {"arm7", "ARM7TDMI (OKI ML67Q5003)", 60000000u, {1, 1, 3, 3, 2, 2, 3, 4, 60, 1, 3, 8}},
    {"atmega128", "ATmega128", 16000000u, {2, 4, 4, 8, 4, 8, 18, 70, 600, 12, 2, 12}},
};

const cost_cpu_t *cost_cpu_at(unsigned i)
{
    return i < sizeof cpus / sizeof cpus[0] ? &cpus[i] : NULL;
}

const cost_cpu_t *cost_cpu_find(const char *name)
{
    for (unsigned i = 0; cost_cpu_at(i); i++)
        if (strcmp(cpus[i].name, name) == 0) return &cpus[i];
    return NULL;
}

uint64_t cost_cycles(const cost_cpu_t *cpu, const cost_t *c)
{
    uint64_t cycles = 0;
    for (unsigned i = 0; i < COST_OPS; i++) cycles += (uint64_t) c->n[i] * cpu->cycles[i];
    return cycles;
}

uint32_t cost_us(const cost_cpu_t *cpu, const cost_t *c)
{
    uint64_t us = (cost_cycles(cpu, c) * 1000000u + cpu->clock_hz - 1u) / cpu->clock_hz;
    return (uint32_t) us + c->io_us;
}

void cost_add(cost_t *a, const cost_t *b)
{
    for (unsigned i = 0; i < COST_OPS; i++) a->n[i] += b->n[i];
    a->io_us += b->io_us;
}

/* c += times x (one iteration's counts, in the order of the enum). */
static void add_times(cost_t *c, uint32_t times, const uint8_t per[COST_OPS])
{
    for (unsigned i = 0; i < COST_OPS; i++) c->n[i] += times * per[i];
}

/* One trig_sin()/trig_cos() lookup: call, quadrant switch, table read. */
static const uint8_t trig_lookup[COST_OPS] = {4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 1};

void cost_adc_copy(cost_t *c, uint16_t samples)
{
    /* per sample: read the ADC buffer, write the block, index, loop */
    static const uint8_t per[COST_OPS] = {1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0};
    add_times(c, samples, per);
}

void cost_window(cost_t *c, uint8_t log2n)
{
    /* per sample: cosine lookup, (32767 - cos) / 2, pre-shift with
     * saturation, Q15 product with rounding, store */
    static const uint8_t per[COST_OPS] = {4, 3, 1, 0, 1, 0, 1, 0, 0, 2, 3, 0};
    uint32_t n = 1uL << log2n;
    add_times(c, n, per);
    add_times(c, n, trig_lookup);
}

/* The n/2-point complex FFT inside the real one (fft.c). */
static void cost_fft_complex(cost_t *c, uint8_t log2m)
{
    uint32_t m = 1uL << log2m;
    /* max_component(): per value two loads, two abs, two compares */
    static const uint8_t scan[COST_OPS] = {4, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0};
    /* bit_reverse(): per index the carry loop and the compare */
    static const uint8_t rev[COST_OPS] = {4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0};
    /* per swap (about m/2): two loads and two stores of a complex value */
    static const uint8_t swap[COST_OPS] = {0, 0, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0};
    /* butterfly(): four loads, the complex product (4 MUL16, 4 ALU32 with
     * rounding, 2 shifts), four sums (4 ALU32), the halving with rounding
     * to even (8 ALU32, 4 shifts; most stages of a loud block are scaled),
     * four stores, the peak tracking of four values */
    static const uint8_t bfly[COST_OPS] = {10, 16, 4, 0, 4, 0, 4, 0, 0, 6, 10, 0};
    /* per twiddle: two lookups and a negation, plus the loop */
    static const uint8_t tw[COST_OPS] = {3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
    add_times(c, m, scan);
    add_times(c, m, rev);
    add_times(c, m / 2u, swap);
    add_times(c, (m / 2u) * log2m, bfly);
    add_times(c, m - 1u, tw); /* sum of `half` over the stages */
    add_times(c, 2u * (m - 1u), trig_lookup);
}

void cost_fft_real(cost_t *c, uint8_t log2n)
{
    uint32_t pairs = 1uL << (log2n - 2u);
    cost_fft_complex(c, (uint8_t) (log2n - 1u));
    /* split_pair(): four loads, even/odd sums (4 ALU32), the twiddle
     * product (4 MUL16, 4 ALU32, 2 shifts), four outputs with rounding to
     * even (16 ALU32, 4 shifts), four stores */
    static const uint8_t split[COST_OPS] = {3, 24, 4, 0, 4, 0, 4, 0, 0, 6, 2, 0};
    add_times(c, pairs, split);
    add_times(c, 2u * pairs, trig_lookup);
}

/* sc_power(): two loads, two squares, the sum, the exponent shift with
 * its overflow test */
static const uint8_t sc_pow[COST_OPS] = {2, 2, 2, 0, 0, 0, 2, 0, 0, 1, 2, 0};

void cost_sc(cost_t *c, uint8_t nbins, uint16_t signal_bins, bool training)
{
    /* per bin and pass: the power, the noise read, the threshold test */
    static const uint8_t test[COST_OPS] = {1, 1, 0, 1, 0, 0, 0, 0, 0, 1, 2, 0};
    /* follow(): compare, difference, shift, update, floor test, store */
    static const uint8_t follow[COST_OPS] = {0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 3, 1};
    static const uint8_t zero[COST_OPS] = {0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
    if (training) {
        add_times(c, nbins, sc_pow);
        add_times(c, nbins, follow);
        return;
    }
    add_times(c, 2u * nbins, sc_pow);
    add_times(c, 2u * nbins, test);
    add_times(c, nbins, follow); /* an upper bound during sound */
    add_times(c, (uint32_t) (nbins - (signal_bins < nbins ? signal_bins : nbins)), zero);
}

void cost_vote(cost_t *c)
{
    static const uint8_t per[COST_OPS] = {12, 0, 4, 0, 4, 0, 0, 0, 0, 0, 6, 1};
    add_times(c, 1, per);
}

void cost_srp(cost_t *c, uint8_t nbins, uint16_t entries, uint16_t n_angles)
{
    /* srp_phat() per bin: squares, 16 steps of the integer square root
     * (3 ALU32, 1 shift, 2 branches each), two divisions, two stores */
    static const uint8_t phat[COST_OPS] = {2, 1, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0};
    static const uint8_t isqrt_step[COST_OPS] = {0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0};
    /* cross_pair() per candidate bin: four loads and the zero tests */
    static const uint8_t candidate[COST_OPS] = {4, 0, 4, 0, 0, 0, 0, 0, 0, 0, 5, 0};
    /* per kept entry: the conjugate product, rounding, three stores */
    static const uint8_t keep[COST_OPS] = {1, 4, 0, 0, 3, 0, 4, 0, 0, 2, 0, 0};
    /* srp_steer() per entry and angle: bin, re, im loads, the phase
     * (bin x delay, rounding shift, mask), cos and sin table reads, two
     * products, difference, shift, sum, loop */
    static const uint8_t steer[COST_OPS] = {3, 4, 5, 0, 0, 0, 2, 1, 0, 2, 1, 0};
    /* per angle and pair: the delay load and the inner loop set-up */
    static const uint8_t per_pair[COST_OPS] = {2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0};
    /* per angle: store the power, running total, maximum test */
    static const uint8_t per_angle[COST_OPS] = {1, 3, 0, 1, 0, 1, 0, 0, 0, 0, 3, 1};
    uint32_t bins = 4uL * nbins;
    add_times(c, bins, phat);
    add_times(c, bins * 16u, isqrt_step);
    add_times(c, 6uL * nbins, candidate);
    add_times(c, entries, keep);
    add_times(c, (uint32_t) entries * n_angles, steer);
    add_times(c, 6uL * n_angles, per_pair);
    add_times(c, n_angles, per_angle);
}

void cost_temp_read(cost_t *c)
{
    /* start the conversion, wait for it (ADC12 on the sensing module:
     * sample-and-hold plus 13 ADC clocks, about 20 us), read, scale */
    static const uint8_t per[COST_OPS] = {6, 2, 2, 0, 2, 0, 1, 0, 0, 1, 2, 1};
    add_times(c, 1, per);
    c->io_us += 20u;
}

void cost_ewma(cost_t *c)
{
    static const uint8_t per[COST_OPS] = {2, 3, 0, 1, 0, 1, 1, 0, 0, 1, 1, 1};
    add_times(c, 1, per);
}

void cost_alert(cost_t *c)
{
    static const uint8_t per[COST_OPS] = {4, 8, 0, 3, 0, 2, 1, 0, 0, 2, 5, 1};
    add_times(c, 1, per);
}

void cost_radio(cost_t *c, uint16_t bytes)
{
    /* per byte: load, write the SPI data register, wait for it to shift
     * out (8 bits at 2 MHz: 4 us), loop */
    static const uint8_t per[COST_OPS] = {1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 2, 0};
    add_times(c, bytes, per);
    c->io_us += 4u * bytes;
}
