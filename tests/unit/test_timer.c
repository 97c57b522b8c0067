/* SPDX-License-Identifier: MIT */
/*
 * The time manager on the port's clock: expiry order and
 * exact ticks, periodic timers without drift, stop and restart, the limits,
 * tickless operation, the counter wrap and the remaining-time queries, and
 * the expiry's message that each timer block carries: no pool block, every
 * expiry delivered once, every block back once its message has run.
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <string.h>

#include "sched_internal.h"
#include "slab.h"
#include "test_support.h"
#include "timer_internal.h"

#define PID_A    0x20
#define PID_B    0x21
#define PID_STOP 0x2F
#define PID_HOLD 0x2E
#define PID_HOG  0x2D
#define MAX_HITS 1100

/* The kernel's block caches (slab.h), whose use the tests below watch. */
extern slab_cache_t timer_cache;
/* Message blocks taken from the pool. */
static uint8_t msg_blocks_in_use(void)
{
    return (uint8_t) (MOTET_MAX_QUEUED_MSGS - sched_msg_spare());
}

/* One delivered timeout: who, which port, when (simulated ticks), and the
 * message pool's blocks in use while its handler ran. */
typedef struct hit {
    mt_pid_t pid;
    mt_port_t port;
    uint64_t time;
    uint8_t msg_blocks_in_use;
} hit_t;

static hit_t hits[MAX_HITS];
static unsigned n_hits;
static uint32_t handler_busy;             /* work each timeout handler declares */
static uint8_t start_from_handler = 0xFF; /* timer index started at INIT */
static mt_err_t start_result;

static mt_err_t recorder(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT && start_from_handler != 0xFF)
        start_result = timer_start(start_from_handler, 700, false);
    if (port < PORT_TIMEOUT0 || port > PORT_TIMEOUT3) return MT_OK;
    if (n_hits < MAX_HITS)
        hits[n_hits++] = (hit_t){.pid = sched_current_pid(),
                                 .port = port,
                                 .time = tport_time(),
                                 .msg_blocks_in_use = msg_blocks_in_use()};
    if (handler_busy) tport_busy(handler_busy);
    return MT_OK;
}

static mt_err_t stopper(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_0) sched_stop();
    return MT_OK;
}

/* A task more important than A and B, busy for hog_ticks on PORT_0 and then
 * doing hog_then (if set): their timeouts wait in the queue meanwhile. */
static uint32_t hog_ticks;
static void (*hog_then)(void);

static mt_err_t hog(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    tport_busy(hog_ticks);
    if (hog_then) hog_then();
    return MT_OK;
}

static void make_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
    sched_run_pending();
}

static void make_tasks(void)
{
    memset(hits, 0, sizeof hits);
    n_hits = 0;
    handler_busy = 0;
    start_from_handler = 0xFF;
    make_task(PID_A, 2, recorder);
    make_task(PID_B, 2, recorder);
    make_task(PID_STOP, 6, stopper);
    make_task(PID_HOG, 4, hog);
    hog_ticks = 0;
    hog_then = NULL;
}

/* Keep A and B from running for `ticks` from now, then call `then`. */
static void hog_for(uint32_t ticks, void (*then)(void))
{
    hog_ticks = ticks;
    hog_then = then;
    assert_int_equal(sched_send_to(PID_HOG, PORT_0, NULL, 0, 0), MT_OK);
}

static int setup(void **state)
{
    test_boot(state);
    make_tasks();
    return 0;
}

static int setup_at_wrap(void **state)
{
    (void) state;
    test_boot_at(0xFFFFF000u);
    make_tasks();
    return 0;
}

static void isr_stop(void)
{
    assert_int_equal(sched_post_isr(PID_STOP, PORT_0, NULL, 0, 0), MT_OK);
}

/* Run the kernel's main loop (sleeping between events) until simulated
 * tick `at`, when an external interrupt stops it. */
static void run_until(uint64_t at)
{
    tport_irq_attach(7, isr_stop);
    tport_irq_schedule(7, at);
    sched_run();
    assert_true(tport_time() >= at);
}

static void assert_hit(unsigned i, mt_pid_t pid, unsigned timer, uint64_t time)
{
    assert_true(i < n_hits);
    assert_int_equal(hits[i].pid, pid);
    assert_int_equal(hits[i].port, PORT_TIMEOUT0 + timer);
    assert_int_equal(hits[i].time, time);
}

/* ---- ordering ---- */

static void test_timers_fire_in_deadline_order_whatever_the_start_order(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, 500, false), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 1, 100, false), MT_OK);
    assert_int_equal(timer_start_for(PID_B, 0, 400, false), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 2, 300, false), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 3, 200, false), MT_OK);
    run_until(1000);
    assert_int_equal(n_hits, 5);
    assert_hit(0, PID_A, 1, 100);
    assert_hit(1, PID_A, 3, 200);
    assert_hit(2, PID_A, 2, 300);
    assert_hit(3, PID_B, 0, 400);
    assert_hit(4, PID_A, 0, 500);
    assert_int_equal(timer_interrupt_count(), 5);
}

static void test_equal_deadlines_both_fire_in_start_order(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_B, 2, 300, false), MT_OK);
    tport_busy(100);
    assert_int_equal(timer_start_for(PID_A, 1, 200, false), MT_OK); /* also due at 300 */
    assert_int_equal(timer_start_for(PID_A, 0, 200, false), MT_OK);
    run_until(1000);
    assert_int_equal(n_hits, 3);
    assert_hit(0, PID_B, 2, 300);
    assert_hit(1, PID_A, 1, 300);
    assert_hit(2, PID_A, 0, 300);
    assert_int_equal(timer_interrupt_count(), 1); /* one compare for all three */
}

static void test_expiry_is_logged_with_owner_and_index(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_B, 3, 50, false), MT_OK);
    test_count_logged_errors(MT_OK); /* empty the log */
    tport_busy(100);
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned found = 0;
    for (unsigned i = 0; i < n; i++) {
        if (rec[i].type != EV_TIMER) continue;
        assert_int_equal(rec[i].pid, PID_B);
        assert_int_equal(rec[i].arg, 3);
        assert_int_equal(rec[i].time, 50);
        found++;
    }
    assert_int_equal(found, 1);
}

