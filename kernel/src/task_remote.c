/* SPDX-License-Identifier: MIT */
/*
 * Tasks on other modules: the records that route a send to a task that
 * lives elsewhere (its module and priority), and the send itself, which
 * the bus manager takes over (sched_set_remote_send()). Only this file
 * holds their state, so that a single-module build
 * (MOTET_MAX_REMOTE_TASKS=0, config.h) has neither the table nor the code.
 */
#include "migrate_internal.h"
#include "motet/log.h"
#include "motet/mem.h"
#include "sched_internal.h"
#include "slab.h"

#if MOTET_MAX_REMOTE_TASKS

SLAB_DEFINE(remote_cache, remote_task_t, MOTET_MAX_REMOTE_TASKS);

static struct {
    sched_remote_send_fn send; /* the bus manager's, NULL without a bus */
    remote_task_t *slots[MOTET_MAX_REMOTE_TASKS];
} remote;

void task_remote_init(void)
{
    slab_init(&remote_cache);
    remote.send = NULL;
    for (uint8_t i = 0; i < MOTET_MAX_REMOTE_TASKS; i++) remote.slots[i] = NULL;
}

/* The slot holding pid's remote block; for MT_PID_NONE, a free slot. */
static remote_task_t **find_remote_slot(mt_pid_t pid)
{
    for (uint8_t i = 0; i < MOTET_MAX_REMOTE_TASKS; i++) {
        remote_task_t *r = remote.slots[i];
        if (r ? r->pid == pid : pid == MT_PID_NONE) return &remote.slots[i];
    }
    return NULL;
}

remote_task_t *sched_remote_find(mt_pid_t pid)
{
    remote_task_t **slot = pid == MT_PID_NONE ? NULL : find_remote_slot(pid);
    return slot ? *slot : NULL;
}

mt_err_t sched_task_create_remote(mt_pid_t pid, mt_prio_t prio, mt_module_t module)
{
    /* As sched_task_create(): a migration under way holds its task's pid
     * until it ends, even once the task was killed, and routes it itself. */
    if (task_pid_is_app(pid) && mig_pid_pinned(pid)) return log_error(MT_ERR_EXISTS);
    return task_create_remote_migrating(pid, prio, module);
}

mt_err_t task_create_remote_migrating(mt_pid_t pid, mt_prio_t prio, mt_module_t module)
{
    if (!task_pid_is_app(pid) || prio < 0 || prio >= MOTET_PRIO_LEVELS)
        return log_error(MT_ERR_INVALID);
    if (task_find_locked(pid) || sched_remote_find(pid)) return log_error(MT_ERR_EXISTS);
    remote_task_t **slot = find_remote_slot(MT_PID_NONE);
    if (!slot) return log_error(MT_ERR_NO_SLAB);
    remote_task_t *r = slab_alloc(&remote_cache); /* logs its own exhaustion */
    if (!r) return MT_ERR_NO_SLAB;
    r->pid = pid;
    r->prio = prio;
    r->module = module;
    *slot = r;
    return MT_OK;
}

mt_err_t sched_task_remove_remote(mt_pid_t pid)
{
    remote_task_t **slot = pid == MT_PID_NONE ? NULL : find_remote_slot(pid);
    if (!slot) return log_error(MT_ERR_NO_TASK);
    slab_free(&remote_cache, *slot);
    *slot = NULL;
    return MT_OK;
}

void sched_set_remote_send(sched_remote_send_fn fn)
{
    remote.send = fn;
}

mt_err_t send_remote(mt_pid_t pid, mt_port_t port, void *data, uint16_t len, uint8_t flags)
{
    remote_task_t *r = sched_remote_find(pid);
    if (!r) return log_error(MT_ERR_NO_TASK);
    if (!remote.send) return log_error(MT_ERR_NO_ROUTE);
    mt_pid_t sender = sched_current_pid();
    mt_err_t err = payload_check(data, len, flags, sender);
    if (err) return err;
    msg_t m = {.next = NULL,
               .data = data,
               .len = len,
               .dst = pid,
               .port = port,
               .src = sender,
               .flags = (uint8_t) (flags & MSG_HEAP)};
    err = remote.send(r->module, &m, r->prio); /* a heap payload is its on success */
    return err ? log_error(err) : MT_OK;
}

#else

/* No room for tasks on other modules: a description that names one is
 * refused like a full table, once its pid is an application's as with
 * remote tasks. */
mt_err_t sched_task_create_remote(mt_pid_t pid, mt_prio_t prio, mt_module_t module)
{
    (void) prio;
    (void) module;
    return log_error(task_pid_is_app(pid) ? MT_ERR_NO_SLAB : MT_ERR_INVALID);
}

mt_err_t task_create_remote_migrating(mt_pid_t pid, mt_prio_t prio, mt_module_t module)
{
    return sched_task_create_remote(pid, prio, module);
}

void sched_set_remote_send(sched_remote_send_fn fn)
{
    (void) fn;
}

#endif /* MOTET_MAX_REMOTE_TASKS */
