/* SPDX-License-Identifier: MIT */
/*
 * Shared fixtures for the kernel unit tests: a fresh kernel before every
 * test, on whichever port the tests are built for (test_port.h).
 */
#ifndef TEST_SUPPORT_H
#define TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "motet/motet.h"
#include "test_port.h"

/* cmocka setup: counter starting at 0, fresh kernel. */
int test_boot(void **state);
/* Same, with the counter starting at `counter_start` (wrap tests). */
void test_boot_at(uint32_t counter_start);
/* Number of logged EV_ERROR records carrying `err` among the undrained ones
 * (drains the log). */
unsigned test_count_logged_errors(mt_err_t err);
/* Number of undrained records of `type` (drains the log); *pid and *arg
 * are the last one's. */
unsigned test_logged(log_event_type_t type, mt_pid_t *pid, uint16_t *arg);

/* Create task pid at level prio with handler h and initialise it (its
 * INIT run or queued as the rules say); fails the test if either is
 * refused. */
void test_task(mt_pid_t pid, mt_prio_t prio, task_handler_t h);

/* Whether the interrupt slot's block holds a message queued last at
 * level prio, as a queued message (not waiting for the exit, no pool
 * block). */
bool test_slot_queued_last_at(mt_prio_t prio);

/* Paint `bytes` of the stack just below the caller's frame (where the
 * frames of a call it just made were), run wait(), and return how many of
 * them changed meanwhile: a call that ended only then would have written
 * into them. */
unsigned test_canary_across(size_t bytes, void (*wait)(void));

/* A trace of what ran, for tests that check an order: test_note()
 * appends, test_trace() reads, test_boot() empties it. */
void test_note(const char *s);
const char *test_trace(void);

#if MOTET_THREADS
/* Create a thread on `stack` (`size` bytes, no analyser figure) running
 * entry(arg) at level prio, started as `start` (THREAD_START_*); fails
 * the test if it cannot be created. */
thread_t *test_thread(void *stack, size_t size, thread_entry_t entry, void *arg, mt_prio_t prio,
                      uint8_t start);
/* The same, bound to task pid (thread_spec_t.pid: its sends name pid, its
 * mailbox is pid's; MT_PID_NONE: unbound, as test_thread()). */
thread_t *test_bound_thread(mt_pid_t pid, void *stack, size_t size, thread_entry_t entry, void *arg,
                            mt_prio_t prio, uint8_t start);
#endif

#endif /* TEST_SUPPORT_H */
