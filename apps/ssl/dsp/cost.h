/* SPDX-License-Identifier: MIT */
/*
 * The cost model: how long the signal chain's work takes on a given
 * processor, so that a simulated module's clock reflects computation.
 *
 * Two tables, kept apart on purpose. The operation counts of each stage
 * (cost_fft_real(), cost_sc(), ...) follow the loops of the code in this
 * directory: so many loads, multiplies, 32-bit additions... per butterfly,
 * per bin, per steering term. The processor table gives the cycles of one
 * operation of each class on one processor, read off its instruction
 * timings, and its clock. Time = sum(count x cycles) / clock + peripheral
 * waits. Nothing in either table is fitted to a measured result; the
 * paper's 100 ms FFT on the 6 MHz MSP430 is a comparison, not an input
 * (see apps/ssl/README.md).
 *
 *     cost_t c = {0};
 *     cost_fft_real(&c, 9);
 *     uint32_t us = cost_us(cost_cpu_find("msp430"), &c);
 */
#ifndef SSL_COST_H
#define SSL_COST_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    COST_ALU16,   /* 16-bit (or narrower) add, subtract, compare, logic, move */
    COST_ALU32,   /* the same on 32 bits */
    COST_LOAD16,  /* read a 16-bit word from memory */
    COST_LOAD32,  /* read a 32-bit word */
    COST_STORE16, /* write a 16-bit word */
    COST_STORE32, /* write a 32-bit word */
    COST_MUL16,   /* 16 x 16 -> 32 bit multiply */
    COST_MUL32,   /* 32 x 32 -> 32 bit multiply */
    COST_DIV32,   /* 32-bit division */
    COST_SHIFT32, /* shift a 32-bit value by several bits */
    COST_BRANCH,  /* conditional branch or loop back-edge */
    COST_CALL,    /* call and return, with the usual register saves */
    COST_OPS
} cost_op_t;

typedef struct cost {
    uint32_t n[COST_OPS]; /* operations of each class */
    uint32_t io_us;       /* waiting on peripherals (sensor, SPI), microseconds */
} cost_t;

typedef struct cost_cpu {
    const char *name;          /* "msp430", "arm7", "atmega128" */
    const char *part;          /* the processor it stands for */
    uint32_t clock_hz;         /* core clock */
    uint16_t cycles[COST_OPS]; /* cycles per operation of each class */
} cost_cpu_t;

/* The processor named `name`, or NULL. */
const cost_cpu_t *cost_cpu_find(const char *name);
/* The i-th known processor, NULL past the end. */
const cost_cpu_t *cost_cpu_at(unsigned i);
/* Cycles of `c` on `cpu` (peripheral waits excluded). */
uint64_t cost_cycles(const cost_cpu_t *cpu, const cost_t *c);
/* Microseconds of `c` on `cpu`, peripheral waits included, rounded up. */
uint32_t cost_us(const cost_cpu_t *cpu, const cost_t *c);
/* a += b */
void cost_add(cost_t *a, const cost_t *b);

/* Operation counts of each stage, added to *c. */
void cost_adc_copy(cost_t *c, uint16_t samples);
void cost_window(cost_t *c, uint8_t log2n);
void cost_fft_real(cost_t *c, uint8_t log2n);
void cost_sc(cost_t *c, uint8_t nbins, uint16_t signal_bins, bool training);
void cost_vote(cost_t *c);
/* HT: whitening of 4 x nbins bins, 6 x nbins cross-spectrum candidates of
 * which `entries` were kept, and steering them over n_angles angles. */
void cost_srp(cost_t *c, uint8_t nbins, uint16_t entries, uint16_t n_angles);
void cost_temp_read(cost_t *c);
void cost_ewma(cost_t *c);
void cost_alert(cost_t *c);
/* Handing `bytes` to the radio chip over SPI. */
void cost_radio(cost_t *c, uint16_t bytes);

#endif /* SSL_COST_H */
