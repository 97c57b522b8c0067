/* SPDX-License-Identifier: MIT */
/*
 * Thread contexts of the native port (x86-64, System V ABI): the two hooks
 * of port.h, in a few lines of assembly.
 *
 * A suspended context is its stack pointer. port_context_switch() pushes the
 * six callee-saved registers on the running stack, stores the stack pointer
 * in *from, loads the one in *to, pops that context's registers and returns
 * into it; everything else the ABI lets a call clobber, so the compiler has
 * already saved it. No signal mask is touched (swapcontext() makes a system
 * call for it, ~220 ns; this costs ~12 ns): the kernel switches with its
 * interrupt flag set, and the real signal mask is the same in every context.
 * Switching inside a signal handler (at interrupt exit) is fine: the signal
 * frame stays on the interrupted stack until that context is resumed and
 * returns through it. MXCSR and the x87 control word are not saved: Motet
 * code never changes them.
 *
 * A new context starts in motet_context_start, which calls entry(arg) with
 * a 16-byte aligned stack, as the ABI wants at a call.
 *
 * Under AddressSanitizer a stack pointer that jumps to another stack looks
 * like a wild one (false stack-overflow reports, or the shadow of the old
 * stack left poisoned), so each switch says where it goes
 * (__sanitizer_start_switch_fiber) and, once resumed, where it came from
 * (__sanitizer_finish_switch_fiber). The stack the module booted on is
 * nobody's port_context_init(): its bounds are learnt from the first
 * context that is switched to from it.
 */
#include "motet/port.h"

#if MOTET_THREADS

/* Under valgrind, say where thread stacks are, or every switch looks like a
 * wild stack pointer. Absent headers or valgrind: no code at all. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define REGISTER_STACK(lo, hi) ((void) VALGRIND_STACK_REGISTER(lo, hi))
#endif
#endif
#ifndef REGISTER_STACK
#define REGISTER_STACK(lo, hi) ((void) 0)
#endif

void motet_context_start(void);

#if PORT_NATIVE_ASAN
#include <sanitizer/common_interface_defs.h>
/* The switch itself, wrapped by port_context_switch() below. */
#define SWITCH_NAME "motet_context_switch_raw"
void motet_context_switch_raw(port_context_t *from, port_context_t *to);
#else
#define SWITCH_NAME "port_context_switch"
#endif

__asm__(".text\n"
        ".globl " SWITCH_NAME "\n"
        ".type " SWITCH_NAME ", @function\n" SWITCH_NAME ":\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq (%rsi), %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size " SWITCH_NAME ", .-" SWITCH_NAME "\n"
        ".globl motet_context_start\n"
        ".hidden motet_context_start\n"
        ".type motet_context_start, @function\n"
        "motet_context_start:\n"
        "    movq %r13, %rdi\n"
        "    callq *%r12\n"
        "    ud2\n"
        ".size motet_context_start, .-motet_context_start\n");

#if PORT_NATIVE_ASAN
/* The context a switch leaves: the one it enters records its stack. */
static port_context_t *switched_from;

void port_context_switch(port_context_t *from, port_context_t *to)
{
    void *fake_stack = NULL;
    switched_from = from;
    __sanitizer_start_switch_fiber(&fake_stack, to->stack, to->stack_size);
    motet_context_switch_raw(from, to);
    __sanitizer_finish_switch_fiber(fake_stack, &switched_from->stack, &switched_from->stack_size);
}

/* A new context's first code: the switch into it ends here, not in
 * port_context_switch(). */
static void asan_start(void *arg)
{
    port_context_t *ctx = arg;
    __sanitizer_finish_switch_fiber(NULL, &switched_from->stack, &switched_from->stack_size);
    ctx->entry(ctx->arg);
}
#endif

/* The first switch pops six registers (r12 = entry, r13 = arg, rbp = 0 to
 * end backtraces) and returns into motet_context_start with the stack
 * pointer at the 16-byte aligned top. */
void port_context_init(port_context_t *ctx, void *stack, size_t size, void (*entry)(void *),
                       void *arg)
{
    REGISTER_STACK(stack, (char *) stack + size);
#if PORT_NATIVE_ASAN
    ctx->stack = stack;
    ctx->stack_size = size;
    ctx->entry = entry;
    ctx->arg = arg;
    entry = asan_start;
    arg = ctx;
#endif
    uintptr_t top = ((uintptr_t) stack + size) & ~(uintptr_t) 15u;
    uint64_t *sp = (uint64_t *) top - 7;
    sp[0] = 0;                                          /* r15 */
    sp[1] = 0;                                          /* r14 */
    sp[2] = (uint64_t) (uintptr_t) arg;                 /* r13 */
    sp[3] = (uint64_t) (uintptr_t) entry;               /* r12 */
    sp[4] = 0;                                          /* rbx */
    sp[5] = 0;                                          /* rbp */
    sp[6] = (uint64_t) (uintptr_t) motet_context_start; /* return address */
    ctx->sp = sp;
}

#endif /* MOTET_THREADS */
