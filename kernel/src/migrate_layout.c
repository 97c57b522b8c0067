/* SPDX-License-Identifier: MIT */
/*
 * The state of a task whose program declares a layout (program_t.layout,
 * motet/state_layout.h), moved by the migrator itself: encoded at the
 * source instead of PORT_SERIALIZE, chunk by chunk as the image goes, from
 * the task's own state (frozen, it does not change, and it stays until the
 * destination runs the task), so that no second copy takes heap; decoded
 * at the destination chunk by chunk as the image arrives, into the block
 * that becomes the new task's state before PORT_DESERIALIZE. The two
 * modules may lay the struct out differently (word size, alignment, byte
 * order); the wire format is the same.
 */
#include "mem_internal.h"
#include "migrate_internal.h"
#include "motet/mem.h"
#include "motet/program.h"

#if MOTET_BUS

mt_err_t mig_layout_check(const program_t *prog, uint16_t *len)
{
    *len = state_layout_size(prog->layout, prog->state_size);
    return *len ? MT_OK : MT_ERR_INVALID; /* the program's layout does not fit its state */
}

/* Encoded with interrupts on (a chunk is up to a frame's payload, too long
 * a copy to hold them off for), from the state found under a short lock,
 * then the task found again under another: a handler's kill at an
 * interrupt's exit frees the state, which another task may take at once,
 * so the chunk is kept only if the task is still there. Found then, it
 * was never killed during the copy: the slot pins its pid (no task of it
 * can be made meanwhile), and a frozen task's state does not change. */
bool mig_layout_part(mt_pid_t pid, uint16_t offset, uint8_t *out, uint16_t n)
{
    port_irq_state_t st = port_irq_save();
    const task_t *t = sched_find_task(pid);
    const program_t *prog = t ? program_find_handler(t->handler) : NULL;
    const void *state = t ? t->state : NULL;
    port_irq_restore(st);
    bool done =
        prog && prog->layout &&
        state_layout_encode_part(prog->layout, state, prog->state_size, offset, out, n) == n;
    st = port_irq_save();
    done = done && sched_find_task(pid) != NULL; /* killed meanwhile: the bytes may be another's */
    port_irq_restore(st);
    return done;
}

uint8_t *mig_layout_rx_start(const program_t *prog, uint16_t len, mt_err_t *err)
{
    uint16_t wire;
    *err = mig_layout_check(prog, &wire);
    if (!*err && wire != len) *err = MT_ERR_INVALID; /* another layout: another version */
    uint8_t *state = *err ? NULL : mem_alloc_owned(prog->state_size, MEM_OWNER_KERNEL);
    if (state) /* what the layout does not list arrives as zero; the rest is overwritten */
        state_layout_clear_rest(prog->layout, state, prog->state_size);
    else if (!*err)
        *err = MT_ERR_NO_MEM;
    return state;
}

void mig_layout_rx_part(const program_t *prog, uint8_t *state, uint16_t offset, const uint8_t *in,
                        uint16_t n)
{
    state_layout_decode_part(prog->layout, in, offset, n, state, prog->state_size);
}

mt_err_t mig_layout_attach(mt_pid_t pid, uint8_t *state)
{
    port_irq_state_t st = port_irq_save(); /* found and given its state in one step */
    task_t *t = sched_find_task(pid);
    if (t) t->state = mem_hand_over(state, pid);
    port_irq_restore(st);
    if (!t) {
        mem_release(state); /* killed meanwhile */
        return MT_ERR_NO_TASK;
    }
    /* The layout's fields are in place: the task may rebuild the rest. */
    return sched_mig_call(pid, PORT_DESERIALIZE, NULL, 0);
}

#endif /* MOTET_BUS */
