/* SPDX-License-Identifier: MIT */
/*
 * Start-up and shutdown of the Cortex-M port: the vector table, reset
 * (initialised data, zeroed bss, the painted stack, read-only code memory),
 * fault reporting, port_init(), port_halt() through semihosting, and the
 * handful of system calls that newlib-nano's printf may reach.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/stat.h>

#include "motet/port.h"
#include "mps2.h"
#include "port_cm_internal.h"

/* Symbols of link.ld. */
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss;
extern uint32_t __stack_bottom, __stack_top;

int main(void);

/* The stack paint: a word that return addresses and counters rarely are. */
#define STACK_PAINT 0x5AC4CA5Eu
/* Words below the live stack pointer that reset leaves unpainted. */
#define PAINT_MARGIN_WORDS 16u

/* Semihosting (ARM DUI 0471): SYS_EXIT_EXTENDED with the exit reason. */
#define SEMIHOSTING_SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT  0x20026u

/* ------------------------------------------------------------ reset */

static uint32_t *stack_pointer(void)
{
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* Fill the unused stack with the paint, so that the high-water mark can be
 * read back later; stops a little below the frames of reset itself. */
static void paint_stack(void)
{
    uint32_t *end = stack_pointer() - PAINT_MARGIN_WORDS;
    for (uint32_t *p = &__stack_bottom; p < end; p++) *p = STACK_PAINT;
}

/* The code memory is RAM on this board: make it read-only, so that a stray
 * write (through a null pointer, say, into the vector table) faults at once
 * instead of corrupting code. Everything else keeps the default map. */
static void protect_code(void)
{
    MPU_RNR = 0u;
    MPU_RBAR = CODE_BASE;
    MPU_RASR = MPU_RASR_AP_RO | MPU_RASR_C | MPU_RASR_SIZE(CODE_SIZE_LOG2) | MPU_RASR_ENABLE;
    MPU_CTRL = MPU_CTRL_ENABLE | MPU_CTRL_PRIVDEFENA;
    __asm volatile("dsb\n"
                   "isb" ::
                       : "memory");
}

void Reset_Handler(void)
{
    uint32_t *src = &_sidata;
    for (uint32_t *dst = &_sdata; dst < &_edata;) *dst++ = *src++;
    for (uint32_t *dst = &_sbss; dst < &_ebss;) *dst++ = 0u;
    paint_stack();
    protect_code();
    cm_guard_enable();
    SCB_CCR |= CCR_STKALIGN; /* 8-byte aligned exception frames (AAPCS) */
    cm_console_init();       /* main() may print before port_init() */
    cm_watchdog_boot();
    port_halt(main());
}

uint32_t port_cm_stack_size(void)
{
    return (uint32_t) ((uintptr_t) &__stack_top - (uintptr_t) &__stack_bottom);
}

void port_cm_stack_repaint(void)
{
    port_irq_state_t s = port_irq_save(); /* no interrupt frame half painted */
    paint_stack();
    port_irq_restore(s);
}

uint32_t port_cm_stack_high_water(void)
{
    const uint32_t *p = &__stack_bottom;
    while (p < &__stack_top && *p == STACK_PAINT) p++;
    return (uint32_t) ((uintptr_t) &__stack_top - (uintptr_t) p);
}

/* ------------------------------------------------------------ faults */

void cm_fatal(const char *what, uint32_t value)
{
    __asm volatile("cpsid i" ::: "memory");
    cm_console_init();
    cm_console_puts("\ncortex-m: fatal: ");
    cm_console_puts(what);
    cm_console_puts(" ");
    cm_console_putu(value);
    cm_console_puts("\n");
    port_halt(3);
    for (;;) {
    }
}

/* The frame the hardware stacked: r0-r3, r12, lr, pc, xPSR. */
void cm_fault_report(const uint32_t *frame);
void cm_fault_report(const uint32_t *frame)
{
    cm_console_init();
    cm_console_puts("\ncortex-m: fault: exception ");
    cm_console_putu(cm_ipsr());
    cm_console_puts(" CFSR ");
    cm_console_puthex(SCB_CFSR);
    cm_console_puts(" HFSR ");
    cm_console_puthex(SCB_HFSR);
    cm_console_puts(" MMFAR ");
    cm_console_puthex(SCB_MMFAR);
    cm_console_puts(" BFAR ");
    cm_console_puthex(SCB_BFAR);
    cm_console_puts(" pc ");
    cm_console_puthex(frame[6]);
    cm_console_puts(" lr ");
    cm_console_puthex(frame[5]);
    cm_console_puts(" sp ");
    cm_console_puthex((uint32_t) (uintptr_t) frame);
    cm_console_puts("\n");
    port_halt(3);
    for (;;) {
    }
}

/* Every fault comes here. The frame is on the faulting code's stack: MSP
 * for K and handlers, PSP for a thread (EXC_RETURN bit 2). */
__attribute__((naked)) void HardFault_Handler(void)
{
    __asm volatile("tst lr, #4\n"
                   "ite eq\n"
                   "mrseq r0, msp\n"
                   "mrsne r0, psp\n"
                   "b cm_fault_report\n");
}

static void unexpected_isr(void)
{
    cm_fatal("unexpected exception", cm_ipsr());
}

/* ------------------------------------------------------------ vectors */

typedef void (*vector_t)(void);

#define LINE cm_line_isr
__attribute__((section(".vectors"), used)) const vector_t cm_vectors[16 + IRQ_COUNT] = {
    (vector_t) &__stack_top, /* initial MSP */
    Reset_Handler,
    NMI_Handler, /* reserved for the exit dispatch's return (irq.c) */
    HardFault_Handler,
    MemManage_Handler, /* the thread stack guard (guard.c) */
    HardFault_Handler, /* BusFault */
    HardFault_Handler, /* UsageFault */
    NULL,
    NULL,
    NULL,
    NULL,
    unexpected_isr, /* SVCall */
    unexpected_isr, /* DebugMonitor */
    NULL,
    PendSV_Handler, /* the exit dispatch (irq.c) */
    unexpected_isr, /* SysTick: unused, see cortex_m.h */
    /* IRQ 0-7: UARTs and GPIO ports; 8 TIMER0; 9 TIMER1; 10 dual timer */
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    cm_compare_isr,
    cm_epoch_isr,
    cm_alarm_isr,
    /* IRQ 11-15: SPI, UART overflow, Ethernet, audio, spare */
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    /* IRQ 16-31: GPIO pin lines, not driven by QEMU: the spare lines */
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
    LINE,
};
#undef LINE

/* ------------------------------------------------------------ port hooks */

void port_init(void)
{
    __asm volatile("cpsid i" ::: "memory");
    /* A test whose assertion failed inside an interrupt body longjmps back
     * to its runner still in handler mode: nothing sane can follow. */
    if (cm_ipsr() != 0u) cm_fatal("port_init() called in handler mode, exception", cm_ipsr());
    /* One that failed inside a thread longjmps back still on PSP (the
     * thread's stack pointer, now holding the runner's frames): carry on
     * with the same value on MSP, where the kernel stack and every
     * interrupt body belong (context.c). */
    __asm volatile("mrs r0, control\n"
                   "tst r0, #2\n"
                   "beq 1f\n"
                   "mov r1, sp\n"
                   "msr msp, r1\n"
                   "bic r0, r0, #2\n"
                   "msr control, r0\n"
                   "isb\n"
                   "1:\n" ::
                       : "r0", "r1", "cc", "memory");
    cm_console_init();
    cm_irq_init();
    cm_clock_init();
    cm_sleep_init();
    cm_watchdog_start(); /* port_init() runs before the kernel: the boot's work is watched */
}

static void semihosting_exit(int status)
{
    uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t) status};
    register uint32_t op __asm("r0") = SEMIHOSTING_SYS_EXIT_EXTENDED;
    register uint32_t *arg __asm("r1") = block;
    __asm volatile("bkpt 0xab" : "+r"(op) : "r"(arg) : "memory");
}

