/* SPDX-License-Identifier: MIT */
/*
 * A task whose kill is under way (its FINAL due or running, or, never
 * initialised, its destruction due) is not killed again: a second kill,
 * whoever asks for it (its own FINAL, a FINAL it caused to run, a handler
 * run at an interrupt's exit), is refused with MT_ERR_NO_TASK, logged, as
 * for a kill already pending, and the task gets one FINAL at most and one
 * KILL. A kill of a task that is merely running, from a FINAL it caused,
 * still ends it at its pop.
 *
 * The interrupts at a kill's window are raised while interrupts are off,
 * so that they are taken where the kill path turns them back on
 * (test_port.h: taken when enabled).
 *
 * MOTET_TEST_KERNEL: default nothreads
 */
#include <string.h>

#include "sched_internal.h"
#include "test_support.h"

/* Consecutive: scripts[pid - PID_A] is pid's. */
enum { PID_A = 0x30, PID_B = 0x31, PID_KILLER = 0x32, PID_UNINIT = 0x33 };
enum { N_TASKS = 4 };

/* What each task does, and what happened to it. */
typedef struct {
    mt_pid_t kill_on_final;  /* killed by its FINAL (MT_PID_NONE: nothing) */
    mt_pid_t kill_on_port0;  /* killed by its PORT_0 handler */
    bool raise_on_final;     /* its FINAL raises interrupt line 0 */
    bool raise_irq_off;      /* PORT_0 / INIT: raise line 0, return with irq off */
    mt_err_t init_result;    /* its INIT's result */
    unsigned finals;         /* FINALs run */
    mt_err_t final_kill_err; /* the result of its FINAL's kill */
    mt_err_t port0_kill_err; /* the result of its PORT_0 handler's kill */
} script_t;

static script_t scripts[N_TASKS];
/* The killer's victim: the task the handler run at line 0's exit kills. */
static mt_pid_t irq_victim;
static mt_err_t irq_kill_err;
static unsigned irq_kills;

static script_t *script_of(mt_pid_t pid)
{
    assert_true(pid >= PID_A && pid < PID_A + N_TASKS);
    return &scripts[pid - PID_A];
}

static mt_err_t scripted(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    script_t *s = script_of(sched_current_pid());
    if (port == PORT_FINAL) {
        s->finals++;
        if (s->kill_on_final != MT_PID_NONE) s->final_kill_err = sched_task_kill(s->kill_on_final);
        if (s->raise_on_final) tport_irq_raise(0);
        return MT_OK;
    }
    if (port == PORT_0 && s->kill_on_port0 != MT_PID_NONE)
        s->port0_kill_err = sched_task_kill(s->kill_on_port0);
    if ((port == PORT_0 || port == PORT_INIT) && s->raise_irq_off) {
        port_irq_disable();
        tport_irq_raise(0); /* taken where the pop turns interrupts on */
    }
    return port == PORT_INIT ? s->init_result : MT_OK;
}

/* The handler line 0's exit runs: it kills the victim. */
static mt_err_t killer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port != PORT_0) return MT_OK;
    irq_kills++;
    irq_kill_err = sched_task_kill(irq_victim);
    return MT_OK;
}

static void isr_posts_to_killer(void)
{
    assert_int_equal(sched_post_isr(PID_KILLER, PORT_0, NULL, 0, 0), MT_OK);
}

static mem_stats_t mem_before;

static int setup(void **state)
{
    test_boot(state);
    memset(scripts, 0, sizeof scripts);
    for (unsigned i = 0; i < N_TASKS; i++) {
        scripts[i].kill_on_final = scripts[i].kill_on_port0 = MT_PID_NONE;
        scripts[i].final_kill_err = scripts[i].port0_kill_err = (mt_err_t) 0x7F; /* not run */
    }
    irq_victim = MT_PID_NONE;
    irq_kill_err = (mt_err_t) 0x7F;
    irq_kills = 0;
    mem_get_stats(&mem_before);
    return 0;
}

/* A and B at level 2, the killer (line 0's exit) at 6: above every
 * running level here, so that it runs at the exit, above a FINAL. */
static void make_tasks(void)
{
    test_task(PID_A, 2, scripted);
    test_task(PID_B, 2, scripted);
    test_task(PID_KILLER, 6, killer);
    tport_irq_attach(0, isr_posts_to_killer);
    (void) test_count_logged_errors(MT_OK); /* drains the creations */
}

