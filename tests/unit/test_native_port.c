/* SPDX-License-Identifier: MIT */
/*
 * The native port: interrupts as signals with lazy masking, the interrupt
 * exit dispatch, the simulated clock (busy, sleep, scheduled lines, the
 * compare), the real clock, options and the deterministic random numbers.
 */
/* fork, pipe, clock_gettime */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "native.h"
#include "test_support.h"
#include "timer_internal.h"

#define PID_T    0x30 /* the task interrupts post to */
#define PID_STOP 0x3F

static unsigned isr_count[NATIVE_IRQ_LINES];
static uint64_t isr_time[8];
static unsigned n_isr_time;
static char trace[256];

static bool task_saw_in_isr;
static bool task_saw_irq_off;
static bool task_saw_body_done;
static bool isr_saw_in_isr;
static bool body_done;
static unsigned task_runs;
static uint32_t task_busy;
static bool task_raises_line1;

static void note(const char *s)
{
    strncat(trace, s, sizeof trace - strlen(trace) - 1);
}

/* The task interrupt bodies post to: records the context it runs in. */
static mt_err_t task_t_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port != PORT_0) return MT_OK;
    task_runs++;
    task_saw_in_isr = port_in_isr();
    task_saw_body_done = body_done;
    port_irq_state_t s = port_irq_save();
    task_saw_irq_off = s != 0;
    port_irq_restore(s);
    note("T( ");
    if (task_raises_line1) {
        port_native_irq_raise(1);
        note(port_in_isr() ? "in-isr " : "");
    }
    if (task_busy) port_native_busy(task_busy);
    note(")T ");
    return MT_OK;
}

static mt_err_t stopper(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) data;
    (void) len;
    (void) state;
    if (port == PORT_INIT) return timer_start(0, TIMER_MS(20), false);
    if (port == PORT_TIMEOUT0) sched_stop();
    return MT_OK;
}

static void isr_line0_posts(void)
{
    isr_count[0]++;
    isr_saw_in_isr = port_in_isr();
    note("isr0 ");
    assert_int_equal(sched_post_isr(PID_T, PORT_0, NULL, 0, 0), MT_OK);
    body_done = true;
}

static void isr_line1(void)
{
    isr_count[1]++;
    note("isr1 ");
}

/* Line 2 raises line 1 inside its body: line 1 must wait for the body. */
static void isr_line2_raises(void)
{
    isr_count[2]++;
    note("isr2( ");
    port_native_irq_raise(1);
    note(")isr2 ");
}

static void isr_line3_stamps(void)
{
    isr_count[3]++;
    if (n_isr_time < 8) isr_time[n_isr_time++] = port_native_time();
}

static void make_task(mt_pid_t pid, mt_prio_t prio, task_handler_t handler)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .handler = handler};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
    sched_run_pending();
}

static void reset_state(void)
{
    memset(isr_count, 0, sizeof isr_count);
    n_isr_time = 0;
    trace[0] = '\0';
    task_saw_in_isr = task_saw_irq_off = task_saw_body_done = isr_saw_in_isr = false;
    body_done = false;
    task_runs = 0;
    task_busy = 0;
    task_raises_line1 = false;
    make_task(PID_T, 3, task_t_handler);
    port_native_irq_attach(0, isr_line0_posts);
    port_native_irq_attach(1, isr_line1);
    port_native_irq_attach(2, isr_line2_raises);
    port_native_irq_attach(3, isr_line3_stamps);
}

static int setup(void **state)
{
    test_boot(state);
    reset_state();
    return 0;
}

/* ---- interrupts and masking ---- */

static void test_raise_runs_the_interrupt_at_once_when_enabled(void **state)
{
    (void) state;
    assert_false(port_in_isr());
    port_native_irq_raise(1);
    assert_int_equal(isr_count[1], 1);
    port_native_irq_raise(1);
    assert_int_equal(isr_count[1], 2);
    assert_false(port_in_isr());
}

static void test_raise_is_held_while_masked_and_taken_at_restore(void **state)
{
    (void) state;
    port_irq_state_t outer = port_irq_save();
    assert_int_equal(outer, 0); /* enabled after boot */
    port_native_irq_raise(1);
    assert_int_equal(isr_count[1], 0);
    port_irq_state_t inner = port_irq_save();
    assert_int_not_equal(inner, 0);
    port_irq_restore(inner); /* still masked by the outer save */
    assert_int_equal(isr_count[1], 0);
    port_irq_restore(outer);
    assert_int_equal(isr_count[1], 1);
    port_irq_restore(port_irq_save()); /* nothing left pending */
    assert_int_equal(isr_count[1], 1);
}