void port_halt(int status)
{
    __asm volatile("cpsid i" ::: "memory");
    cm_console_puts("cortex-m: stack high-water ");
    cm_console_putu(port_cm_stack_high_water());
    cm_console_puts(" of ");
    cm_console_putu(port_cm_stack_size());
    cm_console_puts(" bytes\n");
    semihosting_exit(status);
    for (;;) __asm volatile("wfi"); /* no debugger attached: stay stopped */
}

/* ------------------------------------------------------------ newlib */

/* Motet has its own heap (mem_heap.c). The C library gets the RAM above
 * the static data for what it allocates itself (newlib-nano's stdio streams
 * on the first printf); a program that never calls printf never links this. */
extern uint32_t end, __ram_end;
void *_sbrk(ptrdiff_t increment);
void *_sbrk(ptrdiff_t increment)
{
    static uint8_t *brk = (uint8_t *) &end;
    if (increment > (uint8_t *) &__ram_end - brk) {
        errno = ENOMEM;
        return (void *) -1;
    }
    uint8_t *old = brk;
    brk += increment;
    return old;
}

int _write(int fd, const char *buf, int n);
int _write(int fd, const char *buf, int n)
{
    (void) fd;
    port_console_write(buf, (size_t) n);
    return n;
}

int _close(int fd);
int _close(int fd)
{
    (void) fd;
    return -1;
}

int _fstat(int fd, struct stat *st);
int _fstat(int fd, struct stat *st)
{
    (void) fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd);
int _isatty(int fd)
{
    (void) fd;
    return 1;
}

int _lseek(int fd, int offset, int whence);
int _lseek(int fd, int offset, int whence)
{
    (void) fd;
    (void) offset;
    (void) whence;
    return 0;
}

int _read(int fd, char *buf, int n);
int _read(int fd, char *buf, int n)
{
    (void) fd;
    (void) buf;
    (void) n;
    return 0;
}

void _exit(int status);
void _exit(int status)
{
    port_halt(status);
    for (;;) {
    }
}

int _kill(int pid, int sig);
int _kill(int pid, int sig)
{
    (void) pid;
    (void) sig;
    errno = EINVAL;
    return -1;
}

int _getpid(void);
int _getpid(void)
{
    return 1;
}