/* Where the first record of `type` for `pid` is among rec[0..n), n if none. */
static unsigned find_record(const log_record_t *rec, unsigned n, uint8_t type, mt_pid_t pid)
{
    unsigned i = 0;
    while (i < n && !(rec[i].type == type && rec[i].pid == pid)) i++;
    return i;
}

static void test_expiry_is_one_timer_record_before_its_handler_starts(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_B, 3, 50, false), MT_OK);
    test_count_logged_errors(MT_OK); /* empty the log */
    tport_busy(100);
    assert_int_equal(n_hits, 1);
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned timer = find_record(rec, n, EV_TIMER, PID_B);
    assert_true(timer < n);
    assert_int_equal(rec[timer].arg, 3);
    /* Its SEND is folded in: the next record is the handler's START. */
    assert_true(timer + 1 < n);
    assert_int_equal(rec[timer + 1].type, EV_START);
    assert_int_equal(rec[timer + 1].pid, PID_B);
    assert_int_equal(rec[timer + 1].arg, PORT_TIMEOUT3);
    for (unsigned i = 0; i < n; i++) assert_int_not_equal(rec[i].type, EV_SEND);
}

/* An expiry run first at the interrupt's exit is one ring slot, the START
 * that stands for its TIMER too (log_ring.h): drained, the TIMER, the
 * START and the END as ever, the TIMER and the START at the same time.
 * The ring's overrun count counts slots: with the other slots of the ring
 * filled, nothing is lost yet, and one record more overwrites exactly one
 * slot. */
static void test_expiry_run_at_the_exit_is_one_slot_for_its_timer_and_start(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_B, 3, 50, false), MT_OK);
    test_count_logged_errors(MT_OK); /* empty the log */
    const uint32_t lost = log_overruns();
    tport_busy(100);
    assert_int_equal(n_hits, 1);
    /* Two slots (the expiry's START, the END): the rest of the ring fills. */
    for (unsigned i = 0; i < MOTET_LOG_ENTRIES - 2; i++) log_record(EV_WAKE, 0x30, (uint16_t) i);
    assert_int_equal(log_overruns(), lost);
    log_record_t rec[MOTET_LOG_ENTRIES + 1];
    assert_int_equal(log_drain(rec, 1), 0); /* never the TIMER without its START */
    assert_int_equal(log_drain(rec, MOTET_LOG_ENTRIES + 1), MOTET_LOG_ENTRIES + 1);
    assert_int_equal(rec[0].type, EV_TIMER);
    assert_int_equal(rec[0].pid, PID_B);
    assert_int_equal(rec[0].arg, 3);
    assert_int_equal(rec[0].time, 50);
    assert_int_equal(rec[1].type, EV_START);
    assert_int_equal(rec[1].pid, PID_B);
    assert_int_equal(rec[1].arg, PORT_TIMEOUT3);
    assert_int_equal(rec[1].time, 50);
    assert_int_equal(rec[2].type, EV_END);
    assert_int_equal(rec[2].pid, PID_B);
    assert_int_equal(rec[2].arg, PORT_TIMEOUT3);
    assert_int_equal(rec[3].type, EV_WAKE);
    /* Again, then one record more than the ring holds: the expiry's slot,
     * the oldest, is the one overwritten, and counted once. */
    assert_int_equal(timer_start_for(PID_B, 3, 50, false), MT_OK);
    tport_busy(100);
    for (unsigned i = 0; i < MOTET_LOG_ENTRIES - 1; i++) log_record(EV_WAKE, 0x30, (uint16_t) i);
    assert_int_equal(log_overruns(), lost + 1);
    assert_int_equal(log_drain(rec, MOTET_LOG_ENTRIES + 1), MOTET_LOG_ENTRIES);
    assert_int_equal(rec[0].type, EV_END);
    assert_int_equal(rec[0].arg, LOG_PORT_UNKNOWN); /* its START was the slot lost */
}

/* Two task timers due at the same interrupt: the first one's message takes
 * the slot to run at the exit, owing its TIMER record, and the second one's
 * post queues it after all: the first TIMER is written then, before the
 * second, so that the records keep the order of the expiries (and each
 * TIMER comes before its START, as when each wrote its own at once). */
static void test_expiries_at_one_interrupt_are_logged_in_their_order(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_B, 2, 300, false), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 1, 300, false), MT_OK);
    test_count_logged_errors(MT_OK); /* empty the log */
    tport_busy(400);
    assert_int_equal(n_hits, 2);
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    const uint8_t types[] = {EV_TIMER, EV_TIMER, EV_START, EV_END, EV_START, EV_END};
    const mt_pid_t pids[] = {PID_B, PID_A, PID_B, PID_B, PID_A, PID_A};
    const uint16_t args[] = {2, 1, PORT_TIMEOUT2, PORT_TIMEOUT2, PORT_TIMEOUT1, PORT_TIMEOUT1};
    assert_int_equal(n, 6);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(rec[i].type, types[i]);
        assert_int_equal(rec[i].pid, pids[i]);
        assert_int_equal(rec[i].arg, args[i]);
        assert_int_equal(rec[i].time, 300);
    }
}

/* An interrupt body whose task timer's expiry took the slot (as when the
 * body starts or stops a timer while a deadline is due, and the timer
 * service runs inside it), then posts: its post_case'th way. */
static msg_t owing_expiry;
static unsigned post_case;
static void expiry_then_post_isr(void)
{
    port_irq_state_t s = port_irq_save();
    owing_expiry.task = sched_find_task(PID_B);
    sched_expiry_prepare(&owing_expiry, PID_B, PORT_TIMEOUT1);
    owing_expiry.flags = 0;
    assert_int_equal(sched_post_timer_expiry(&owing_expiry), MT_OK);
    port_irq_restore(s);
    static uint8_t payload[4] = {1, 2, 3, 4};
    if (post_case == 0) (void) sched_post_isr_bare(PID_A, PORT_0);
    if (post_case == 1) (void) sched_post_isr(PID_A, PORT_0, payload, sizeof payload, 0);
    if (post_case == 2) (void) sched_post_isr_bare(0x77, PORT_0);
}

