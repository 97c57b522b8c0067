/* SPDX-License-Identifier: MIT */
/*
 * Threads on the native port: the context switch keeps every callee-saved
 * register and the stack alignment the ABI wants, and the run-time guard of
 * a thread the stack analyser could not size stops the module when the
 * guard words are overwritten (in a child process: the module halts).
 *
 * MOTET_TEST_KERNEL: threads
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_support.h"

#define STACK THREAD_STACK_BYTES(0)

static uint8_t stacks[2][STACK];
static sem_t sem;

static int setup(void **state)
{
    test_boot(state);
    sem_init(&sem, 0);
    return 0;
}

/* Floating point and a 16-byte aligned local, across many switches. */
static double sums[2];
static bool aligned[2] = {true, true};

static void ping(void *arg)
{
    int i = (int) (intptr_t) arg;
    _Alignas(16) volatile uint8_t probe[16];
    for (int n = 1; n <= 100; n++) {
        double before = sums[i];
        aligned[i] = aligned[i] && ((uintptr_t) probe % 16u) == 0;
        if (i == 0)
            sem_post(&sem); /* hands over to the other, higher one */
        else
            sem_wait(&sem);
        sums[i] = before + n * 0.5;
    }
}

static void test_switches_keep_registers_and_alignment(void **state)
{
    (void) state;
    thread_spec_t b = {
        .entry = ping, .arg = (void *) 1, .stack = stacks[1], .stack_size = STACK, .prio = 3};
    thread_spec_t a = {
        .entry = ping, .arg = (void *) 0, .stack = stacks[0], .stack_size = STACK, .prio = 2};
    assert_int_equal(thread_create(&b, NULL), MT_OK);
    assert_int_equal(thread_create(&a, NULL), MT_OK);
    assert_true(sums[0] == 2525.0 && sums[1] == 2525.0);
    assert_true(aligned[0] && aligned[1]);
    assert_true(thread_switch_count() >= 200);
}

static void smasher(void *arg)
{
    (void) arg;
    stacks[0][3] = 0; /* as an overflow would: the lowest bytes of the stack */
    sem_wait(&sem);   /* the switch away checks the guard */
}

static void test_guard_stops_the_module_on_overflow(void **state)
{
    (void) state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        dup2(fds[1], STDOUT_FILENO);
        thread_spec_t spec = {.entry = smasher, .stack = stacks[0], .stack_size = STACK, .prio = 1};
        thread_create(&spec, NULL);
        _exit(0); /* not reached if the guard works */
    }
    close(fds[1]);
    char out[128] = {0};
    ssize_t n = read(fds[0], out, sizeof out - 1);
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    assert_true(n > 0);
    assert_non_null(strstr(out, "stack overflow"));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 3);
}

static void test_a_sized_thread_has_no_guard_check(void **state)
{
    (void) state;
    thread_t *t;
    thread_spec_t spec = {.entry = smasher,
                          .stack = stacks[0],
                          .stack_size = STACK,
                          .stack_need = STACK - PORT_THREAD_STACK_EXTRA,
                          .prio = 1};
    assert_int_equal(thread_create(&spec, &t), MT_OK); /* smashes, blocks, no halt */
    assert_false(thread_stack_guard_ok(t));
    sem_post(&sem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_switches_keep_registers_and_alignment, setup),
        cmocka_unit_test_setup(test_guard_stops_the_module_on_overflow, setup),
        cmocka_unit_test_setup(test_a_sized_thread_has_no_guard_check, setup),
    };
    return cmocka_run_group_tests_name("native threads", tests, NULL, NULL);
}