static void test_two_lines_raised_while_masked_both_run(void **state)
{
    (void) state;
    port_irq_state_t s = port_irq_save();
    port_native_irq_raise(1);
    port_native_irq_raise(3);
    port_native_irq_raise(1); /* a line is a flag: raised twice, taken once */
    port_irq_restore(s);
    assert_int_equal(isr_count[1], 1);
    assert_int_equal(isr_count[3], 1);
}

static void test_in_isr_is_true_in_the_body_only(void **state)
{
    (void) state;
    port_native_irq_raise(0);
    assert_int_equal(isr_count[0], 1);
    assert_true(isr_saw_in_isr);
    /* The posted task ran before raise() returned: at interrupt exit, after
     * the body, outside it, with interrupts enabled. */
    assert_int_equal(task_runs, 1);
    assert_true(task_saw_body_done);
    assert_false(task_saw_in_isr);
    assert_false(task_saw_irq_off);
    assert_false(port_in_isr());
    assert_string_equal(trace, "isr0 T( )T ");
}

static void test_interrupt_body_holds_further_interrupts(void **state)
{
    (void) state;
    port_native_irq_raise(2);
    assert_string_equal(trace, "isr2( )isr2 isr1 ");
}

static void test_interrupt_nests_inside_the_exit_dispatch(void **state)
{
    (void) state;
    task_raises_line1 = true;
    port_native_irq_raise(0);
    /* Line 1 preempted the handler running at line 0's exit, at once. */
    assert_string_equal(trace, "isr0 T( isr1 )T ");
    assert_int_equal(isr_count[1], 1);
}

/* ---- simulated clock: busy ---- */

static void test_scheduled_lines_preempt_busy_code_at_their_exact_tick(void **state)
{
    (void) state;
    port_native_irq_schedule(3, 400);
    port_native_irq_schedule(3, 150);
    port_native_busy(1000);
    assert_int_equal(n_isr_time, 2);
    assert_int_equal(isr_time[0], 150);
    assert_int_equal(isr_time[1], 400);
    assert_int_equal(port_native_time(), 1000);
}

static void test_preempting_work_does_not_count_as_the_callers_work(void **state)
{
    (void) state;
    task_busy = 50;
    port_native_irq_schedule(0, 150);
    port_native_busy(1000);
    assert_int_equal(task_runs, 1);
    assert_int_equal(port_native_time(), 1050);
}

static void test_scheduled_line_is_held_by_masked_busy_code(void **state)
{
    (void) state;
    port_native_irq_schedule(3, 100);
    port_irq_state_t s = port_irq_save();
    port_native_busy(500);
    assert_int_equal(isr_count[3], 0);
    port_irq_restore(s);
    assert_int_equal(n_isr_time, 1);
    assert_int_equal(isr_time[0], 500);
}

static void test_counter_and_cycles_follow_the_simulated_clock(void **state)
{
    (void) state;
    test_boot_at(0xFFFFFF00u);
    assert_int_equal(port_counter_read(), 0xFFFFFF00u);
    assert_int_equal(port_cycles(), 0);
    port_native_busy(0x200);
    assert_int_equal(port_native_time(), 0x200);
    assert_int_equal(port_counter_read(), 0x100u);
    assert_int_equal(port_cycles(), 0x200u);
}

/* ---- simulated clock: sleep and the compare ---- */

static void test_sleep_jumps_to_the_next_event_and_counts_it(void **state)
{
    (void) state;
    port_native_irq_schedule(0, 700);
    port_irq_state_t s = port_irq_save();
    port_sleep(PORT_SLEEP_DEEP);
    /* Woken at 700; the body and its exit dispatch ran inside the sleep. */
    assert_int_equal(port_native_time(), 700);
    assert_int_equal(isr_count[0], 1);
    assert_int_equal(task_runs, 1);
    assert_int_equal(port_native_sleep_count(), 1);
    assert_int_equal(port_native_sleep_ticks(), 700);
    /* Back with interrupts off. */
    port_native_irq_raise(1);
    assert_int_equal(isr_count[1], 0);
    port_irq_restore(s);
    assert_int_equal(isr_count[1], 1);
}

static void test_sleep_with_an_interrupt_pending_does_not_wait(void **state)
{
    (void) state;
    port_native_irq_schedule(3, 5000);
    port_irq_state_t s = port_irq_save();
    port_native_irq_raise(1);
    port_sleep(PORT_SLEEP_IDLE);
    assert_int_equal(isr_count[1], 1);
    assert_int_equal(isr_count[3], 0);
    assert_int_equal(port_native_time(), 0);
    assert_int_equal(port_native_sleep_ticks(), 0);
    port_irq_restore(s);
}

static void test_compare_wakes_sleep_at_its_tick(void **state)
{
    (void) state;
    port_native_irq_schedule(3, 5000);
    port_irq_state_t s = port_irq_save();
    port_compare_set((port_counter_t) (port_counter_read() + 100));
    port_compare_set((port_counter_t) (port_counter_read() + 300)); /* replaces it */
    port_sleep(PORT_SLEEP_DEEP);
    assert_int_equal(port_native_time(), 300);
    assert_int_equal(timer_interrupt_count(), 1);
    assert_int_equal(isr_count[3], 0);
    port_irq_restore(s);
}