/* The TIMER the slot's message owes comes before whatever the interrupt
 * logs after the expiry, as its message runs first: a SEND of the general
 * path (the message queued after it) or an ERROR (no such task). Before,
 * the SEND or ERROR came first and the TIMER after it. */
static void test_owed_timer_is_logged_before_a_later_post_of_its_interrupt(void **state)
{
    (void) state;
    tport_irq_attach(3, expiry_then_post_isr);
    for (post_case = 0; post_case < 3; post_case++) {
        test_count_logged_errors(MT_OK); /* empty the log */
        tport_irq_raise(3);
        tport_busy(10);
        log_record_t rec[MOTET_LOG_ENTRIES];
        unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
        assert_true(n >= 2);
        assert_int_equal(rec[0].type, EV_TIMER);
        assert_int_equal(rec[0].pid, PID_B);
        assert_int_equal(rec[0].arg, 1);
        if (post_case < 2) {
            assert_int_equal(rec[1].type, EV_SEND);
            assert_int_equal(rec[1].arg, PID_A << 8 | PORT_0);
            const uint8_t types[] = {EV_START, EV_END, EV_START, EV_END};
            const mt_pid_t pids[] = {PID_B, PID_B, PID_A, PID_A};
            unsigned at = 2;
            for (unsigned i = 0; i < 4; i++, at++) {
                while (at < n && rec[at].type != EV_START && rec[at].type != EV_END) at++;
                assert_true(at < n);
                assert_int_equal(rec[at].type, types[i]);
                assert_int_equal(rec[at].pid, pids[i]);
            }
        } else {
            assert_int_equal(rec[1].type, EV_ERROR);
            assert_int_equal(rec[1].arg, MT_ERR_NO_TASK);
            assert_int_equal(rec[2].type, EV_START);
            assert_int_equal(rec[2].pid, PID_B);
        }
    }
}

static void test_refused_expiry_post_logs_timer_then_its_error(void **state)
{
    (void) state;
    /* Every message block held for a task that never gets its INIT (so
     * nothing runs them): the expiry for it, which must be held too and so
     * takes a pool block, is refused. */
    task_spec_t spec = {.pid = PID_HOLD, .prio = 1, .handler = recorder};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(timer_start_for(PID_HOLD, 1, 50, false), MT_OK);
    unsigned held = 0;
    while (sched_post_isr(PID_HOLD, PORT_0, NULL, 0, 0) == MT_OK) held++;
    assert_true(held > 0);
    test_count_logged_errors(MT_OK); /* empty the log */
    tport_busy(100);
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    unsigned timer = find_record(rec, n, EV_TIMER, PID_HOLD);
    assert_true(timer + 1 < n);
    assert_int_equal(rec[timer].arg, 1);
    /* The empty pool's error, right after the expiry it refuses. */
    assert_int_equal(rec[timer + 1].type, EV_ERROR);
    assert_int_equal(rec[timer + 1].arg, MT_ERR_QUEUE_FULL);
    for (unsigned i = 0; i < n; i++) assert_int_not_equal(rec[i].type, EV_SEND);
    assert_int_equal(n_hits, 0); /* the timeout is lost, and said so */
    assert_int_equal(timer_cache.in_use, 0);
}

/* ---- the expiry's own message ---- */

static void test_expiry_takes_no_block_from_the_message_pool(void **state)
{
    (void) state;
    uint8_t pool = msg_blocks_in_use();
    assert_int_equal(timer_start_for(PID_A, 2, 100, false), MT_OK);
    tport_busy(200);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_A, 2, 100);
    assert_int_equal(hits[0].msg_blocks_in_use, pool);
    assert_int_equal(msg_blocks_in_use(), pool);
    assert_int_equal(timer_cache.in_use, 0);
}

static void test_expiry_is_delivered_with_the_message_pool_empty(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_HOLD, .prio = 1, .handler = recorder};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    unsigned held = 0;
    while (sched_post_isr(PID_HOLD, PORT_0, NULL, 0, 0) == MT_OK) held++;
    assert_true(held > 0);
    assert_int_equal(msg_blocks_in_use(), MOTET_MAX_QUEUED_MSGS); /* the pool is empty */
    assert_int_equal(timer_start_for(PID_B, 1, 50, false), MT_OK);
    tport_busy(100);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_B, 1, 50);
}

static void test_expiry_before_the_last_one_ran_takes_a_pool_block(void **state)
{
    (void) state;
    uint8_t pool = msg_blocks_in_use();
    assert_int_equal(timer_start_for(PID_A, 0, 50, true), MT_OK);
    hog_for(120, NULL); /* expiries at 50 and 100 wait: none lost or merged */
    assert_int_equal(n_hits, 2);
    assert_hit(0, PID_A, 0, 120);
    assert_hit(1, PID_A, 0, 120);
    assert_int_equal(hits[0].msg_blocks_in_use, pool + 1); /* the second's */
    assert_int_equal(msg_blocks_in_use(), pool);
    assert_int_equal(timer_cache.in_use, 1);
    tport_busy(30); /* the phase is kept: the next at 150, in its own block */
    assert_int_equal(n_hits, 3);
    assert_hit(2, PID_A, 0, 150);
    assert_int_equal(hits[2].msg_blocks_in_use, pool);
    assert_int_equal(timer_stop_for(PID_A, 0), MT_OK);
    assert_int_equal(timer_cache.in_use, 0);
}

static void stop_timer_a0(void)
{
    assert_int_equal(timer_stop_for(PID_A, 0), MT_OK);
    assert_int_equal(timer_cache.in_use, 1); /* its expiry still waits in it */
    uint32_t left;
    assert_false(timer_remaining(PID_A, 0, &left));
}