/* The undrained log, drained into `logged` by drain(). */
static log_record_t logged[MOTET_LOG_ENTRIES];
static unsigned n_logged;

static void drain(void)
{
    n_logged = log_drain(logged, MOTET_LOG_ENTRIES);
}

/* Records of `type` in the drained log: of `pid`, or any EV_ERROR of
 * error `pid_or_err`. */
static unsigned count(log_event_type_t type, unsigned pid_or_err)
{
    unsigned found = 0;
    for (unsigned i = 0; i < n_logged; i++) {
        if (logged[i].type != type) continue;
        if (type == EV_ERROR ? logged[i].arg == pid_or_err : logged[i].pid == pid_or_err) found++;
    }
    return found;
}

/* `pid` is gone, and nothing is left on the stack or in the queue. */
static void assert_gone(mt_pid_t pid)
{
    assert_false(sched_task_exists(pid));
    assert_int_equal(sched_stack_depth(), 0);
    assert_int_equal(sched_queued_count(), 0);
    assert_true(mem_consistent());
}

/* Every task killed: the heap as it was before the test. */
static void assert_all_freed(void)
{
    mem_stats_t after;
    mem_get_stats(&after);
    assert_int_equal(after.in_use, mem_before.in_use);
    assert_int_equal(after.alloc_count, mem_before.alloc_count);
}

static void kill_the_rest(void)
{
    const mt_pid_t pids[] = {PID_A, PID_B, PID_KILLER};
    for (unsigned i = 0; i < sizeof pids / sizeof pids[0]; i++)
        if (sched_task_exists(pids[i])) assert_int_equal(sched_task_kill(pids[i]), MT_OK);
    assert_all_freed();
}

/* The defect: a FINAL's kill of its own task was taken as a new kill (its
 * flag had been cleared for FINAL), so the pop ran FINAL again, and so on,
 * or destroyed it twice. */
static void test_a_final_that_kills_its_own_task_ends_it_once(void **state)
{
    (void) state;
    make_tasks();
    script_of(PID_A)->kill_on_final = PID_A;
    assert_int_equal(sched_task_kill(PID_A), MT_OK);
    assert_int_equal(script_of(PID_A)->finals, 1);
    assert_int_equal(script_of(PID_A)->final_kill_err, MT_ERR_NO_TASK);
    assert_gone(PID_A);
    drain();
    assert_int_equal(count(EV_KILL, PID_A), 1);
    assert_int_equal(count(EV_ERROR, MT_ERR_NO_TASK), 1);
    kill_the_rest();
}

/* The same when the first kill came from its own handler and waited for
 * its pop. */
