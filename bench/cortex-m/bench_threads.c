/* SPDX-License-Identifier: MIT */
/*
 * Thread figures of the Cortex-M port (context.c), in instructions under
 * QEMU `-icount shift=0` (one instruction per ns, 40 per timer clock):
 *
 *   post_wait_equal  two equal threads hand a semaphore back and forth: A
 *                    posts (B becomes ready, no preemption among equals)
 *                    and waits (switch to B), B posts and waits (switch to
 *                    A): per iteration two posts, two waits, two switches
 *   post_preempt     the same with B above A: A's post switches to B at
 *                    once, B posts back and waits (switch to A), A's wait
 *                    finds the count and does not block
 *   isr_wake         A pends a spare line whose body posts B's semaphore;
 *                    B, higher, runs at the interrupt's exit (the switch is
 *                    made in the exit dispatch, on A's stack) and waits
 *                    again, which resumes A through the dispatch: interrupt
 *                    body, PendSV, trampoline, two switches, NMI
 *
 * Each runs N1 and N2 iterations inside thread A, timed by port_cycles(),
 * and prints
 *     thr <name> <iterations> <clocks>
 * (the harness takes the difference: per iteration = 40 x dclocks / dN).
 * Every iteration is checked: B's count and the switch counter (exactly two
 * switches an iteration) must agree, or the image prints FAILED and exits 1.
 *
 * Sleep and wake, by stolen time: a thread sleeps one tick K times while
 * the kernel stack spins in a four-instruction loop below it, and
 *     steal sleep <K> <clocks> <iterations>
 * for K1 and K2: per sleep = (40 x dclocks - 4 x diterations) / dK, i.e.
 * thread_sleep() (a kernel timer), the switch to K, the compare interrupt,
 * the expiry waking the thread, the exit dispatch switching to it.
 *
 * Stacks: `stack <name> <high-water> <size>` per thread (painted at
 * creation), and `exitstack <own> <high-water>`: a thread whose frames
 * reach `own` bytes when it pends the line of isr_wake; what its stack
 * holds beyond that is what the exit dispatch left on it (the 32-byte
 * hardware frame, then in the same bytes below it PendSV's 32-byte frame
 * and the trampoline's calls up to the switch), to compare with the allowance
 * `allowance <PORT_THREAD_STACK_EXTRA> <per level> <PORT_THREAD_STACK_MIN>`;
 * more than the per-level allowance fails the run.
 */
#include <stdio.h>

#include "bench_spin.h"
#include "cortex_m.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "mps2.h"

#define N_WARM 16u
#define N1     1000u
#define N2     2000u
#define K1     100u
#define K2     500u
#define LINE   (PORT_CM_SPARE_IRQ_FIRST + 0u)
#define STACK  THREAD_STACK_BYTES(0)

typedef enum { PAIR_EQUAL, PAIR_PREEMPT, PAIR_ISR } pair_kind_t;

static const char *const pair_names[] = {"post_wait_equal", "post_preempt", "isr_wake"};

static uint8_t stack_a[STACK], stack_b[STACK];
static sem_t to_a, to_b;
static volatile bool stop_b;
static volatile uint32_t b_runs;
static pair_kind_t kind;
static int status;

static void fail(const char *what, unsigned long a, unsigned long b)
{
    printf("FAILED %s: %lu != %lu\n", what, a, b);
    status = 1;
}

/* ---- the pair ---- */

static void thread_b(void *arg)
{
    (void) arg;
    for (;;) {
        sem_wait(&to_b);
        if (stop_b) return;
        b_runs++;
        if (kind != PAIR_ISR) sem_post(&to_a);
    }
}

static void isr_posts_b(void)
{
    sem_post_isr(&to_b);
}

/* Pend the line; its interrupt and exit dispatch run before this returns. */
static void raise_line(void)
{
    port_cm_irq_raise(LINE);
}

static void iterate(uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (kind == PAIR_ISR) {
            raise_line();
        } else {
            sem_post(&to_b);
            sem_wait(&to_a);
        }
    }
}

static uint32_t timed(uint32_t n)
{
    uint32_t runs0 = b_runs, switches0 = thread_switch_count();
    uint32_t start = port_cycles();
    iterate(n);
    uint32_t clocks = port_cycles() - start;
    if (b_runs - runs0 != n) fail("B's runs", (unsigned long) (b_runs - runs0), n);
    if (thread_switch_count() - switches0 != 2u * n)
        fail("switches", (unsigned long) (thread_switch_count() - switches0), 2ul * n);
    return clocks;
}

static void thread_a(void *arg)
{
    (void) arg;
    iterate(N_WARM);
    uint32_t c1 = timed(N1), c2 = timed(N2);
    printf("thr %s %u %lu\n", pair_names[kind], N1, (unsigned long) c1);
    printf("thr %s %u %lu\n", pair_names[kind], N2, (unsigned long) c2);
    stop_b = true;
    if (kind == PAIR_ISR)
        raise_line();
    else
        sem_post(&to_b);
}