static void test_stop_while_the_expiry_waits_delivers_it_once_then_frees_the_block(void **state)
{
    (void) state;
    uint8_t pool = msg_blocks_in_use();
    assert_int_equal(timer_start_for(PID_A, 0, 50, true), MT_OK);
    hog_for(70, stop_timer_a0);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_A, 0, 70);
    assert_int_equal(timer_cache.in_use, 0);
    assert_int_equal(msg_blocks_in_use(), pool);
    tport_busy(200);
    assert_int_equal(n_hits, 1);
}

static void restart_timer_a0(void)
{
    assert_int_equal(timer_cache.in_use, 1); /* the expired one-shot's */
    assert_int_equal(timer_start_for(PID_A, 0, 100, false), MT_OK);
    assert_int_equal(timer_cache.in_use, 1); /* it took its block back */
}

static void test_restart_while_the_expiry_waits_delivers_both(void **state)
{
    (void) state;
    uint8_t pool = msg_blocks_in_use();
    assert_int_equal(timer_start_for(PID_A, 0, 50, false), MT_OK);
    hog_for(70, restart_timer_a0);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_A, 0, 70); /* the old expiry, once */
    assert_int_equal(timer_cache.in_use, 1);
    uint32_t left;
    assert_true(timer_remaining(PID_A, 0, &left));
    assert_int_equal(left, 100);
    tport_busy(200);
    assert_int_equal(n_hits, 2);
    assert_hit(1, PID_A, 0, 170); /* the new timer, in full */
    assert_int_equal(timer_cache.in_use, 0);
    assert_int_equal(msg_blocks_in_use(), pool);
}

static void stop_and_start_timer_a0(void)
{
    stop_timer_a0();
    assert_int_equal(timer_start_for(PID_A, 0, 100, false), MT_OK);
    assert_int_equal(timer_cache.in_use, 1); /* it took its block back */
}

static void test_stop_and_start_while_the_expiry_waits_delivers_both(void **state)
{
    (void) state;
    uint8_t pool = msg_blocks_in_use();
    assert_int_equal(timer_start_for(PID_A, 0, 50, true), MT_OK);
    hog_for(70, stop_and_start_timer_a0);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_A, 0, 70); /* the stopped timer's expiry, once */
    tport_busy(200);
    assert_int_equal(n_hits, 2);
    assert_hit(1, PID_A, 0, 170); /* the new one-shot, once */
    assert_int_equal(timer_cache.in_use, 0);
    assert_int_equal(msg_blocks_in_use(), pool);
}

/* Tasks enough to hold every timer block, FIRST_HOLDER on: a timer needs
 * its task. */
#define FIRST_HOLDER 0x40
#define HOLDERS      ((MOTET_MAX_TIMERS + TIMERS_PER_TASK - 1) / TIMERS_PER_TASK)
static void make_timer_holders(void)
{
    for (mt_pid_t pid = FIRST_HOLDER; pid < FIRST_HOLDER + HOLDERS; pid++)
        make_task(pid, 1, recorder);
}

static void fill_the_timer_cache(void)
{
    /* A's expired one-shot keeps its block while its expiry waits. */
    assert_int_equal(timer_cache.in_use, 1);
    for (mt_pid_t pid = FIRST_HOLDER; timer_cache.in_use < MOTET_MAX_TIMERS; pid++)
        for (uint8_t n = 0; n < TIMERS_PER_TASK && timer_cache.in_use < MOTET_MAX_TIMERS; n++)
            assert_int_equal(timer_start_for(pid, n, 10000, false), MT_OK);
    test_count_logged_errors(MT_OK);
    assert_int_equal(timer_start_for(PID_B, 0, 100, false), MT_ERR_NO_SLAB);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 1);
    /* A's own restart takes its block back. */
    assert_int_equal(timer_start_for(PID_A, 0, 100, false), MT_OK);
}

static void test_a_waiting_expiry_keeps_its_timer_block_until_it_runs(void **state)
{
    (void) state;
    make_timer_holders();
    assert_int_equal(timer_start_for(PID_A, 0, 50, false), MT_OK);
    hog_for(70, fill_the_timer_cache);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_A, 0, 70);
    assert_int_equal(timer_cache.in_use, MOTET_MAX_TIMERS);
    tport_busy(100);
    assert_int_equal(n_hits, 2);
    assert_hit(1, PID_A, 0, 170);
    assert_int_equal(timer_cache.in_use, MOTET_MAX_TIMERS - 1);
}

static void kill_a(void)
{
    assert_int_equal(sched_task_kill(PID_A), MT_OK);
}

static void test_kill_with_expiries_waiting_frees_every_block(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, 50, true), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 1, 60, false), MT_OK);
    hog_for(120, kill_a); /* A0 at 50 (own), 100 (pool); A1 at 60 (own, retired) */
    assert_int_equal(n_hits, 0);
    assert_int_equal(timer_cache.in_use, 0);
    assert_int_equal(msg_blocks_in_use(), 0);
}

/* ---- periodic ---- */

static void test_periodic_timer_does_not_drift_over_1000_periods(void **state)
{
    (void) state;
    handler_busy = 237; /* each handler works a while after its expiry */
    assert_int_equal(timer_start_for(PID_A, 0, 1000, true), MT_OK);
    run_until(1000ul * 1000u + 500u); /* 1000u * 1000u wraps where int is 16-bit */
    assert_int_equal(n_hits, 1000);
    for (unsigned k = 0; k < 1000; k++) assert_hit(k, PID_A, 0, (uint64_t) (k + 1) * 1000u);
    assert_int_equal(timer_interrupt_count(), 1000);
}

static void test_periodic_timer_keeps_its_phase_when_the_interrupt_is_late(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, 1000, true), MT_OK);
    port_irq_state_t s = port_irq_save();
    tport_busy(2500); /* deadlines 1000 and 2000 pass with interrupts off */
    assert_int_equal(n_hits, 0);
    port_irq_restore(s);
    assert_int_equal(n_hits, 2); /* both caught up at once */
    assert_hit(0, PID_A, 0, 2500);
    assert_hit(1, PID_A, 0, 2500);
    tport_busy(2000);
    assert_int_equal(n_hits, 4);
    assert_hit(2, PID_A, 0, 3000); /* back on the grid, not 3500 */
    assert_hit(3, PID_A, 0, 4000);
}

