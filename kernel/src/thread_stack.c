/* SPDX-License-Identifier: MIT */
/*
 * Thread stacks: painting, the guard's checks and the high-water scan
 * (thread.h), and what a stack overflow ends in: a halt where the guard
 * was found broken (memory below is already damaged), the thread's end
 * where the port's MPU refused the first store below it (port.h). The
 * canary checked at every switch stays with the switch (thread.c).
 */
#include <string.h>

#include "motet/log.h"
#include "thread_internal.h"

#if MOTET_THREADS

/* Exit status of a module whose guarded thread overflowed its stack. */
#define HALT_STACK_OVERFLOW 3

void thread_stack_paint(thread_t *t)
{
    STACK_FRESH(t->stack, t->stack_size);
    memset(t->stack, STACK_PAINT, t->stack_size);
}

/* The lowest byte of t's stack the thread can write: above the port's MPU
 * region, which no access may touch (not even a scan), if it has one. */
static const uint8_t *stack_floor(const thread_t *t)
{
#if PORT_HAS_MPU_STACK_GUARD
    return port_stack_guard_end(t->stack);
#else
    return t->stack;
#endif
}

STACK_SCAN bool thread_stack_guard_ok(const thread_t *t)
{
    if (PORT_HAS_MPU_STACK_GUARD) return true; /* its region cannot be written */
    for (uint8_t i = 0; i < GUARD_BYTES; i++)
        if (t->stack[i] != STACK_PAINT) return false;
    return true;
}

STACK_SCAN size_t thread_stack_high_water(const thread_t *t)
{
    const uint8_t *p = stack_floor(t), *end = t->stack + t->stack_size;
    while (p < end && *p == STACK_PAINT) p++;
    return (size_t) (end - p);
}

void thread_stack_overflow(void)
{
    static const char msg[] = "motet: thread stack overflow\n";
    log_error(MT_ERR_STACK);
    port_console_write(msg, sizeof msg - 1);
    port_halt(HALT_STACK_OVERFLOW);
    for (;;) {
    }
}

#if PORT_HAS_MPU_STACK_GUARD
void *thread_stack_fault_top(void)
{
    thread_t *cur = thread_current;
    return cur ? cur->stack + cur->stack_size : NULL;
}

/* Nothing was damaged: the MPU refused the first store below the stack.
 * The thread cannot go on (its frames are gone), the module can. */
void thread_stack_fault_exit(void)
{
    static const char msg[] = "motet: thread stack overflow caught by the MPU: thread ended\n";
    log_error(MT_ERR_STACK);
    port_console_write(msg, sizeof msg - 1);
    thread_exit();
}
#endif

void thread_stack_check_guard(const thread_t *t)
{
    if (PORT_HAS_MPU_STACK_GUARD) return; /* the MPU guards, and its region is unreadable */
    if ((t->flags & THREAD_F_GUARD) && !thread_stack_guard_ok(t)) thread_stack_overflow();
}

#endif /* MOTET_THREADS */
