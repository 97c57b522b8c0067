/* SPDX-License-Identifier: MIT */
/*
 * The TIMER record a task timer's expiry owes while its message waits in
 * the interrupt slot (docs/architecture.md, "The event log"), with threads:
 * a kernel timer's TIMER due at the same interrupt comes after it (its
 * write out of line writes the owed one first), and a thread made ready
 * by the interrupt sends the slot's message into the queue at the exit,
 * which writes the owed TIMER there, at the interrupt's time, before the
 * thread runs. Dropped or written late, the drained records would show it.
 *
 * MOTET_TEST_KERNEL: threads
 */
#include "sched_internal.h"
#include "test_support.h"

#define STACK      THREAD_STACK_BYTES(0)
#define PID_B      0x21
#define PID_STOP   0x2F
#define THREAD_HI  6 /* outranks B */
#define PRIO_B     2
#define PRIO_STOP  7
#define IRQ_STOP   7
#define IRQ_WAKE   3
#define B_TIMER    1
#define DUE        300
#define WOKEN_BUSY 50

static uint8_t stack[STACK];
static sem_t sem;
static uint64_t b_started; /* when B's timeout handler started */
static unsigned b_runs;

static mt_err_t timeout_recorder(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_TIMEOUT0 + B_TIMER) {
        b_started = tport_time();
        b_runs++;
    }
    return MT_OK;
}

static mt_err_t stopper(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port == PORT_0) sched_stop();
    return MT_OK;
}

static void make_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
    sched_run_pending();
}

static int setup(void **state)
{
    test_boot(state);
    sem_init(&sem, 0);
    b_started = 0;
    b_runs = 0;
    make_task(PID_B, PRIO_B, timeout_recorder);
    make_task(PID_STOP, PRIO_STOP, stopper);
    return 0;
}

static void isr_stop(void)
{
    assert_int_equal(sched_post_isr_bare(PID_STOP, PORT_0), MT_OK);
}

/* Run the main loop until tick `at`, when an interrupt stops it. */
static void run_until(uint64_t at)
{
    tport_irq_attach(IRQ_STOP, isr_stop);
    tport_irq_schedule(IRQ_STOP, at);
    sched_run();
}

/* Where the first record of `type` for `pid` is among rec[0..n), n if none. */
static unsigned find_record(const log_record_t *rec, unsigned n, uint8_t type, mt_pid_t pid)
{
    unsigned i = 0;
    while (i < n && !(rec[i].type == type && rec[i].pid == pid)) i++;
    return i;
}

/* How many records of `type` for `pid` rec[0..n) holds. */
static unsigned count_records(const log_record_t *rec, unsigned n, uint8_t type, mt_pid_t pid)
{
    unsigned c = 0;
    for (unsigned i = 0; i < n; i++) c += rec[i].type == type && rec[i].pid == pid;
    return c;
}

/* B's TIMER, once, at `at`, before record `next`, and B's START after it
 * (`next` may be B's START). */
static void assert_b_timer_once_before(const log_record_t *rec, unsigned n, unsigned next,
                                       uint64_t at)
{
    assert_int_equal(count_records(rec, n, EV_TIMER, PID_B), 1);
    unsigned timer = find_record(rec, n, EV_TIMER, PID_B);
    assert_int_equal(rec[timer].arg, B_TIMER);
    assert_int_equal(rec[timer].time, at);
    assert_true(timer < next);
    unsigned start = find_record(rec, n, EV_START, PID_B);
    assert_true(start < n);
    assert_true(next <= start);
    assert_int_equal(rec[start].arg, PORT_TIMEOUT0 + B_TIMER);
}

static void waits_until_due(void *arg)
{
    (void) arg;
    assert_int_equal(sem_wait_for(&sem, DUE), MT_ERR_TIMEOUT);
}

/* B's task timer and a thread's timed wait due at the same tick, B's
 * started first: its expiry takes the slot to run at the exit, owing its
 * TIMER, and the kernel timer's TIMER, written out of line, writes B's
 * first. The thread woken makes the exit queue B's message. */
static void test_a_kernel_timer_at_the_same_interrupt_logs_after_the_owed_timer(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_B, B_TIMER, DUE, false), MT_OK);
    test_thread(stack, STACK, waits_until_due, NULL, THREAD_HI, THREAD_START_NOW);
    test_count_logged_errors(MT_OK); /* empty the log */
    run_until(DUE + 100);
    assert_int_equal(b_runs, 1);
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned kernel_timer = find_record(rec, n, EV_TIMER, MT_PID_NONE);
    assert_true(kernel_timer < n);
    assert_int_equal(rec[kernel_timer].time, DUE);
    assert_b_timer_once_before(rec, n, kernel_timer, DUE);
}

/* An interrupt body whose task timer's expiry took the slot (as when the
 * timer service runs inside it) and that then wakes a thread: the exit
 * sends B's message into the queue for the drain's order to decide. */
static msg_t owing_expiry;
static void expiry_then_wake(void)
{
    port_irq_state_t s = port_irq_save();
    owing_expiry.task = sched_find_task(PID_B);
    sched_expiry_prepare(&owing_expiry, PID_B, PORT_TIMEOUT0 + B_TIMER);
    owing_expiry.flags = 0;
    assert_int_equal(sched_post_timer_expiry(&owing_expiry), MT_OK);
    port_irq_restore(s);
    assert_int_equal(sem_post_isr(&sem), MT_OK);
}

static void woken_works(void *arg)
{
    (void) arg;
    assert_int_equal(sem_wait(&sem), MT_OK);
    tport_busy(WOKEN_BUSY);
}

/* The woken thread outranks B, so it runs first and B starts WOKEN_BUSY
 * ticks after the interrupt: its TIMER has the interrupt's time, before
 * anything else is logged, and it is written once. */
static void
test_a_thread_made_ready_at_the_exit_leaves_the_owed_timer_at_its_interrupt(void **state)
{
    (void) state;
    test_thread(stack, STACK, woken_works, NULL, THREAD_HI, THREAD_START_NOW);
    tport_irq_attach(IRQ_WAKE, expiry_then_wake);
    tport_irq_schedule(IRQ_WAKE, DUE);
    test_count_logged_errors(MT_OK); /* empty the log */
    run_until(DUE + 100);
    assert_int_equal(b_runs, 1);
    assert_int_equal(b_started, DUE + WOKEN_BUSY);
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned after = 0;
    while (after < n && rec[after].time <= DUE) after++;
    assert_b_timer_once_before(rec, n, after, DUE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_kernel_timer_at_the_same_interrupt_logs_after_the_owed_timer,
                               setup),
        cmocka_unit_test_setup(
            test_a_thread_made_ready_at_the_exit_leaves_the_owed_timer_at_its_interrupt, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
