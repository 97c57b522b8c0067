/* SPDX-License-Identifier: MIT */
/*
 * Thread switches on the ATmega128, in cycles, measured by the simavr
 * harness from GPIO edges (tools/motetlib/port_avr.py bench), as
 * bench_avr.c measures the message tasks:
 *
 *   PA1 yield switch     two threads of one level take turns: each raises
 *                        the pin and calls thread_yield(); the other, back
 *                        from its own thread_yield(), lowers it first thing.
 *                        A window is one yield: the call, the switch, the
 *                        return in the other thread (plus the SBI).
 *   PA2 semaphore hand-off  a low thread raises the pin and posts a
 *                        semaphore a higher thread waits on; the higher one,
 *                        back from sem_wait(), lowers it first thing, then
 *                        waits again. A window is the post, the switch and
 *                        the return from the wait (plus the SBI).
 *
 * Each runs REPEAT + 1 times per thread (the first window, which includes
 * the threads' start, is a warm-up the harness drops).
 * The threads have analyser-sized stacks (no guard): the figures are the
 * switch itself. Every run is checked (the turns alternate, the hand-off
 * ran the higher thread before the post returned); a mismatch prints
 * FAILED and halts with status 1, success halts with 0.
 */
#include <avr/io.h>
#include <stdio.h>
#include <string.h>

#include "avr.h"
#include "motet/motet.h"

#define REPEAT 16u
/* Frames of the threads' own code: their loops and the calls they make
 * down to the context switch (well above what avr-gcc -Os gives them). */
#define NEED  96u
#define STACK THREAD_STACK_BYTES(NEED)

#define MARK_UP(port, bit)                                                                         \
    __asm__ volatile("sbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")
#define MARK_DOWN(port, bit)                                                                       \
    __asm__ volatile("cbi %0, %1" ::"I"(_SFR_IO_ADDR(port)), "I"(bit) : "memory")

static uint8_t stacks[2][STACK];
static volatile uint8_t turns[2];
static volatile uint8_t last = 0xFF; /* the thread whose yield returned last */
static volatile uint8_t handed;
static volatile uint8_t failures;
static sem_t sem;

static void fail(const char *what)
{
    static const char head[] = "bench_avr_threads: FAILED: ";
    port_console_write(head, sizeof head - 1);
    port_console_write(what, strlen(what));
    port_console_write("\n", 1);
    port_halt(1);
}

static void create(thread_entry_t entry, uint8_t i, mt_prio_t prio)
{
    thread_spec_t spec = {.entry = entry,
                          .arg = (void *) (uintptr_t) i,
                          .stack = stacks[i],
                          .stack_size = STACK,
                          .stack_need = NEED,
                          .prio = prio,
                          .start = THREAD_START_AT_RUN};
    if (thread_create(&spec, NULL) != MT_OK) fail("thread creation");
}

/* ---- yield switch ---- */

static void yielder(void *arg)
{
    uint8_t i = (uint8_t) (uintptr_t) arg;
    for (uint8_t n = 0; n <= REPEAT; n++) {
        MARK_UP(PORTA, 1);
        thread_yield();
        MARK_DOWN(PORTA, 1); /* ends the other one's yield */
        if (last == i) failures++;
        last = i;
        turns[i]++;
    }
    sched_stop(); /* sched_run() returns once both are done */
}

/* ---- semaphore hand-off ---- */

static void taker(void *arg)
{
    (void) arg;
    for (;;) {
        sem_wait(&sem);
        MARK_DOWN(PORTA, 2);
        handed++;
    }
}

static void poster(void *arg)
{
    (void) arg;
    for (uint8_t n = 0; n <= REPEAT; n++) {
        MARK_UP(PORTA, 2);
        sem_post(&sem); /* the taker runs now, lowers the pin and waits again */
        if (handed != n + 1u) failures++;
    }
    if (failures) fail("a turn or a hand-off went wrong");
    port_halt(0);
}

int main(void)
{
    motet_boot();
    DDRA = 0xFF; /* markers */
    PORTA = 0;
    char line[64];
    int n = snprintf(line, sizeof line, "bench_avr_threads: F_CPU %lu, log %d\n",
                     (unsigned long) F_CPU, MOTET_EVENT_LOG);
    if (n > 0) port_console_write(line, (size_t) n);
    create(yielder, 0, 1);
    create(yielder, 1, 1);
    sched_run(); /* the yielders take turns until both are done */
    if (turns[0] != REPEAT + 1u || turns[1] != REPEAT + 1u) fail("yield turns");
    motet_boot();
    sem_init(&sem, 0);
    create(taker, 1, 2);
    create(poster, 0, 1);
    sched_run(); /* the poster halts the module */
    return 1;
}
