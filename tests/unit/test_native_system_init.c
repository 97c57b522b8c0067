/* SPDX-License-Identifier: MIT */
/*
 * A task of the kernel's own whose INIT fails: the application manager as
 * the module boots, the migrator as it joins the bus. The module must not
 * run on without it (it could neither load nor talk): its boot halts the
 * module with status 5, the INITFAIL logged and on the console, naming the
 * task. An application's failed INIT still ends only its task.
 *
 * Their INITs cannot fail as they are, so the test makes them: the
 * kernel's calls to task_create_system() come here first (MOTET_TEST_WRAP)
 * and, for the pid told, create the task with a handler whose INIT fails,
 * or refuse to create it (a full table or heap), which halts the module
 * the same way. Each case runs in a child process, which the halt ends;
 * where the test must see what the kernel left once it asked to halt (a
 * module that is not on the bus), its port_halt() returns instead
 * (MOTET_TEST_WRAP) and the child ends with the status asked for.
 *
 * MOTET_TEST_WRAP: task_create_system port_halt
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "native.h"
#include "sched_internal.h"
#include "test_support.h"

enum { HALT_SYSTEM_TASK_INIT = 5 };

static mt_pid_t failing_pid = MT_PID_NONE;
static bool creation_fails, halt_returns;
static int halted; /* the status port_halt() was asked for; -1: none */

static mt_err_t init_fails(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    (void) data;
    (void) len;
    return port == PORT_INIT ? MT_ERR_NO_MEM : MT_OK;
}

mt_err_t __real_task_create_system(const task_spec_t *spec);

void __real_port_halt(int status);

void __wrap_port_halt(int status)
{
    if (!halt_returns) __real_port_halt(status);
    if (halted < 0) halted = status;
}

mt_err_t __wrap_task_create_system(const task_spec_t *spec)
{
    if (spec->pid != failing_pid) return __real_task_create_system(spec);
    if (creation_fails) return MT_ERR_NO_MEM;
    task_spec_t failing = *spec;
    failing.handler = init_fails;
    return __real_task_create_system(&failing);
}

/* Boots a module in a child, with its errors on the console, and joins the
 * bus; the child ends with status 0 if all of that returned (with
 * halt_returns: with the status of the halt asked for, once it printed
 * what the join left, "joined <0|1> <bus_start()'s error>"). The child's
 * console in out; its exit status returned. */
static int boot_in_child(mt_pid_t fail, char *out, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        dup2(fds[1], STDOUT_FILENO);
        failing_pid = fail;
        native_event_report_errors(true);
        halted = -1;
        tport_boot(0);
        mt_err_t err = bus_start(0, 1u << 0);
        native_event_dump_flush();
        if (halt_returns) printf("joined %d %d\n", bus_active(), err);
        fflush(stdout);
        _exit(halted < 0 ? 0 : halted);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got < cap - 1 && (n = read(fds[0], out + got, cap - 1 - got)) > 0) got += (size_t) n;
    out[got] = 0;
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_a_module_whose_application_manager_cannot_start_halts(void **state)
{
    (void) state;
    char out[1024];
    assert_int_equal(boot_in_child(MT_PID_APPMGR, out, sizeof out), HALT_SYSTEM_TASK_INIT);
    assert_non_null(strstr(out, "ERR the application manager (pid 0xf3)"));
    assert_non_null(strstr(out, "could not start (MT_ERR_NO_MEM"));
}

static void test_a_module_whose_migrator_cannot_start_halts(void **state)
{
    (void) state;
    char out[1024];
    assert_int_equal(boot_in_child(MT_PID_MIGRATOR, out, sizeof out), HALT_SYSTEM_TASK_INIT);
    assert_non_null(strstr(out, "ERR the migrator (pid 0xf2)"));
    assert_non_null(strstr(out, "could not start (MT_ERR_NO_MEM"));
}

/* Not created at all (appmgr_start()'s error, which the boot ignored): the
 * same halt, logged and named. */
static void test_a_module_whose_application_manager_cannot_be_created_halts(void **state)
{
    (void) state;
    char out[1024];
    creation_fails = true;
    assert_int_equal(boot_in_child(MT_PID_APPMGR, out, sizeof out), HALT_SYSTEM_TASK_INIT);
    creation_fails = false;
    assert_non_null(strstr(out, "ERR the application manager (pid 0xf3)"));
    assert_non_null(strstr(out, "could not start (MT_ERR_NO_MEM"));
}

/* bus_start() made the module active before its migrator started and
 * returned the error with the module still active: now the module halts,
 * and a port whose halt returned would find it not on the bus. */
static void test_a_module_whose_migrator_cannot_be_created_halts_off_the_bus(void **state)
{
    (void) state;
    char out[1024];
    creation_fails = halt_returns = true;
    assert_int_equal(boot_in_child(MT_PID_MIGRATOR, out, sizeof out), HALT_SYSTEM_TASK_INIT);
    creation_fails = halt_returns = false;
    assert_non_null(strstr(out, "ERR the migrator (pid 0xf2)"));
    assert_non_null(strstr(out, "could not start (MT_ERR_NO_MEM"));
    char joined[32];
    snprintf(joined, sizeof joined, "joined 0 %d\n", MT_ERR_NO_MEM);
    assert_non_null(strstr(out, joined));
}

/* The wrap changes nothing unless told: the same boot runs on. */
static void test_a_module_whose_own_tasks_start_runs_on(void **state)
{
    (void) state;
    char out[1024];
    assert_int_equal(boot_in_child(MT_PID_NONE, out, sizeof out), 0);
    assert_null(strstr(out, "ERR"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_module_whose_application_manager_cannot_start_halts),
        cmocka_unit_test(test_a_module_whose_migrator_cannot_start_halts),
        cmocka_unit_test(test_a_module_whose_application_manager_cannot_be_created_halts),
        cmocka_unit_test(test_a_module_whose_migrator_cannot_be_created_halts_off_the_bus),
        cmocka_unit_test(test_a_module_whose_own_tasks_start_runs_on),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
