/* SPDX-License-Identifier: MIT */
/*
 * A heap payload's owners (docs/architecture.md, who owns a message block
 * when): a sender hands it to the kernel (send.c's payload_lend_irq_off()
 * under a send's lock, payload_to_kernel() otherwise), the running handler
 * takes it (sched_take(), sched_take_msg()), and the kernel frees what it
 * did not take once the handler returns (send_drop_payload()). A borrowed
 * payload is copied to the heap instead. Whether a heap payload sent is
 * the sender's and holds its length is one rule, payload_pass(), on every
 * way but the fast one: a payload the kernel keeps on the module is
 * checked as it becomes the kernel's (payload_to_kernel()), one copied
 * where it goes (another module, a group, a beacon's) before the copy
 * (payload_check()) and freed after (payload_consumed()). The fast way
 * along a route (send.c's payload_lend_irq_off()) has its own: the
 * payload the handler was given by the same length check, but the
 * sender's own block by its owner only (docs/architecture.md, the length
 * check's cost to the SSL chain).
 */
#include <string.h>

#include "mem_internal.h"
#include "motet/mem.h"
#include "sched_internal.h"
#include "thread_internal.h"

void send_drop_payload(task_t *t)
{
    void *payload = t->payload;
    t->payload = NULL;
    mem_release(payload); /* the kernel's, in the receiver's context */
}

/* A heap copy of a borrowed payload for the running task; NULL for none,
 * or when the heap is exhausted (logged). */
static void *heap_copy(const void *data, uint16_t len)
{
    if (!len || !data) return NULL;
    void *copy = mem_alloc(len);
    if (copy) memcpy(copy, data, len);
    return copy;
}

void *sched_take_msg(msg_t *msg)
{
    if (!msg) return NULL;
    /* Any other was the pool's again at this thread's receive, or never
     * its own: its block may hold another task's message by now. */
    if (msg != thread_last_mail()) {
        log_error(MT_ERR_INVALID);
        return NULL;
    }
    if ((msg->flags & MSG_HEAP) && msg->len && msg->data) {
        mem_set_owner(msg->data, sched_current_pid());
        msg->flags &= (uint8_t) ~MSG_HEAP; /* no longer freed with the message */
        return msg->data;
    }
    return heap_copy(msg->data, msg->len);
}

void *sched_take(void *data, uint16_t len)
{
    task_t *top = sched_running_frame();
    if (top && data && top->payload == data) {
        /* The running handler's own heap payload; one the handler was lent
         * by a frame below is not in its frame, and is copied. */
        top->payload = NULL;
        return mem_hand_over(data, top->pid); /* checked when it was sent */
    }
    return heap_copy(data, len);
}

/* The rule for a heap payload of len bytes that `sender` (MT_PID_NONE:
 * an interrupt body or no handler) sends, `from` its frame if any: the
 * payload its handler was given, or a block of the sender's own, either
 * of at least len bytes; refused and logged otherwise, nothing changed.
 * `to_kernel`: the block becomes the kernel's (the frame lets go of the
 * payload it holds); else a check, which changes nothing but from no
 * task, where the block passed becomes the kernel's (below). In line in
 * its two entries, so that their callers pass it the four arguments they
 * have (a fifth takes a call-saved register on the ATmega128). */
static MT_INLINE mt_err_t payload_pass(void *data, uint16_t len, task_t *from, mt_pid_t sender,
                                       bool to_kernel)
{
    if (from && data && from->payload == data) { /* the kernel's, lent to the sender's handler */
        if (!mem_holds(data, len)) return log_error(MT_ERR_INVALID);
        if (to_kernel) from->payload = NULL; /* the kernel's message holds it now */
        return MT_OK;
    }
    /* The sender's own, passed to the kernel, or for a check to the sender
     * itself, which changes nothing from a task. From no task, any block, as
     * on the local way (mem_pass() from the kernel): an interrupt body or
     * code outside every handler acts for the kernel, which may free any
     * block (mem_free()), so an owner asked of it would protect nothing; and
     * every interrupt body is MT_PID_NONE, so a block of "its own" could not
     * be told from another's. Its check makes the block the kernel's (the
     * sender MT_PID_NONE is MEM_OWNER_KERNEL), as a send on the local way
     * does. */
    return mem_pass(data, len, sender, to_kernel ? MEM_OWNER_KERNEL : sender);
}

mt_err_t payload_to_kernel(void *data, uint16_t len, task_t *from, mt_pid_t sender)
{
    return payload_pass(data, len, from, sender, true);
}

mt_err_t payload_check(void *data, uint16_t len, uint8_t flags, mt_pid_t sender)
{
    if (!(flags & MSG_HEAP)) return len && !data ? log_error(MT_ERR_INVALID) : MT_OK;
    return payload_pass(data, len, sched_sending_frame(sender), sender, false);
}

void payload_consumed(void *data, uint8_t flags, mt_pid_t sender)
{
    if (!(flags & MSG_HEAP)) return;
    task_t *frame = sched_sending_frame(sender);
    if (frame && frame->payload == data) frame->payload = NULL; /* not freed again at its return */
    mem_release(data);
}