static void test_a_final_after_a_kill_on_pop_that_kills_its_own_task_ends_it_once(void **state)
{
    (void) state;
    make_tasks();
    script_of(PID_A)->kill_on_port0 = PID_A;
    script_of(PID_A)->kill_on_final = PID_A;
    assert_int_equal(sched_send_to(PID_A, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(script_of(PID_A)->port0_kill_err, MT_OK);
    assert_int_equal(script_of(PID_A)->finals, 1);
    assert_int_equal(script_of(PID_A)->final_kill_err, MT_ERR_NO_TASK);
    assert_gone(PID_A);
    drain();
    assert_int_equal(count(EV_KILL, PID_A), 1);
    assert_int_equal(count(EV_ERROR, MT_ERR_NO_TASK), 1);
    kill_the_rest();
}

/* B's kill runs its FINAL, which kills A; A's FINAL, above B's, kills B:
 * refused, B ends once, after A. */
static void test_a_final_that_kills_a_task_whose_final_is_below_is_refused(void **state)
{
    (void) state;
    make_tasks();
    script_of(PID_B)->kill_on_final = PID_A;
    script_of(PID_A)->kill_on_final = PID_B;
    assert_int_equal(sched_task_kill(PID_B), MT_OK);
    assert_int_equal(script_of(PID_B)->final_kill_err, MT_OK);
    assert_int_equal(script_of(PID_A)->final_kill_err, MT_ERR_NO_TASK);
    assert_int_equal(script_of(PID_A)->finals, 1);
    assert_int_equal(script_of(PID_B)->finals, 1);
    assert_gone(PID_A);
    assert_gone(PID_B);
    drain();
    assert_int_equal(count(EV_KILL, PID_A), 1);
    assert_int_equal(count(EV_KILL, PID_B), 1);
    assert_int_equal(count(EV_ERROR, MT_ERR_NO_TASK), 1);
    kill_the_rest();
}

/* A's handler kills B; B's FINAL kills A, its killer, running below it: a
 * kill like any other of a running task, which ends A at its pop, FINAL
 * and all. A's FINAL then finds B gone. */
static void test_a_final_that_kills_its_killer_ends_it_at_its_pop(void **state)
{
    (void) state;
    make_tasks();
    script_of(PID_A)->kill_on_port0 = PID_B;
    script_of(PID_B)->kill_on_final = PID_A;
    script_of(PID_A)->kill_on_final = PID_B;
    assert_int_equal(sched_send_to(PID_A, PORT_0, NULL, 0, 0), MT_OK);
    sched_run_pending();
    assert_int_equal(script_of(PID_A)->port0_kill_err, MT_OK);
    assert_int_equal(script_of(PID_B)->final_kill_err, MT_OK);
    assert_int_equal(script_of(PID_A)->final_kill_err, MT_ERR_NO_TASK); /* B is gone */
    assert_int_equal(script_of(PID_A)->finals, 1);
    assert_int_equal(script_of(PID_B)->finals, 1);
    assert_gone(PID_A);
    assert_gone(PID_B);
    drain();
    assert_int_equal(count(EV_KILL, PID_A), 1);
    assert_int_equal(count(EV_KILL, PID_B), 1);
    kill_the_rest();
}

/* A's FINAL is interrupted; the handler run at the exit kills A. */
static void test_a_kill_from_an_interrupts_exit_while_final_runs_is_refused(void **state)
{
    (void) state;
    make_tasks();
    script_of(PID_A)->raise_on_final = true;
    irq_victim = PID_A;
    assert_int_equal(sched_task_kill(PID_A), MT_OK);
    assert_int_equal(irq_kills, 1);
    assert_int_equal(irq_kill_err, MT_ERR_NO_TASK);
    assert_int_equal(script_of(PID_A)->finals, 1);
    assert_gone(PID_A);
    drain();
    assert_int_equal(count(EV_KILL, PID_A), 1);
    assert_int_equal(count(EV_ERROR, MT_ERR_NO_TASK), 1);
    kill_the_rest();
}

/* A kills itself and returns with an interrupt waiting: it is taken where
 * the pop, A frozen, turns interrupts on for FINAL, and the handler run at
 * its exit kills A while A's FINAL is due. */
static void test_a_kill_from_an_interrupts_exit_while_final_is_due_is_refused(void **state)
{
    (void) state;
    make_tasks();
    script_of(PID_A)->kill_on_port0 = PID_A;
    script_of(PID_A)->raise_irq_off = true;
    irq_victim = PID_A;
    assert_int_equal(sched_send_to(PID_A, PORT_0, NULL, 0, 0), MT_OK);
    port_irq_enable();
    sched_run_pending();
    assert_int_equal(script_of(PID_A)->port0_kill_err, MT_OK);
    assert_int_equal(irq_kills, 1);
    assert_int_equal(irq_kill_err, MT_ERR_NO_TASK);
    assert_int_equal(script_of(PID_A)->finals, 1);
    assert_gone(PID_A);
    drain();
    assert_int_equal(count(EV_KILL, PID_A), 1);
    assert_int_equal(count(EV_ERROR, MT_ERR_NO_TASK), 1);
    kill_the_rest();
}

/* An uninitialised task whose INIT fails at once, no kill asked for, and
 * returns with line 0 waiting: the handler at its exit kills the task
 * where the pop turns interrupts on for its end. `after_a_kill`: a kill
 * has set the pop's hook before (the end then takes a kill's way). Ends
 * once, without FINAL. */
static void failed_init_ends_once_under_a_kill_at_its_end(bool after_a_kill)
{
    test_task(PID_KILLER, 6, killer);
    tport_irq_attach(0, isr_posts_to_killer);
    if (after_a_kill) {
        test_task(PID_A, 2, scripted);
        assert_int_equal(sched_task_kill(PID_A), MT_OK);
    }
    script_t *s = script_of(PID_UNINIT);
    s->raise_irq_off = true;
    s->init_result = MT_ERR_INVALID;
    irq_victim = PID_UNINIT;
    task_spec_t spec = {.pid = PID_UNINIT, .prio = 2, .handler = scripted, .state_size = 8};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    (void) test_count_logged_errors(MT_OK);
    assert_int_equal(sched_task_init(PID_UNINIT, NULL, 0), MT_OK);
    port_irq_enable();
    sched_run_pending();
    assert_int_equal(s->finals, 0); /* never initialised */
    assert_int_equal(irq_kills, 1);
    assert_int_equal(irq_kill_err, MT_ERR_NO_TASK);
    assert_gone(PID_UNINIT);
    drain();
    assert_int_equal(count(EV_KILL, PID_UNINIT), 1);
    assert_int_equal(count(EV_INITFAIL, PID_UNINIT), 1);
    assert_int_equal(count(EV_ERROR, MT_ERR_NO_TASK), 1);
    assert_int_equal(sched_task_kill(PID_KILLER), MT_OK);
    assert_all_freed();
}

static void test_a_kill_at_a_failed_inits_end_is_refused(void **state)
{
    (void) state;
    failed_init_ends_once_under_a_kill_at_its_end(false);
}

static void test_a_kill_at_a_failed_inits_end_after_a_kill_is_refused(void **state)
{
    (void) state;
    failed_init_ends_once_under_a_kill_at_its_end(true);
}

static mt_err_t init_kills_then_fails(void *state, mt_port_t port, void *data, uint16_t len)
{
    if (port == PORT_INIT) {
        script_of(PID_UNINIT)->port0_kill_err = sched_task_kill(PID_UNINIT);
        port_irq_disable();
        tport_irq_raise(0);
        return MT_ERR_INVALID;
    }
    return scripted(state, port, data, len);
}

/* The INIT kills its task, then fails: the pending kill and the failure
 * end it once, and a kill at the window of that end is refused. */
static void test_a_failed_init_with_its_kill_pending_ends_once(void **state)
{
    (void) state;
    test_task(PID_KILLER, 6, killer);
    tport_irq_attach(0, isr_posts_to_killer);
    irq_victim = PID_UNINIT;
    task_spec_t spec = {.pid = PID_UNINIT, .prio = 2, .handler = init_kills_then_fails};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    (void) test_count_logged_errors(MT_OK);
    assert_int_equal(sched_task_init(PID_UNINIT, NULL, 0), MT_OK);
    port_irq_enable();
    sched_run_pending();
    script_t *s = script_of(PID_UNINIT);
    assert_int_equal(s->port0_kill_err, MT_OK);
    assert_int_equal(s->finals, 0);
    assert_int_equal(irq_kills, 1);
    assert_int_equal(irq_kill_err, MT_ERR_NO_TASK);
    assert_gone(PID_UNINIT);
    drain();
    assert_int_equal(count(EV_KILL, PID_UNINIT), 1);
    assert_int_equal(count(EV_INITFAIL, PID_UNINIT), 1);
    assert_int_equal(count(EV_ERROR, MT_ERR_NO_TASK), 1);
    assert_int_equal(sched_task_kill(PID_KILLER), MT_OK);
    assert_all_freed();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_final_that_kills_its_own_task_ends_it_once, setup),
        cmocka_unit_test_setup(
            test_a_final_after_a_kill_on_pop_that_kills_its_own_task_ends_it_once, setup),
        cmocka_unit_test_setup(test_a_final_that_kills_a_task_whose_final_is_below_is_refused,
                               setup),
        cmocka_unit_test_setup(test_a_final_that_kills_its_killer_ends_it_at_its_pop, setup),
        cmocka_unit_test_setup(test_a_kill_from_an_interrupts_exit_while_final_runs_is_refused,
                               setup),
        cmocka_unit_test_setup(test_a_kill_from_an_interrupts_exit_while_final_is_due_is_refused,
                               setup),
        cmocka_unit_test_setup(test_a_kill_at_a_failed_inits_end_is_refused, setup),
        cmocka_unit_test_setup(test_a_kill_at_a_failed_inits_end_after_a_kill_is_refused, setup),
        cmocka_unit_test_setup(test_a_failed_init_with_its_kill_pending_ends_once, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