static void test_disabled_compare_never_fires(void **state)
{
    (void) state;
    port_irq_state_t s = port_irq_save();
    port_compare_set((port_counter_t) (port_counter_read() + 100));
    port_compare_disable();
    port_irq_restore(s);
    port_native_busy(1000);
    assert_int_equal(timer_interrupt_count(), 0);
}

static void test_compare_armed_in_the_past_fires_at_the_next_busy(void **state)
{
    (void) state;
    port_native_busy(50);
    port_irq_state_t s = port_irq_save();
    port_compare_set((port_counter_t) (port_counter_read() - 5));
    port_irq_restore(s);
    assert_int_equal(timer_interrupt_count(), 0); /* not from port_compare_set() */
    port_native_busy(1);
    assert_int_equal(timer_interrupt_count(), 1);
    assert_int_equal(port_native_time(), 51);
}

static void test_compare_is_an_interrupt_that_masking_holds(void **state)
{
    (void) state;
    port_irq_state_t s = port_irq_save();
    port_compare_set((port_counter_t) (port_counter_read() + 100));
    port_native_busy(300);
    assert_int_equal(timer_interrupt_count(), 0);
    port_irq_restore(s);
    assert_int_equal(timer_interrupt_count(), 1);
}

/* ---- halting ---- */

static int pipe_fd = -1;

static void report_time_at_exit(void)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long) port_native_time());
    if (write(pipe_fd, buf, (size_t) n) < 0) _exit(98);
}

/* Run a module in a child process until it halts; returns its exit status
 * and what it wrote to `out` (its time at exit, or its stderr). */
