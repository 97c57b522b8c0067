/* SPDX-License-Identifier: MIT */
/*
 * What the scheduler does for a migration (sched_migrate.c), on one
 * module: freezing holds every message in order and runs nothing, thawing
 * releases them in the order held, lists are spliced where the migrator
 * puts them, a handler is called for SERIALIZE with its result, and a task
 * leaves (remote control block) and arrives (local, frozen) without a
 * sender ever finding neither.
 */
#include <string.h>

#include "dispatch_rules.h"
#include "migrate_internal.h"
#include "test_support.h"

#define T     0x20
#define HIGH  0x21
#define OTHER 0x22

static char got[64];
static mt_err_t serialize_result;

static void note(char c)
{
    size_t n = strlen(got);
    got[n] = c;
    got[n + 1] = 0;
}

static mt_err_t recorder(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_SERIALIZE) {
        note('S');
        return serialize_result;
    }
    if (port >= PORT_0 && len) note(((const char *) data)[0]);
    return MT_OK;
}

/* A higher task that sends to T while T is frozen. */
static mt_err_t sender(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port == PORT_0) sched_send_to(T, PORT_0, data, len, 0);
    return MT_OK;
}

static void make(mt_pid_t pid, mt_prio_t prio, task_handler_t h)
{
    task_spec_t spec = {.pid = pid, .prio = prio, .flags = TASK_MOVABLE, .handler = h};
    assert_int_equal(sched_task_create(&spec), MT_OK);
    assert_int_equal(sched_task_init(pid, NULL, 0), MT_OK);
}

static int setup(void **state)
{
    test_boot(state);
    memset(got, 0, sizeof got);
    serialize_result = MT_OK;
    make(T, 2, recorder);
    make(HIGH, 5, sender);
    return 0;
}

static void post(mt_pid_t pid, const char *c)
{
    assert_int_equal(sched_post_isr(pid, PORT_0, (void *) c, 1, 0), MT_OK);
}

static void test_frozen_task_holds_everything_in_order(void **state)
{
    (void) state;
    post(T, "a"); /* queued before the freeze */
    post(T, "b");
    task_t *t = sched_find_task(T);
    sched_mig_freeze(t);
    assert_false(migrate_live(T));
    post(T, "c");                                                    /* from an interrupt */
    assert_int_equal(sched_send_to(HIGH, PORT_0, "d", 1, 0), MT_OK); /* from a task */
    sched_run_pending();
    assert_string_equal(got, ""); /* nothing ran */
    assert_int_equal(sched_queued_count(), 4);
    sched_mig_thaw(t);
    assert_true(migrate_live(T));
    sched_run_pending();
    assert_string_equal(got, "abcd");
    assert_int_equal(sched_queued_count(), 0);
}

/* A handler that notes its byte and freezes its own task on 'f', freezes
 * and thaws it again on 't': a change of flags while the task runs. */
#define SELF 0x23

static mt_err_t self_freezer(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    if (port < PORT_0 || !len) return MT_OK;
    char c = ((const char *) data)[0];
    note(c);
    task_t *self = sched_find_task(SELF);
    if (c == 'f' || c == 't') sched_mig_freeze(self);
    if (c == 't') sched_mig_thaw(self);
    return MT_OK;
}

/* The frame's pop reopens a task's gate only if nothing changed its flags
 * while it ran, and then only if they let it run: thawed again, a send
 * runs it at once; still frozen, a send is held until the thaw. */
static void test_flags_changed_while_a_task_runs_decide_its_gate_at_the_pop(void **state)
{
    (void) state;
    make(SELF, 3, self_freezer);
    task_t *t = sched_find_task(SELF);
    assert_int_equal(sched_send_to(SELF, PORT_0, "t", 1, 0), MT_OK);
    assert_int_equal(t->gate, t->prio);
    assert_int_equal(sched_send_to(SELF, PORT_0, "x", 1, 0), MT_OK);
    assert_string_equal(got, "tx"); /* at once (rule 1) */
    assert_int_equal(sched_send_to(SELF, PORT_0, "f", 1, 0), MT_OK);
    assert_int_equal(t->gate, GATE_CLOSED);
    assert_int_equal(sched_send_to(SELF, PORT_0, "y", 1, 0), MT_OK);
    sched_run_pending();
    assert_string_equal(got, "txf"); /* held while frozen */
    sched_mig_thaw(t);
    assert_int_equal(t->gate, t->prio);
    sched_run_pending();
    assert_string_equal(got, "txfy");
}