/* ---- stop and restart ---- */

static void test_stopped_timer_is_never_delivered(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, 500, false), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 1, 800, true), MT_OK);
    tport_busy(200);
    assert_int_equal(timer_stop_for(PID_A, 0), MT_OK);
    assert_int_equal(timer_stop_for(PID_A, 1), MT_OK);
    run_until(10000);
    assert_int_equal(n_hits, 0);
    assert_int_equal(timer_interrupt_count(), 0);
    test_count_logged_errors(MT_OK);
    assert_int_equal(timer_stop_for(PID_A, 0), MT_ERR_STATE); /* not running */
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
}

static void test_stopping_the_head_leaves_the_others_on_time(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, 300, false), MT_OK);
    assert_int_equal(timer_start_for(PID_B, 0, 700, false), MT_OK);
    tport_busy(100);
    assert_int_equal(timer_stop_for(PID_A, 0), MT_OK);
    run_until(2000);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_B, 0, 700);
}

static void test_restart_replaces_the_running_timer(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 2, 500, true), MT_OK);
    assert_int_equal(timer_start_for(PID_B, 0, 600, false), MT_OK);
    tport_busy(300);
    /* The head moves behind B: the compare must follow it, or a spurious
     * interrupt comes at 500. */
    assert_int_equal(timer_start_for(PID_A, 2, 500, false), MT_OK); /* now one-shot */
    run_until(5000);
    assert_int_equal(n_hits, 2);
    assert_hit(0, PID_B, 0, 600);
    assert_hit(1, PID_A, 2, 800);
    assert_int_equal(timer_interrupt_count(), 2);
}

static void test_timer_started_while_the_head_is_overdue_keeps_its_length(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, 1000, false), MT_OK);
    port_irq_state_t s = port_irq_save();
    tport_busy(1500); /* A is due, its interrupt held */
    assert_int_equal(timer_start_for(PID_B, 0, 300, false), MT_OK);
    port_irq_restore(s);
    tport_busy(1000);
    assert_int_equal(n_hits, 2);
    assert_hit(0, PID_A, 0, 1500);
    assert_hit(1, PID_B, 0, 1800);
}

static void test_timer_started_after_a_long_idle_fires_on_time(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, 100, false), MT_OK);
    run_until(0xF0000000u); /* idle for most of the 32-bit time range */
    assert_int_equal(timer_start_for(PID_B, 1, 0x20000000u, false), MT_OK);
    run_until(0x120000000u);
    assert_int_equal(n_hits, 2);
    assert_hit(0, PID_A, 0, 100);
    assert_hit(1, PID_B, 1, 0x110000000u);
}

static void test_timer_start_in_a_handler_belongs_to_the_running_task(void **state)
{
    (void) state;
    start_from_handler = 1;
    start_result = MT_ERR_COUNT;
    make_task(0x22, 3, recorder);
    assert_int_equal(start_result, MT_OK);
    run_until(1000);
    assert_int_equal(n_hits, 1);
    assert_hit(0, 0x22, 1, 700);
    test_count_logged_errors(MT_OK);
    assert_int_equal(timer_start(0, 10, false), MT_ERR_STATE); /* no running task */
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
}

/* ---- limits ---- */

static void test_fifth_timer_of_a_task_is_rejected(void **state)
{
    (void) state;
    for (uint8_t n = 0; n < TIMERS_PER_TASK; n++)
        assert_int_equal(timer_start_for(PID_A, n, 1000, false), MT_OK);
    test_count_logged_errors(MT_OK);
    assert_int_equal(timer_start_for(PID_A, TIMERS_PER_TASK, 1000, false), MT_ERR_NO_TIMER);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TIMER), 1);
    start_from_handler = TIMERS_PER_TASK; /* the same through timer_start() */
    make_task(0x22, 3, recorder);
    assert_int_equal(start_result, MT_ERR_NO_TIMER);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TIMER), 1);
}

static void test_tick_counts_out_of_range_are_invalid(void **state)
{
    (void) state;
    test_count_logged_errors(MT_OK);
    assert_int_equal(timer_start_for(PID_A, 0, 0, false), MT_ERR_INVALID);
    assert_int_equal(timer_start_for(PID_A, 0, 0x80000000u, true), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 2);
    assert_int_equal(timer_start_for(PID_A, 0, 0x7FFFFFFFu, false), MT_OK);
    uint32_t left = 0;
    assert_true(timer_remaining(PID_A, 0, &left));
    assert_int_equal(left, 0x7FFFFFFFu);
}

static void test_a_timer_for_a_virtual_pid_is_invalid(void **state)
{
    (void) state;
    test_count_logged_errors(MT_OK);
    assert_int_equal(timer_start_for(MT_PID_MULTICAST, 0, 1000, false), MT_ERR_INVALID);
    assert_int_equal(timer_start_for(MT_PID_TIMESYNC, 0, 1000, true), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 2);
    assert_false(timer_remaining(MT_PID_MULTICAST, 0, NULL));
}

/* A system task's timers (the application manager's verdict deadline,
 * the migrator's tick) are the kernel's: timer.h's calls for an explicit
 * owner refuse them (MT_ERR_INVALID, logged), and change nothing. */
static void test_a_system_tasks_timer_is_the_kernels(void **state)
{
    (void) state;
    test_count_logged_errors(MT_OK);
    assert_int_equal(timer_start_for(MT_PID_APPMGR, 0, 1000, false), MT_ERR_INVALID);
    assert_int_equal(timer_start_for(MT_PID_MIGRATOR, 0, 1000, true), MT_ERR_INVALID);
    assert_int_equal(timer_start_phase(MT_PID_APPMGR, 1, 1000, 0), MT_ERR_INVALID);
    assert_int_equal(timer_stop_for(MT_PID_APPMGR, 0), MT_ERR_INVALID);
    assert_int_equal(timer_start_phase(MT_PID_MIGRATOR, 0, 1000, 500), MT_ERR_INVALID);
    assert_int_equal(timer_stop_for(MT_PID_MIGRATOR, 0), MT_ERR_INVALID);
    assert_int_equal(test_count_logged_errors(MT_ERR_INVALID), 6);
    assert_false(timer_remaining(MT_PID_APPMGR, 0, NULL));
    assert_false(timer_remaining(MT_PID_APPMGR, 1, NULL));
    assert_false(timer_remaining(MT_PID_MIGRATOR, 0, NULL));
}