static int run_child(uint64_t until, bool capture_stderr, char *out, size_t out_size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(fds[0]);
        pipe_fd = fds[1];
        if (capture_stderr)
            dup2(fds[1], STDERR_FILENO);
        else
            atexit(report_time_at_exit);
        native_options_t opt = {.seed = 1, .until_ticks = until};
        port_native_configure(&opt);
        motet_boot();
        sched_run();
        _exit(99); /* sched_run() must not come back */
    }
    close(fds[1]);
    ssize_t n = read(fds[0], out, out_size - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_until_halts_the_module_with_status_0(void **state)
{
    (void) state;
    char out[64];
    assert_int_equal(run_child(250000, false, out, sizeof out), 0);
    assert_string_equal(out, "250000");
}

static void test_idle_with_nothing_scheduled_stops_with_a_message(void **state)
{
    (void) state;
    char out[256];
    assert_int_equal(run_child(0, true, out, sizeof out), 0);
    assert_non_null(strstr(out, "native: idle with nothing scheduled, stopping"));
}

/* ---- real clock ---- */

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int setup_realtime(void **state)
{
    (void) state;
    native_options_t opt = {.realtime = true, .seed = 1};
    port_native_configure(&opt);
    motet_boot();
    reset_state();
    return 0;
}

static void test_realtime_sleep_blocks_until_the_timer(void **state)
{
    (void) state;
    double t0 = wall_seconds();
    make_task(PID_STOP, 1, stopper); /* starts a 20 ms timer */
    sched_run();
    double elapsed = wall_seconds() - t0;
    assert_true(elapsed >= 0.020);
    assert_true(elapsed < 5.0);
    assert_true(port_native_time() >= TIMER_MS(20));
    assert_true(port_native_sleep_count() >= 1);
    assert_true(port_native_sleep_ticks() >= TIMER_MS(15)); /* it slept, no busy loop */
    assert_int_equal(timer_interrupt_count(), 1);
}

static void test_realtime_interrupts_and_scheduled_lines(void **state)
{
    (void) state;
    port_native_irq_raise(0);
    assert_int_equal(task_runs, 1);
    port_native_irq_schedule(3, port_native_time() + TIMER_MS(5));
    port_irq_state_t s = port_irq_save();
    port_sleep(PORT_SLEEP_DEEP);
    port_irq_restore(s);
    assert_int_equal(n_isr_time, 1);
    assert_true(isr_time[0] >= TIMER_MS(5));
    uint64_t before = port_native_time();
    port_native_busy(TIMER_MS(2)); /* spins on the real clock */
    assert_true(port_native_time() - before >= TIMER_MS(2));
}

/* ---- options and random numbers ---- */

static void test_random_sequence_is_fixed_by_the_seed(void **state)
{
    (void) state;
    uint64_t a[4], b[4];
    native_options_t opt = {.seed = 1};
    port_native_configure(&opt);
    assert_true(port_native_random() == 0x47e4ce4b896cdd1dull); /* xorshift64* */
    assert_true(port_native_random() == 0xabcfa6a8e079651dull);
    opt.seed = 42;
    port_native_configure(&opt);
    for (int i = 0; i < 4; i++) a[i] = port_native_random();
    port_native_configure(&opt);
    motet_boot();
    for (int i = 0; i < 4; i++) b[i] = port_native_random();
    assert_memory_equal(a, b, sizeof a);
    opt.seed = 43;
    port_native_configure(&opt);
    assert_true(port_native_random() != a[0]);
}

static void test_parse_args_takes_its_options_and_leaves_the_rest(void **state)
{
    (void) state;
    char *argv[] = {"prog",       "--seed",     "7",  "extra", "--until", "1.5", "--counter-start",
                    "0xFFFF0000", "--realtime", "-x", "--sim", NULL};
    native_options_t opt;
    int argc = port_native_parse_args(11, argv, &opt);
    assert_int_equal(argc, 3);
    assert_string_equal(argv[0], "prog");
    assert_string_equal(argv[1], "extra");
    assert_string_equal(argv[2], "-x");
    assert_null(argv[3]);
    assert_false(opt.realtime); /* --sim came last */
    assert_true(opt.seed == 7);
    assert_true(opt.until_ticks == 1500000);
    assert_int_equal(opt.counter_start, 0xFFFF0000u);

    char *argv2[] = {"prog", "--seed=0x10", "--realtime", NULL};
    assert_int_equal(port_native_parse_args(3, argv2, &opt), 1);
    assert_true(opt.seed == 16);
    assert_true(opt.realtime);
    assert_true(opt.until_ticks == 0); /* defaults for what is not given */
    assert_int_equal(opt.counter_start, 0);
}

static int parse_in_child(char **argv, int argc)
{
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDERR_FILENO);
        native_options_t opt;
        port_native_parse_args(argc, argv, &opt);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_parse_args_exits_on_a_bad_value(void **state)
{
    (void) state;
    char *bad_seed[] = {"prog", "--seed", "12abc", NULL};
    char *no_value[] = {"prog", "--until", NULL};
    char *negative[] = {"prog", "--until", "-1", NULL};
    char *too_big[] = {"prog", "--counter-start", "0x100000000", NULL};
    assert_int_equal(parse_in_child(bad_seed, 3), 2);
    assert_int_equal(parse_in_child(no_value, 2), 2);
    assert_int_equal(parse_in_child(negative, 3), 2);
    assert_int_equal(parse_in_child(too_big, 3), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_raise_runs_the_interrupt_at_once_when_enabled, setup),
        cmocka_unit_test_setup(test_raise_is_held_while_masked_and_taken_at_restore, setup),
        cmocka_unit_test_setup(test_two_lines_raised_while_masked_both_run, setup),
        cmocka_unit_test_setup(test_in_isr_is_true_in_the_body_only, setup),
        cmocka_unit_test_setup(test_interrupt_body_holds_further_interrupts, setup),
        cmocka_unit_test_setup(test_interrupt_nests_inside_the_exit_dispatch, setup),
        cmocka_unit_test_setup(test_scheduled_lines_preempt_busy_code_at_their_exact_tick, setup),
        cmocka_unit_test_setup(test_preempting_work_does_not_count_as_the_callers_work, setup),
        cmocka_unit_test_setup(test_scheduled_line_is_held_by_masked_busy_code, setup),
        cmocka_unit_test_setup(test_counter_and_cycles_follow_the_simulated_clock, setup),
        cmocka_unit_test_setup(test_sleep_jumps_to_the_next_event_and_counts_it, setup),
        cmocka_unit_test_setup(test_sleep_with_an_interrupt_pending_does_not_wait, setup),
        cmocka_unit_test_setup(test_compare_wakes_sleep_at_its_tick, setup),
        cmocka_unit_test_setup(test_disabled_compare_never_fires, setup),
        cmocka_unit_test_setup(test_compare_armed_in_the_past_fires_at_the_next_busy, setup),
        cmocka_unit_test_setup(test_compare_is_an_interrupt_that_masking_holds, setup),
        cmocka_unit_test_setup(test_until_halts_the_module_with_status_0, setup),
        cmocka_unit_test_setup(test_idle_with_nothing_scheduled_stops_with_a_message, setup),
        cmocka_unit_test_setup(test_realtime_sleep_blocks_until_the_timer, setup_realtime),
        cmocka_unit_test_setup(test_realtime_interrupts_and_scheduled_lines, setup_realtime),
        cmocka_unit_test_setup(test_random_sequence_is_fixed_by_the_seed, setup),
        cmocka_unit_test_setup(test_parse_args_takes_its_options_and_leaves_the_rest, setup),
        cmocka_unit_test_setup(test_parse_args_exits_on_a_bad_value, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