static void test_lists_are_spliced_where_the_migrator_puts_them(void **state)
{
    (void) state;
    task_t *t = sched_find_task(T);
    sched_mig_freeze(t);
    post(T, "x"); /* arrived directly: goes last */
    mt_err_t why = MT_ERR_STATE;
    msg_t *held_back = sched_mig_msg(T, PORT_0, "h", 1, &why);
    assert_non_null(held_back);
    assert_int_equal(why, MT_OK);
    sched_mig_hold_at(t, held_back, 0); /* held back elsewhere: before */
    why = MT_ERR_STATE;
    msg_t *f1 = sched_mig_msg(T, PORT_0, "1", 1, &why);
    assert_int_equal(why, MT_OK);
    why = MT_ERR_STATE;
    msg_t *f2 = sched_mig_msg(T, PORT_0, "2", 1, &why);
    assert_int_equal(why, MT_OK);
    assert_true(f1 && f2);
    sched_mig_hold_at(t, f1, 0); /* forwarded: first, in their order */
    sched_mig_hold_at(t, f2, 1);
    sched_mig_thaw(t);
    sched_run_pending();
    assert_string_equal(got, "12hx");
}

/* A forwarded message's payload is copied into its block when it fits
 * there, as a queued send's is; only a larger one takes a heap block. */
static void test_forwarded_payloads_take_the_heap_only_when_too_big(void **state)
{
    (void) state;
    static const char big[] = "a payload longer than a block holds";
    task_t *t = sched_find_task(T);
    sched_mig_freeze(t);
    mem_stats_t before, after;
    mem_get_stats(&before);
    mt_err_t why = MT_ERR_STATE;
    msg_t *small = sched_mig_msg(T, PORT_0, "s", 1, &why);
    assert_non_null(small);
    assert_int_equal(why, MT_OK);
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count);
    why = MT_ERR_STATE;
    msg_t *large = sched_mig_msg(T, PORT_0, big, sizeof big, &why);
    assert_non_null(large);
    assert_int_equal(why, MT_OK);
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count + 1);
    assert_memory_equal(large->data, big, sizeof big);
    sched_mig_hold_at(t, small, 0);
    sched_mig_hold_at(t, large, 1);
    sched_mig_thaw(t);
    sched_run_pending();
    assert_string_equal(got, "sa");
    mem_get_stats(&after);
    assert_int_equal(after.alloc_count, before.alloc_count); /* freed after its handler */
}

static void test_take_held_empties_the_list(void **state)
{
    (void) state;
    task_t *t = sched_find_task(T);
    sched_mig_freeze(t);
    post(T, "p");
    post(T, "q");
    msg_t *list = sched_mig_take_held(t);
    assert_non_null(list);
    assert_int_equal(((const char *) list->data)[0], 'p');
    assert_int_equal(((const char *) list->next->data)[0], 'q');
    assert_null(list->next->next);
    assert_int_equal(sched_queued_count(), 0);
    while (list) {
        msg_t *next = list->next;
        sched_mig_msg_free(list);
        list = next;
    }
    sched_mig_thaw(t);
    sched_run_pending();
    assert_string_equal(got, "");
}

static void test_serialize_runs_now_with_its_result(void **state)
{
    (void) state;
    task_t *t = sched_find_task(T);
    sched_mig_freeze(t);
    post(T, "m");
    assert_int_equal(sched_mig_call(T, PORT_SERIALIZE, NULL, 0), MT_OK);
    serialize_result = MT_ERR_STATE;
    assert_int_equal(sched_mig_call(T, PORT_SERIALIZE, NULL, 0), MT_ERR_STATE);
    assert_string_equal(got, "SS"); /* the held message did not run */
    sched_mig_thaw(t);
    sched_run_pending();
    assert_string_equal(got, "SSm");
}