static void test_exhausted_timer_cache_is_reported(void **state)
{
    (void) state;
    unsigned started = 0;
    make_timer_holders();
    for (mt_pid_t pid = FIRST_HOLDER; started < MOTET_MAX_TIMERS; pid++)
        for (uint8_t n = 0; n < TIMERS_PER_TASK && started < MOTET_MAX_TIMERS; n++, started++)
            assert_int_equal(timer_start_for(pid, n, 10000, false), MT_OK);
    test_count_logged_errors(MT_OK);
    assert_int_equal(timer_start_for(PID_A, 0, 100, false), MT_ERR_NO_SLAB);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_SLAB), 1);
    /* A restart reuses its own block; a stop makes room for a new one. */
    assert_int_equal(timer_start_for(0x40, 0, 20000, false), MT_OK);
    assert_int_equal(timer_stop_for(0x40, 1), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 0, 100, false), MT_OK);
    tport_busy(200);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_A, 0, 100);
}

/* A timer is refused for a pid with no task here, `pid`: MT_ERR_NO_TASK
 * from both calls that name an owner, each logged, no timer block taken,
 * nothing running for it and nothing delivered or logged later. Before, it
 * was armed: its expiry, for no one, logged MT_ERR_NO_TASK each period for
 * good and held a block. */
static void assert_no_timer_for_a_missing_task(mt_pid_t pid)
{
    uint8_t blocks = timer_cache.in_use;
    test_count_logged_errors(MT_OK); /* empty the log */
    assert_int_equal(timer_start_for(pid, 0, 100, true), MT_ERR_NO_TASK);
    assert_int_equal(timer_start_phase(pid, 1, 50, 100), MT_ERR_NO_TASK);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 2);
    assert_int_equal(timer_cache.in_use, blocks);
    assert_false(timer_remaining(pid, 0, NULL));
    assert_false(timer_remaining(pid, 1, NULL));
    tport_busy(1000);
    assert_int_equal(test_count_logged_errors(MT_ERR_NO_TASK), 0);
    assert_int_equal(timer_interrupt_count(), 0);
    assert_int_equal(n_hits, 0);
}

static void test_a_timer_for_a_pid_never_created_is_refused(void **state)
{
    (void) state;
    assert_false(sched_task_exists(0x33));
    assert_no_timer_for_a_missing_task(0x33);
}

/* A killed task's pid: refused, and a task created later under the pid
 * receives no timeout it never asked for. */
static void test_a_timer_for_a_killed_task_is_refused(void **state)
{
    (void) state;
    assert_int_equal(sched_task_kill(PID_B), MT_OK);
    sched_run_pending();
    assert_no_timer_for_a_missing_task(PID_B);
    make_task(PID_B, 2, recorder);
    tport_busy(1000);
    assert_int_equal(n_hits, 0);
    assert_int_equal(timer_cache.in_use, 0);
}

static void test_a_timer_for_a_remote_tasks_pid_is_refused(void **state)
{
    (void) state;
    assert_int_equal(sched_task_create_remote(0x34, 2, 1), MT_OK);
    assert_no_timer_for_a_missing_task(0x34);
}

/* A created task not yet initialised exists: its timer runs (boot code
 * starts them so), and its expiry waits for the task's INIT. */
static void test_a_timer_for_a_task_not_yet_initialised_runs(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = PID_HOLD, .prio = 1, .handler = recorder};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(timer_start_phase(PID_HOLD, 2, 50, 0), MT_OK);
    assert_int_equal(timer_start_for(PID_HOLD, 1, 60, false), MT_OK);
    assert_int_equal(timer_cache.in_use, 2);
    tport_busy(100);
    assert_int_equal(n_hits, 0);
    assert_int_equal(sched_task_init(PID_HOLD, NULL, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(n_hits, 2);
    assert_int_equal(hits[0].pid, PID_HOLD);
    assert_int_equal(hits[0].port, PORT_TIMEOUT2);
    assert_int_equal(hits[1].port, PORT_TIMEOUT1);
}

/* ---- tickless ---- */

static void test_no_timer_no_interrupt_for_ten_seconds(void **state)
{
    (void) state;
    uint32_t sleeps = tport_sleep_count();
    run_until(TIMER_MS(10000));
    assert_int_equal(tport_time(), TIMER_MS(10000));
    assert_int_equal(timer_interrupt_count(), 0);
    assert_int_equal(tport_sleep_count() - sleeps, 1); /* one sleep, no polling */
}

static void test_one_second_timer_takes_one_interrupt_per_expiry(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, TIMER_MS(1000), true), MT_OK);
    run_until(TIMER_MS(10500));
    assert_int_equal(n_hits, 10);
    assert_int_equal(timer_interrupt_count(), 10);
    assert_hit(9, PID_A, 0, TIMER_MS(10000));
}

/* ---- counter wrap ---- */

static void test_timers_cross_the_32_bit_counter_wrap(void **state)
{
    (void) state;
    assert_int_equal(port_counter_read(), 0xFFFFF000u);
    assert_int_equal(timer_now(), 0xFFFFF000u);
    assert_int_equal(timer_start_for(PID_A, 0, 0x2000, false), MT_OK);
    assert_int_equal(timer_start_for(PID_B, 1, 0x800, true), MT_OK);
    run_until(0x2400);
    assert_int_equal(n_hits, 5);
    assert_hit(0, PID_B, 1, 0x800);
    assert_hit(1, PID_B, 1, 0x1000); /* the counter reads 0 here */
    assert_hit(2, PID_B, 1, 0x1800);
    assert_hit(3, PID_A, 0, 0x2000); /* started first, so first on a tie */
    assert_hit(4, PID_B, 1, 0x2000);
    assert_int_equal(port_counter_read(), 0x1400u);
    assert_int_equal(timer_now(), 0x1400u);
}

