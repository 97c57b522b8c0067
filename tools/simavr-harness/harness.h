/* SPDX-License-Identifier: MIT */
/*
 * motet-simavr: a cycle-exact host harness for AVR firmware on libsimavr.
 *
 * main.c reads the command line into options_t; sim.c runs the image and
 * fills result_t. See docs/simavr-harness.md for the command line, the
 * trace format and what simavr 1.6 does not charge.
 */
#ifndef SIMAVR_HARNESS_H
#define SIMAVR_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "logtap.h"

/* Exit statuses of the harness itself; a halted firmware's own status
 * (0 .. HARNESS_STATUS_MAX) is passed through unchanged. */
#define HARNESS_STATUS_MAX 122
#define EXIT_BOARD         123 /* the board program refused its arguments */
#define EXIT_LIMIT                                                                                 \
    124 /* --max-cycles or --timeout reached, or the board program                                 \
           did not say it was ready in time */
#define EXIT_ERROR                                                                                 \
    125                   /* bad command line, unreadable image, a board program                   \
                             that failed to start or ended otherwise before ready */
#define EXIT_ABNORMAL 126 /* crash, or a stop without the halt marker */
#define EXIT_WATCHDOG 127 /* on a device (--bus): the chip's watchdog reset it */

#define HARNESS_MAX_PINS 32
#define HARNESS_LINES    8 /* INT0 .. INT7 */

/* Halt mailbox: port_halt() leaves these in registers, then sleeps with
 * interrupts off (see ports/avr/port_avr_boot.c). */
#define HALT_MAGIC_LO   0x54 /* r20: 'T' */
#define HALT_MAGIC_HI   0x4D /* r21: 'M' */
#define HALT_REG_MAGIC  20
#define HALT_REG_STACK  22
#define HALT_REG_STATUS 24

/* One injected interrupt: a low pulse on external line INTn. */
typedef struct inject {
    uint64_t cycle;
    uint8_t line;
} inject_t;

/* A GPIO pin to trace: port letter and bit. */
typedef struct trace_pin {
    char port;
    uint8_t bit;
} trace_pin_t;

typedef struct options {
    const char *elf;
    const char *mcu;     /* NULL: from the image's .mmcu section */
    uint32_t freq;       /* 0: from the image, else 8 MHz */
    uint64_t max_cycles; /* 0: no limit */
    double timeout;      /* wall-clock seconds, 0: none */
    inject_t *injects;   /* sorted by cycle after parsing */
    size_t n_injects;
    size_t cap_injects;
    uint32_t pulse; /* low-pulse width of an injection, cycles */
    trace_pin_t pins[HARNESS_MAX_PINS];
    unsigned n_pins;
    const char *trace_path;      /* edge file; NULL: none */
    bool trace_sleep;            /* also record sleep/wake in the edge file */
    const char *json_path;       /* summary as JSON; NULL: none */
    bool quiet;                  /* no summary line on stderr */
    bool xram;                   /* model 60 KB of external SRAM behind MCUCR.SRE */
    bool timer_hold;             /* keep TCNT1/TCNT3 while their clock is stopped */
    const char *profile_path;    /* flat cycle profile per function; NULL: none */
    trace_pin_t profile_gate;    /* count only while this pin is high ... */
    bool profile_gated;          /* ... if set */
    const char *profile_pc_path; /* the same per instruction address; NULL: none */
    const char *bus_socket;      /* a device's hub (buslink.h); NULL: the core runs alone */
    uint8_t bus_module;          /* this module's bus address */
    bool bus_loader;             /* this module loads the application */
    const char *log_path;        /* the kernel's event log as written (logtap.h); NULL: none */
    logtap_ring_t log_ring;      /* where the image keeps it ... */
    bool log_ring_given;         /* ... if given */
    const char *board;           /* the board program (boardlink.h); NULL: no sensors */
    char **board_args;           /* its arguments, argv[1..] */
    size_t n_board_args;
} options_t;

typedef enum {
    RUN_HALTED,   /* port_halt(): status is valid */
    RUN_LIMIT,    /* --max-cycles */
    RUN_TIMEOUT,  /* --timeout */
    RUN_CRASHED,  /* simavr reported a crash */
    RUN_STOPPED,  /* slept with interrupts off, but without the marker */
    RUN_ENDED,    /* the hub ended the run (--bus): status is the hub's */
    RUN_WATCHDOG, /* on a device (--bus): the watchdog reset the chip */
} run_end_t;

typedef struct result {
    run_end_t end;
    int status;              /* firmware status when halted */
    uint16_t stack_used;     /* bytes, from the halt mailbox */
    uint64_t cycles;         /* total simulated cycles */
    uint64_t asleep;         /* cycles spent in SLEEP */
    uint64_t asleep_mode[8]; /* the same by sleep mode (SM2:0: 0 idle, 3 power-save) */
    uint64_t sleeps;         /* times the core entered SLEEP */
    uint64_t edges;          /* traced GPIO edges */
    uint64_t injected;       /* interrupts injected */
    uint64_t wdt_resets;     /* resets by the watchdog (MCUCSR.WDRF rose) */
    uint64_t wdt_cycle;      /* the cycle of the last of them */
    double wall;             /* seconds of host time */
    uint32_t freq;
    char mcu[64];
} result_t;

/* Run the image as opt says; 0 when it ran (res describes how it ended),
 * EXIT_ERROR when it could not be started (message on stderr). */
int harness_run(const options_t *opt, result_t *res);
/* Wall-clock seconds from a monotonic origin (timeouts, the run's wall time). */
double harness_now_seconds(void);

#endif /* SIMAVR_HARNESS_H */
