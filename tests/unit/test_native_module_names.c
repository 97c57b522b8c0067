/* SPDX-License-Identifier: MIT */
/*
 * Tasks and groups of a loaded description found by name (module.h):
 * module_task_pid(), module_group_id(), module_task_name(), against the
 * device ids the application manager handed out, before and after loads.
 * The description is test_native_module_names.toml, compiled by the build
 * with its names (test_native_module_names_app).
 */
#include <string.h>

#include "test_names_apps.h"
#include "test_support.h"

static mt_err_t worker(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) port;
    (void) data;
    (void) len;
    return MT_OK;
}

static const program_t programs[] = {
    {.id = 1, .name = "worker", .handler = worker, .state_size = 0},
};

static const module_app_t *app(void)
{
    return &test_native_module_names_app;
}

static int setup(void **state)
{
    test_boot(state);
    program_register(programs, 1);
    return 0;
}

static void test_nothing_is_found_before_a_load(void **state)
{
    (void) state;
    assert_int_equal(module_use_app(app(), false), MT_OK);
    assert_ptr_equal(module_current_app(), app());
    assert_int_equal(module_task_pid("source"), MT_PID_INVALID);
    assert_int_equal(module_group_id("all"), MODULE_NO_GROUP);
    assert_null(module_task_name(MT_PID_FIRST_APP));
}

static void test_tasks_and_groups_are_found_by_name_once_loaded(void **state)
{
    (void) state;
    assert_int_equal(module_use_app(app(), true), MT_OK);
    const appmgr_result_t *r = appmgr_last_result();
    assert_int_equal(r->err, MT_OK);
    assert_int_equal(module_task_pid("source"), r->pid_base);
    assert_int_equal(module_task_pid("middle"), r->pid_base + 1);
    assert_int_equal(module_task_pid("sink"), r->pid_base + 2);
    assert_int_equal(module_group_id("all"), r->group_base);
    assert_int_equal(module_group_id("ends"), r->group_base + 1);
    assert_string_equal(module_task_name(r->pid_base + 2), "sink");
    /* The pid found is the task's: it runs the program named for it. */
    assert_string_equal(sched_task_program(module_task_pid("middle"))->name, "worker");
}

static void test_unknown_names_and_pids_are_not_found(void **state)
{
    (void) state;
    assert_int_equal(module_use_app(app(), true), MT_OK);
    assert_int_equal(module_task_pid("nobody"), MT_PID_INVALID);
    assert_int_equal(module_task_pid("all"), MT_PID_INVALID); /* a group, not a task */
    assert_int_equal(module_task_pid(NULL), MT_PID_INVALID);
    assert_int_equal(module_group_id("sink"), MODULE_NO_GROUP);
    assert_null(module_task_name(MT_PID_APPMGR));
    assert_null(module_task_name((mt_pid_t) (appmgr_last_result()->pid_base + 3)));
}

static void test_a_second_load_names_the_new_instance(void **state)
{
    (void) state;
    assert_int_equal(module_use_app(app(), true), MT_OK);
    mt_pid_t first = module_task_pid("sink");
    uint8_t first_group = module_group_id("ends");
    assert_int_equal(module_use_app(app(), true), MT_OK);
    assert_int_equal(module_task_pid("sink"), first + 3);
    assert_int_equal(module_group_id("ends"), first_group + 2);
}

static void test_a_failed_load_finds_nothing(void **state)
{
    (void) state;
    program_register(programs, 0); /* the worker program is gone */
    assert_int_equal(module_use_app(app(), true), MT_OK);
    assert_int_equal(appmgr_last_result()->err, MT_ERR_NO_PROGRAM);
    assert_int_equal(module_task_pid("source"), MT_PID_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_nothing_is_found_before_a_load, setup),
        cmocka_unit_test_setup(test_tasks_and_groups_are_found_by_name_once_loaded, setup),
        cmocka_unit_test_setup(test_unknown_names_and_pids_are_not_found, setup),
        cmocka_unit_test_setup(test_a_second_load_names_the_new_instance, setup),
        cmocka_unit_test_setup(test_a_failed_load_finds_nothing, setup),
    };
    return cmocka_run_group_tests_name("module names", tests, NULL, NULL);
}