/* ---- the clock's read rule (timer_clock.h) ---- */

static int setup_before_a_counter_wrap(void **state)
{
    (void) state;
    test_boot_at(0xFFFFFF00u); /* a 16-bit counter starts at 0xFF00 */
    return 0;
}

/* Each read here is a wrap less 256 ticks after the one before, the most
 * the rule allows: on a 16-bit counter every one crosses a wrap, and an
 * event record drained comes out at kernel time as timer_now() counts it.
 * (A record is no read of the clock: the log stamps it with the counter
 * alone, log_ring.h.) */
static void test_kernel_time_sees_every_wrap_of_reads_a_wrap_less_256_ticks_apart(void **state)
{
    (void) state;
    const uint32_t step = 0xFF00u;
    uint32_t start = timer_now();
    tport_busy(step);
    assert_int_equal(timer_now() - start, step);
    tport_busy(step);
    log_event(EV_WAKE, 0, 0);
    assert_int_equal(timer_now() - start, 2 * step);
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    assert_true(n >= 1);
    assert_int_equal(rec[n - 1].type, EV_WAKE);
    assert_int_equal(rec[n - 1].time - start, 2 * step);
    tport_busy(step);
    assert_int_equal(timer_now() - start, 3 * step);
    assert_int_equal((port_counter_t) timer_now(), port_counter_read());
}

/* The kernel time of the last record drained. */
static uint32_t last_record_time(void)
{
    log_record_t rec[MOTET_LOG_ENTRIES];
    unsigned n = log_drain(rec, MOTET_LOG_ENTRIES);
    assert_true(n >= 1);
    assert_int_equal(rec[n - 1].type, EV_WAKE);
    return rec[n - 1].time;
}

/* Records further apart than a counter wrap while the clock is read every
 * half wrap (as a running timer has it read): on a 16-bit counter the
 * clock's time-base records carry the wraps no stamp shows. */
static void test_records_more_than_a_wrap_apart_keep_kernel_time(void **state)
{
    (void) state;
    const uint32_t half = 0x8000u;
    uint32_t start = timer_now();
    log_event(EV_WAKE, 0, 0);
    uint32_t first = last_record_time();
    for (unsigned i = 0; i < 5; i++) {
        tport_busy(half);
        timer_now();
    }
    log_event(EV_WAKE, 0, 0);
    assert_int_equal(last_record_time() - first, 5 * half);
    assert_int_equal(timer_now() - start, 5 * half);
}

/* Records half a wrap apart while nothing reads the clock: the records
 * count the wraps the clock misses (no timer runs: timer.c), and keep
 * counting them once the clock is read again, so the log's times never
 * step back. */
static void test_records_keep_the_wraps_the_clock_missed(void **state)
{
    (void) state;
    const uint32_t half = 0x8000u;
    log_event(EV_WAKE, 0, 0);
    uint32_t first = last_record_time();
    for (unsigned i = 0; i < 4; i++) {
        tport_busy(half);
        log_event(EV_WAKE, 0, 0);
    }
    for (unsigned i = 0; i < 4; i++) {
        tport_busy(half);
        timer_now();
    }
    log_event(EV_WAKE, 0, 0);
    assert_int_equal(last_record_time() - first, 8 * half);
}

/* ---- queries ---- */

static void test_remaining_time_and_next_deadline(void **state)
{
    (void) state;
    uint32_t left = 0;
    assert_false(timer_next_deadline(&left));
    assert_false(timer_remaining(PID_A, 0, &left));
    assert_int_equal(timer_start_for(PID_A, 0, 1000, false), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 1, 5000, true), MT_OK);
    tport_busy(300);
    assert_true(timer_remaining(PID_A, 0, &left));
    assert_int_equal(left, 700);
    assert_true(timer_remaining(PID_A, 1, &left));
    assert_int_equal(left, 4700);
    assert_false(timer_remaining(PID_B, 0, &left));
    assert_true(timer_next_deadline(&left));
    assert_int_equal(left, 700);
    tport_busy(5200); /* 5500: A0 expired, A1 fired once, next at 10000 */
    assert_false(timer_remaining(PID_A, 0, &left));
    assert_true(timer_remaining(PID_A, 1, &left));
    assert_int_equal(left, 4500);
    assert_true(timer_next_deadline(&left));
    assert_int_equal(left, 4500);
    assert_int_equal(timer_stop_for(PID_A, 1), MT_OK);
    assert_false(timer_next_deadline(&left));
}

/* Waits longer than the compare may be armed ahead (half the range of a
 * 16-bit counter): each is linked in steps (timer.c), fires on its tick
 * and reports what is left of the whole wait, not of its step. */
static void test_waits_longer_than_half_the_counter_range_fire_on_their_tick(void **state)
{
    (void) state;
    uint32_t left = 0, period = 0;
    assert_int_equal(timer_start_for(PID_A, 0, 100000u, false), MT_OK);
    assert_int_equal(timer_start_for(PID_B, 1, 70000u, true), MT_OK);
    assert_int_equal(timer_start_for(PID_B, 2, 1000u, false), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 3, 0x7FFFFFFFu, false), MT_OK);
    tport_busy(40000);
    assert_true(timer_remaining(PID_A, 0, &left));
    assert_int_equal(left, 60000u);
    assert_true(timer_info(PID_B, 1, &left, &period));
    assert_int_equal(left, 30000u);
    assert_int_equal(period, 70000u);
    assert_true(timer_remaining(PID_A, 3, &left));
    assert_int_equal(left, 0x7FFFFFFFu - 40000u);
    assert_true(timer_next_deadline(&left));
    assert_true(left > 0 && left <= 30000u);
    run_until(215000);
    assert_int_equal(n_hits, 5);
    assert_hit(0, PID_B, 2, 1000);
    assert_hit(1, PID_B, 1, 70000);
    assert_hit(2, PID_A, 0, 100000);
    assert_hit(3, PID_B, 1, 140000);
    assert_hit(4, PID_B, 1, 210000);
    assert_true(timer_remaining(PID_A, 3, &left));
    assert_int_equal(left, 0x7FFFFFFFu - 215000u);
    /* Stopped between two of its steps, a long wait is gone. */
    assert_int_equal(timer_stop_for(PID_A, 3), MT_OK);
    assert_false(timer_remaining(PID_A, 3, &left));
}

