/* SPDX-License-Identifier: MIT */
/*
 * The state of a task whose program declares a layout (program_t.layout,
 * motet/state_layout.h), moved by the migrator itself: encoded at the
 * source instead of PORT_SERIALIZE, decoded into the fresh state at the
 * destination before PORT_DESERIALIZE. The two modules may lay the struct
 * out differently (word size, alignment, byte order); the wire format is
 * the same.
 */
#include "mem_internal.h"
#include "migrate_internal.h"
#include "motet/mem.h"
#include "motet/program.h"

#if MOTET_BUS

mt_err_t mig_layout_encode(const task_t *t, const program_t *prog, uint8_t **block, uint16_t *len)
{
    uint16_t size = state_layout_size(prog->layout, prog->state_size);
    if (!size) return MT_ERR_INVALID; /* the program's layout does not fit its state */
    uint8_t *b = mem_alloc_owned(size, MEM_OWNER_KERNEL);
    if (!b) return MT_ERR_NO_MEM;
    state_layout_encode(prog->layout, t->state, prog->state_size, b, size);
    *block = b;
    *len = size;
    return MT_OK;
}

mt_err_t mig_layout_decode(task_t *t, const program_t *prog, uint8_t *block, uint16_t len)
{
    mt_err_t err = state_layout_decode(prog->layout, block, len, t->state, prog->state_size);
    mem_release(block);
    /* The layout's fields are in place: the task may rebuild the rest. */
    return err ? err : sched_mig_call(t, PORT_DESERIALIZE, NULL, 0);
}

#endif /* MOTET_BUS */