static void create(thread_entry_t entry, uint8_t *stack, mt_prio_t prio, thread_t **out)
{
    thread_spec_t spec = {.entry = entry, .stack = stack, .stack_size = STACK, .prio = prio};
    mt_err_t err = thread_create(&spec, out);
    if (err != MT_OK) {
        printf("FAILED: thread_create: %s\n", mt_strerror(err));
        port_halt(1);
    }
}

static void print_stack(const char *name, const thread_t *t)
{
    printf("stack %s %lu %lu\n", name, (unsigned long) thread_stack_high_water(t),
           (unsigned long) STACK);
    if (!thread_stack_guard_ok(t)) fail("guard intact", 0, 1);
}

/* B waits first (it is created first and blocks at once), then A runs
 * everything and both exit; back here, on the kernel stack. */
static void run_pair(pair_kind_t k)
{
    thread_t *a, *b;
    kind = k;
    stop_b = false;
    b_runs = 0;
    sem_init(&to_a, 0);
    sem_init(&to_b, 0);
    create(thread_b, stack_b, k == PAIR_EQUAL ? 3 : 4, &b);
    create(thread_a, stack_a, k == PAIR_ISR ? 2 : 3, &a);
    printf("stack %s_a %lu %lu\n", pair_names[k], (unsigned long) thread_stack_high_water(a),
           (unsigned long) STACK);
    print_stack(k == PAIR_ISR     ? "isr_wake_b"
                : k == PAIR_EQUAL ? "post_wait_equal_b"
                                  : "post_preempt_b",
                b);
}

/* ---- sleep and wake, by stolen time ---- */

static volatile uint32_t sleeps_done;
static uint32_t sleep_goal;

static void sleeper(void *arg)
{
    (void) arg;
    for (uint32_t i = 0; i < sleep_goal; i++) thread_sleep(1);
    sleeps_done = 1;
}

static void steal_sleep(uint32_t sleeps)
{
    thread_t *s;
    sleep_goal = sleeps;
    sleeps_done = 0;
    uint32_t start = port_cycles();
    create(sleeper, stack_a, 4, &s); /* sleeps at once: K spins below it */
    uint32_t iterations = spin_until_set(&sleeps_done);
    uint32_t clocks = port_cycles() - start;
    printf("steal sleep %lu %lu %lu\n", (unsigned long) sleeps, (unsigned long) clocks,
           (unsigned long) iterations);
    if (sleeps == K2) print_stack("sleeper", s);
}

/* ---- what the exit dispatch leaves on a thread stack ---- */

static uint32_t own_depth;
static size_t exit_high_water;

static void interrupted(void *arg)
{
    (void) arg;
    uintptr_t top = ((uintptr_t) stack_a + STACK) & ~(uintptr_t) 7u;
    uint32_t *ispr = (uint32_t *) &NVIC_ISPR(LINE / 32u);
    uint32_t bit = 1u << (LINE % 32u), sp;
    for (unsigned i = 0; i < 16u; i++)
        __asm volatile("mov %0, sp\n"
                       "str %1, [%2]\n"
                       "dsb\n"
                       "isb\n" /* the interrupt, B, and back */
                       : "=&r"(sp)
                       : "r"(bit), "r"(ispr)
                       : "memory");
    own_depth = (uint32_t) (top - sp);
    exit_high_water = thread_stack_high_water(thread_self());
    stop_b = true;
    raise_line();
}

static void measure_exit_stack(void)
{
    thread_t *b, *x;
    kind = PAIR_ISR;
    stop_b = false;
    b_runs = 0;
    sem_init(&to_b, 0);
    create(thread_b, stack_b, 4, &b);
    create(interrupted, stack_a, 2, &x);
    if (b_runs != 16u) fail("B's runs at the exit", b_runs, 16);
    /* The port's allowance per interrupt level must cover what was left. */
    if (exit_high_water - own_depth > PORT_CM_EXIT_FRAME_BYTES + PORT_CM_EXIT_PATH_BYTES)
        fail("exit dispatch bytes within the allowance", exit_high_water - own_depth,
             PORT_CM_EXIT_FRAME_BYTES + PORT_CM_EXIT_PATH_BYTES);
    printf("exitstack %lu %lu\n", (unsigned long) own_depth, (unsigned long) exit_high_water);
}

int main(void)
{
    motet_boot();
    printf("bench_threads: %s, event log %s, %lu clocks per tick\n", PORT_NAME,
           MOTET_EVENT_LOG ? "on" : "off", (unsigned long) PORT_CM_CLOCKS_PER_TICK);
    port_cm_irq_attach(LINE, isr_posts_b);
    printf("allowance %lu %lu %lu\n", (unsigned long) PORT_THREAD_STACK_EXTRA,
           (unsigned long) (PORT_CM_EXIT_FRAME_BYTES + PORT_CM_EXIT_PATH_BYTES),
           (unsigned long) PORT_THREAD_STACK_MIN);
    run_pair(PAIR_EQUAL);
    run_pair(PAIR_PREEMPT);
    run_pair(PAIR_ISR);
    steal_sleep(K1);
    steal_sleep(K2);
    measure_exit_stack();
    printf("bench_threads: %s\n", status ? "FAILED" : "done");
    return status;
}