static void test_task_leaves_and_arrives(void **state)
{
    (void) state;
    task_t *t = sched_find_task(T);
    sched_mig_freeze(t);
    post(T, "z");
    msg_t *held = NULL;
    assert_int_equal(sched_mig_move_out(T, 3, &held), MT_OK);
    assert_non_null(held);
    assert_int_equal(((const char *) held->data)[0], 'z');
    sched_mig_msg_free(held);
    assert_false(sched_task_exists(T));
    mt_module_t where;
    mt_prio_t prio;
    assert_true(sched_mig_remote(T, &where, &prio));
    assert_int_equal(where, 3);
    assert_int_equal(prio, 2);
    assert_int_equal(sched_mig_reroute(T, 4), MT_OK);
    assert_true(sched_mig_remote(T, &where, NULL));
    assert_int_equal(where, 4);
    /* It comes back: local and frozen, the remote block gone. */
    task_spec_t spec = {.pid = T, .prio = 2, .flags = TASK_MOVABLE, .handler = recorder};
    mt_err_t why;
    held = sched_mig_msg(T, PORT_0, "v", 1, &why); /* held back for it */
    assert_non_null(held);
    assert_int_equal(sched_mig_move_in(&spec, &held), MT_OK);
    assert_null(held); /* taken in the same step: the caller names it no more */
    t = sched_find_task(T);
    assert_non_null(t);
    assert_false(sched_mig_remote(T, NULL, NULL));
    assert_false(migrate_live(T));
    post(T, "w"); /* held until it starts */
    sched_run_pending();
    assert_string_equal(got, "");
    sched_mig_thaw(t);
    sched_run_pending();
    assert_string_equal(got, "vw");
}

/* An arriving task had its INIT at the source: neither sched_task_init()
 * nor a send to PORT_INIT may give it a second one, before the thaw (when
 * it is not initialised here yet) or after. */
static void test_an_arrived_task_takes_no_second_init(void **state)
{
    (void) state;
    task_spec_t spec = {.pid = OTHER, .prio = 2, .flags = TASK_MOVABLE, .handler = recorder};
    msg_t *none = NULL;
    assert_int_equal(sched_mig_move_in(&spec, &none), MT_OK);
    task_t *t = sched_find_task(OTHER);
    assert_non_null(t);
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(sched_task_init(OTHER, NULL, 0), MT_ERR_STATE);
    assert_int_equal(sched_send_to(OTHER, PORT_INIT, "i", 1, 0), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 2);
    assert_int_equal(sched_queued_count(), 0);
    sched_mig_thaw(t);
    assert_true(migrate_live(OTHER));
    assert_int_equal(sched_task_init(OTHER, NULL, 0), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 1);
}

/* A frozen task at the source has its INITIALISED flag cleared: a send to
 * PORT_INIT must not pass for its first INIT. */
static void test_a_frozen_task_takes_no_init(void **state)
{
    (void) state;
    task_t *t = sched_find_task(T);
    sched_mig_freeze(t);
    test_count_logged_errors(MT_OK); /* drain */
    assert_int_equal(sched_send_to(T, PORT_INIT, "i", 1, 0), MT_ERR_STATE);
    assert_int_equal(sched_task_init(T, NULL, 0), MT_ERR_STATE);
    assert_int_equal(test_count_logged_errors(MT_ERR_STATE), 2);
    sched_mig_thaw(t);
    sched_run_pending();
    assert_int_equal(sched_queued_count(), 0);
}

static void test_arrival_that_fails_keeps_the_remote_block(void **state)
{
    (void) state;
    assert_int_equal(sched_task_create_remote(OTHER, 1, 2), MT_OK);
    task_spec_t bad = {.pid = OTHER, .prio = MOTET_PRIO_LEVELS, .handler = recorder};
    mt_err_t why;
    msg_t *held = sched_mig_msg(OTHER, PORT_0, "v", 1, &why);
    assert_non_null(held);
    assert_int_equal(sched_mig_move_in(&bad, &held), MT_ERR_INVALID);
    assert_non_null(held); /* still the caller's */
    sched_mig_msg_free(held);
    mt_module_t where;
    assert_true(sched_mig_remote(OTHER, &where, NULL));
    assert_int_equal(where, 2);
}

/* Bare messages, noted by port: upper case for BARE, lower for ALSO. */
#define BARE 0x23
#define ALSO 0x24

static mt_err_t bare_recorder(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    if (port >= PORT_0) note((char) ((sched_current_pid() == BARE ? 'A' : 'a') + port - PORT_0));
    return MT_OK;
}

/* BARE's interrupt message queued in the slot's block (in no pool
 * block), ALSO idle below it; the pool's spare blocks. */
static uint8_t queue_a_bare_message_in_the_slot(void)
{
    make(BARE, 3, bare_recorder);
    make(ALSO, 1, bare_recorder);
    sched_run_pending();
    uint8_t spare = sched_msg_spare();
    assert_int_equal(sched_post_isr(BARE, PORT_0, NULL, 0, 0), MT_OK);
    assert_true(test_slot_queued_last_at(3));
    assert_int_equal(sched_msg_spare(), spare);
    return spare;
}

/* Thaw t: everything runs once, in the order `expected` (all that was
 * noted), and the slot and the pool (`spare` blocks) are whole again. */
