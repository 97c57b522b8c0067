/* SPDX-License-Identifier: MIT */
/*
 * A heap payload's owners (docs/architecture.md, who owns a message block
 * when): a sender hands it to the kernel (send.c: payload_lend_irq_off()
 * under a send's lock, payload_to_kernel() otherwise), the running handler
 * takes it (sched_take(), sched_take_msg()), and the kernel frees what it
 * did not take once the handler returns (send_drop_payload()). A borrowed
 * payload is copied to the heap instead. A payload sent the general way is
 * checked first (payload_check()), and one copied where it goes (another
 * module, a group) freed after (payload_consumed()).
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

mt_err_t payload_check(const void *data, uint16_t len, uint8_t flags, const task_t *from,
                       mt_pid_t sender)
{
    if (!(flags & MSG_HEAP)) return len && !data ? log_error(MT_ERR_INVALID) : MT_OK;
    size_t size = mem_block_size(data);
    if (!size) return log_error(MT_ERR_BAD_POINTER);
    if (mem_owner(data) != sender && !(from && from->payload == data))
        return log_error(MT_ERR_NOT_OWNER);
    return size < len ? log_error(MT_ERR_INVALID) : MT_OK;
}

void payload_consumed(void *data, uint8_t flags, mt_pid_t sender)
{
    if (!(flags & MSG_HEAP)) return;
    task_t *frame = sched_sending_frame(sender);
    if (frame && frame->payload == data) frame->payload = NULL; /* not freed again at its return */
    mem_release(data);
}