/* ---- kill ---- */

static void test_kill_stops_the_tasks_timers(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_A, 0, 100, false), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 3, 200, true), MT_OK);
    assert_int_equal(timer_start_for(PID_B, 0, 300, false), MT_OK);
    assert_int_equal(sched_task_kill(PID_A), MT_OK);
    uint32_t left;
    assert_false(timer_remaining(PID_A, 0, &left));
    assert_false(timer_remaining(PID_A, 3, &left));
    run_until(1000);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_B, 0, 300);
    assert_int_equal(timer_interrupt_count(), 1);
}

static void test_stop_all_counts_what_it_stopped(void **state)
{
    (void) state;
    assert_int_equal(timer_start_for(PID_B, 0, 100, false), MT_OK);
    assert_int_equal(timer_start_for(PID_B, 2, 50, true), MT_OK);
    assert_int_equal(timer_start_for(PID_A, 1, 150, false), MT_OK);
    assert_int_equal(timer_stop_all(PID_B), 2);
    assert_int_equal(timer_stop_all(PID_B), 0);
    tport_busy(1000);
    assert_int_equal(n_hits, 1);
    assert_hit(0, PID_A, 1, 150);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_timers_fire_in_deadline_order_whatever_the_start_order, setup),
        cmocka_unit_test_setup(test_equal_deadlines_both_fire_in_start_order, setup),
        cmocka_unit_test_setup(test_expiry_is_logged_with_owner_and_index, setup),
        cmocka_unit_test_setup(test_expiry_is_one_timer_record_before_its_handler_starts, setup),
        cmocka_unit_test_setup(test_expiry_run_at_the_exit_is_one_slot_for_its_timer_and_start,
                               setup),
        cmocka_unit_test_setup(test_expiries_at_one_interrupt_are_logged_in_their_order, setup),
        cmocka_unit_test_setup(test_owed_timer_is_logged_before_a_later_post_of_its_interrupt,
                               setup),
        cmocka_unit_test_setup(test_refused_expiry_post_logs_timer_then_its_error, setup),
        cmocka_unit_test_setup(test_expiry_takes_no_block_from_the_message_pool, setup),
        cmocka_unit_test_setup(test_expiry_is_delivered_with_the_message_pool_empty, setup),
        cmocka_unit_test_setup(test_expiry_before_the_last_one_ran_takes_a_pool_block, setup),
        cmocka_unit_test_setup(
            test_stop_while_the_expiry_waits_delivers_it_once_then_frees_the_block, setup),
        cmocka_unit_test_setup(test_restart_while_the_expiry_waits_delivers_both, setup),
        cmocka_unit_test_setup(test_stop_and_start_while_the_expiry_waits_delivers_both, setup),
        cmocka_unit_test_setup(test_a_waiting_expiry_keeps_its_timer_block_until_it_runs, setup),
        cmocka_unit_test_setup(test_kill_with_expiries_waiting_frees_every_block, setup),
        cmocka_unit_test_setup(test_periodic_timer_does_not_drift_over_1000_periods, setup),
        cmocka_unit_test_setup(test_periodic_timer_keeps_its_phase_when_the_interrupt_is_late,
                               setup),
        cmocka_unit_test_setup(test_stopped_timer_is_never_delivered, setup),
        cmocka_unit_test_setup(test_stopping_the_head_leaves_the_others_on_time, setup),
        cmocka_unit_test_setup(test_restart_replaces_the_running_timer, setup),
        cmocka_unit_test_setup(test_timer_started_while_the_head_is_overdue_keeps_its_length,
                               setup),
        cmocka_unit_test_setup(test_timer_started_after_a_long_idle_fires_on_time, setup),
        cmocka_unit_test_setup(test_timer_start_in_a_handler_belongs_to_the_running_task, setup),
        cmocka_unit_test_setup(test_fifth_timer_of_a_task_is_rejected, setup),
        cmocka_unit_test_setup(test_tick_counts_out_of_range_are_invalid, setup),
        cmocka_unit_test_setup(test_a_timer_for_a_virtual_pid_is_invalid, setup),
        cmocka_unit_test_setup(test_a_system_tasks_timer_is_the_kernels, setup),
        cmocka_unit_test_setup(test_exhausted_timer_cache_is_reported, setup),
        cmocka_unit_test_setup(test_a_timer_for_a_pid_never_created_is_refused, setup),
        cmocka_unit_test_setup(test_a_timer_for_a_killed_task_is_refused, setup),
        cmocka_unit_test_setup(test_a_timer_for_a_remote_tasks_pid_is_refused, setup),
        cmocka_unit_test_setup(test_a_timer_for_a_task_not_yet_initialised_runs, setup),
        cmocka_unit_test_setup(test_no_timer_no_interrupt_for_ten_seconds, setup),
        cmocka_unit_test_setup(test_one_second_timer_takes_one_interrupt_per_expiry, setup),
        cmocka_unit_test_setup(test_timers_cross_the_32_bit_counter_wrap, setup_at_wrap),
        cmocka_unit_test_setup(test_waits_longer_than_half_the_counter_range_fire_on_their_tick,
                               setup),
        cmocka_unit_test_setup(
            test_kernel_time_sees_every_wrap_of_reads_a_wrap_less_256_ticks_apart,
            setup_before_a_counter_wrap),
        cmocka_unit_test_setup(test_records_more_than_a_wrap_apart_keep_kernel_time,
                               setup_before_a_counter_wrap),
        cmocka_unit_test_setup(test_records_keep_the_wraps_the_clock_missed,
                               setup_before_a_counter_wrap),
        cmocka_unit_test_setup(test_remaining_time_and_next_deadline, setup),
        cmocka_unit_test_setup(test_kill_stops_the_tasks_timers, setup),
        cmocka_unit_test_setup(test_stop_all_counts_what_it_stopped, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