static void thaw_runs_everything_once(task_t *t, const char *expected, uint8_t spare)
{
    sched_mig_thaw(t);
    sched_run_pending();
    assert_string_equal(got, expected);
    assert_int_equal(sched.isr_msg.flags, 0);
    assert_int_equal(sched_msg_spare(), spare);
    assert_int_equal(sched_queued_count(), 0);
}

/* A freeze moves the slot's message into a pool block, in its place in
 * the held list: the slot serves the next interrupt at once, not only
 * once the migration is confirmed, and the thaw runs everything once, in
 * order. */
static void test_a_freeze_frees_the_interrupt_slot(void **state)
{
    (void) state;
    uint8_t spare = queue_a_bare_message_in_the_slot();
    task_t *t = sched_find_task(BARE);
    sched_mig_freeze(t);
    assert_int_equal(sched.isr_msg.flags, 0);
    assert_int_equal(sched_msg_spare(), spare - 1);
    assert_int_equal(sched_mig_held_count(t), 1);
    assert_int_equal(sched_post_isr(BARE, PORT_0 + 1, NULL, 0, 0), MT_OK); /* held after it */
    assert_int_equal(sched_post_isr(ALSO, PORT_0, NULL, 0, 0), MT_OK);
    assert_true(test_slot_queued_last_at(1)); /* the slot again, no pool block */
    assert_int_equal(sched_msg_spare(), spare - 2);
    sched_run_pending();
    assert_string_equal(got, "a"); /* the frozen task's wait */
    thaw_runs_everything_once(t, "aAB", spare);
}

/* With no block to spare (the pool down to the migrator's reserve) the
 * message stays held in the slot's block: nothing is lost, and the slot is
 * free again once it has run. */
static void test_a_freeze_without_a_spare_block_keeps_the_message_in_the_slot(void **state)
{
    (void) state;
    uint8_t spare = queue_a_bare_message_in_the_slot();
    msg_t *taken = NULL;
    while (sched_msg_spare() > (MOTET_BUS ? MIG_RESERVE : 0)) {
        msg_t *m = sched_msg_alloc();
        m->next = taken;
        taken = m;
    }
    task_t *t = sched_find_task(BARE);
    sched_mig_freeze(t);
    assert_int_not_equal(sched.isr_msg.flags, 0); /* still the message's */
    assert_int_equal(sched_mig_held_count(t), 1);
    while (taken) {
        msg_t *next = taken->next;
        sched_mig_msg_free(taken);
        taken = next;
    }
    assert_int_equal(sched_post_isr(ALSO, PORT_0, NULL, 0, 0), MT_OK); /* in a pool block */
    thaw_runs_everything_once(t, "Aa", spare);
}

/* A kill freezes too: the slot's message, moved to a pool block, goes
 * with the task's other messages, and the slot and the pool are whole. */
static void test_a_kill_gives_the_slot_back(void **state)
{
    (void) state;
    uint8_t spare = queue_a_bare_message_in_the_slot();
    assert_int_equal(sched_task_kill(BARE), MT_OK);
    assert_int_equal(sched.isr_msg.flags, 0);
    assert_int_equal(sched_msg_spare(), spare);
    sched_run_pending();
    assert_string_equal(got, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_frozen_task_holds_everything_in_order, setup),
        cmocka_unit_test_setup(test_flags_changed_while_a_task_runs_decide_its_gate_at_the_pop,
                               setup),
        cmocka_unit_test_setup(test_lists_are_spliced_where_the_migrator_puts_them, setup),
        cmocka_unit_test_setup(test_forwarded_payloads_take_the_heap_only_when_too_big, setup),
        cmocka_unit_test_setup(test_take_held_empties_the_list, setup),
        cmocka_unit_test_setup(test_serialize_runs_now_with_its_result, setup),
        cmocka_unit_test_setup(test_task_leaves_and_arrives, setup),
        cmocka_unit_test_setup(test_arrival_that_fails_keeps_the_remote_block, setup),
        cmocka_unit_test_setup(test_an_arrived_task_takes_no_second_init, setup),
        cmocka_unit_test_setup(test_a_frozen_task_takes_no_init, setup),
        cmocka_unit_test_setup(test_a_freeze_frees_the_interrupt_slot, setup),
        cmocka_unit_test_setup(test_a_freeze_without_a_spare_block_keeps_the_message_in_the_slot,
                               setup),
        cmocka_unit_test_setup(test_a_kill_gives_the_slot_back, setup),
    };
    return cmocka_run_group_tests_name("scheduler support for migration", tests, NULL, NULL);
}
