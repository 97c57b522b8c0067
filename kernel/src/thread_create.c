/* SPDX-License-Identifier: MIT */
/*
 * The thread table's slots and what they tell, and creating a thread: the specification
 * checked, a slot claimed and filled in, the bound task made, the context
 * built; then thread.c's thread_admit() lets it run, hold or wait for
 * sched_run() under the lock (docs/threads.md).
 */
#include <string.h>

#include "motet/log.h"
#include "thread_internal.h"

#if MOTET_THREADS

static thread_t threads[MOTET_MAX_THREADS];

void thread_slots_init(void)
{
    memset(threads, 0, sizeof threads);
    for (uint8_t i = 0; i < MOTET_MAX_THREADS; i++) threads[i].id = i;
}

thread_t *thread_by_id(uint8_t id)
{
    return id < MOTET_MAX_THREADS ? &threads[id] : NULL;
}

thread_t *thread_self(void)
{
    return thread_current;
}

mt_prio_t thread_prio(const thread_t *t)
{
    return t->prio;
}

int8_t thread_dyn_prio(const thread_t *t)
{
    return t->dyn;
}

/* Every thread starts here, on its own stack, with irq off. */
static void thread_start(void *arg)
{
    thread_t *t = arg;
    port_irq_enable();
    t->entry(t->arg);
    thread_exit();
}

thread_t *thread_claim_slot(void)
{
    thread_t *found = NULL;
    port_irq_state_t s = port_irq_save();
    for (uint8_t i = 0; i < MOTET_MAX_THREADS && !found; i++) {
        thread_t *t = thread_by_id(i);
        if (t->state == TS_FREE && !(t->flags & THREAD_F_IDLE)) found = t;
    }
    if (found) found->state = TS_BLOCKED; /* waiting for nothing: no waker knows it */
    port_irq_restore(s);
    return found;
}

void thread_release_slot(thread_t *t)
{
    t->state = TS_FREE; /* one byte: no lock needed */
}

static mt_err_t validate(const thread_spec_t *spec)
{
    if (!spec || !spec->entry || !spec->stack) return MT_ERR_INVALID;
    if (spec->prio < 0 || spec->prio >= MOTET_PRIO_LEVELS) return MT_ERR_INVALID;
    if (spec->stack_size < THREAD_STACK_BYTES(spec->stack_need)) return MT_ERR_INVALID;
    if (spec->n_routes && !spec->routes) return MT_ERR_INVALID;
    if (spec->start > THREAD_START_AT_RUN) return MT_ERR_INVALID;
    return MT_OK;
}

/* Never runs: messages to a bound task go to its thread's mailbox. */
static mt_err_t bound_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) port;
    (void) data;
    (void) len;
    (void) state;
    return MT_OK;
}

static mt_err_t bind_task(thread_t *t, const thread_spec_t *spec)
{
    if (spec->pid == MT_PID_NONE) return MT_OK;
    task_spec_t ts = {.pid = spec->pid,
                      .prio = spec->prio,
                      .handler = bound_handler,
                      .routes = spec->routes,
                      .n_routes = spec->n_routes};
    mt_err_t err = sched_task_create(&ts); /* logs its own errors */
    if (err) return err;
    t->task = task_find_locked(spec->pid);
    sched_task_bind(t->task, t);
    return MT_OK;
}

/* Fill in t from spec (its slot is claimed: nothing else sees it). */
static mt_err_t setup(thread_t *t, const thread_spec_t *spec)
{
    uint8_t id = t->id;
    memset(t, 0, sizeof *t);
    t->id = id;
    t->state = TS_BLOCKED; /* still claimed */
    t->entry = spec->entry;
    t->arg = spec->arg;
    t->stack = spec->stack;
    t->stack_size = spec->stack_size;
    t->prio = t->base_prio = spec->prio;
    t->cls = spec->cls;
    if (!spec->stack_need) t->flags |= THREAD_F_GUARD;
    thread_stack_paint(t);
    mt_err_t err = policy_thread_init(t);
    if (err) return log_error(err);
    return bind_task(t, spec);
}

mt_err_t thread_create(const thread_spec_t *spec, thread_t **out)
{
    if (port_in_isr()) return log_error(MT_ERR_STATE);
    mt_err_t err = validate(spec);
    if (err) return log_error(err);
    thread_t *t = thread_claim_slot();
    if (!t) return log_error(MT_ERR_NO_SLAB);
    err = setup(t, spec);
    if (err) {
        thread_release_slot(t);
        return err;
    }
    port_context_init(&t->ctx, t->stack, t->stack_size, thread_start, t);
    if (out) *out = t;
    uint8_t start = thread_admit(t, spec->start);
    if (start == THREAD_START_NOW)
        thread_preempt_point(); /* it runs now if it outranks the creator */
    return MT_OK;
}

#endif /* MOTET_THREADS */
