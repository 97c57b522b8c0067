/* SPDX-License-Identifier: MIT */
/*
 * Application descriptions across modules (see bus.h).
 *
 * The loader broadcasts a description; every module, the loader included
 * once its frame has been acknowledged, hands it to its application manager in the
 * order the bus carried it, so every module maps relative ids to the same
 * device ids. Each manager creates its part (stage one) and reports the
 * outcome in a broadcast; every module counts the reports in bus order and,
 * once every module of the device has reported, gives its manager the same
 * verdict: MT_OK (initialise) or the first error reported (undo), with the
 * task and module it is about. No task is initialised, so none can send,
 * before every module has created its tasks and its remote control blocks.
 * The verdict is never lost for want of a message block: one is set aside
 * for it when the description comes, or this module takes no part.
 */
#include <string.h>

#include "bus_internal.h"
#include "motet/appmgr.h"
#include "motet/log.h"
#include "motet/port.h"
#include "sched_internal.h"

#if MOTET_BUS

static struct {
    bool busy;                             /* a description is between broadcast and verdict */
    uint32_t reported;                     /* modules whose outcome has come */
    uint8_t verdict[BUS_APP_OUTCOME_SIZE]; /* MT_OK or the first error reported */
    msg_t *verdict_block;                  /* set aside for the verdict to our manager */
} A;

static void clear_verdict(void)
{
    A.reported = 0;
    A.verdict[0] = MT_OK;
    A.verdict[1] = APPMGR_NO_TASK;
    A.verdict[2] = 0;
}

void bus_app_reset(void)
{
    A.busy = false;
    A.verdict_block = NULL; /* after motet_boot(): the pool holds every block */
    clear_verdict();
}

mt_err_t bus_app_load(const uint8_t *desc, uint16_t len)
{
    if (!bus_active()) return appmgr_load(desc, len);
    if (A.busy) return log_error(MT_ERR_STATE);
    if (len > MOTET_APP_DESC_MAX || (len && !desc)) return log_error(MT_ERR_DESC_LENGTH);
    mt_err_t err = bus_send_frame(BUS_FRAME_DESC, BUS_BROADCAST, MT_PID_APPMGR, PORT_0,
                                  BUS_PRIO_SYSTEM, desc, len);
    if (!err) A.busy = true;
    return err;
}

void bus_app_description(const bus_frame_t *f, bool own)
{
    /* The loader counts from its load on: another module's outcome can
     * come before the loader's own frame is acknowledged by everyone. */
    if (!own) {
        A.busy = true;
        clear_verdict();
    }
    /* Two blocks, one for the description and one set aside for the
     * verdict, or none (each failure logged where it failed): this module
     * takes no part, and says so, so that every module undoes its part on
     * the verdict rather than wait for this one's outcome for ever. */
    if (!A.verdict_block) A.verdict_block = sched_msg_alloc();
    mt_err_t err = A.verdict_block
                       ? sched_post_isr(MT_PID_APPMGR, PORT_0, (void *) f->payload, f->len, 0)
                       : MT_ERR_QUEUE_FULL;
    if (!err) return;
    if (A.verdict_block) sched_msg_free(A.verdict_block);
    A.verdict_block = NULL;
    bus_app_created(err, APPMGR_NO_TASK, bus_self());
}

void bus_app_created(mt_err_t err, uint8_t task, mt_module_t module)
{
    uint8_t outcome[BUS_APP_OUTCOME_SIZE] = {(uint8_t) err, task, module};
    if (bus_send_frame(BUS_FRAME_CREATED, BUS_BROADCAST, MT_PID_APPMGR, BUS_APPMGR_PORT_VERDICT,
                       BUS_PRIO_SYSTEM, outcome, sizeof outcome) != MT_OK)
        bus_app_report(bus_self(), outcome); /* logged; the others cannot know */
}

void bus_app_report(mt_module_t from, const uint8_t *outcome)
{
    if (!A.busy || from >= MOTET_BUS_MODULES) return;
    A.reported |= (uint32_t) 1u << from;
    if (outcome[0] != MT_OK && A.verdict[0] == MT_OK) memcpy(A.verdict, outcome, sizeof A.verdict);
    if ((A.reported & bus_modules()) != bus_modules()) return;
    A.busy = false;
    /* Our manager holds no description: it has nothing to decide. */
    if (!A.verdict_block) return;
    /* The block set aside goes back to the pool with interrupts off, so
     * the post takes it before anything else can; and nothing else can
     * refuse it: the manager always exists, and the verdict, copied into
     * the block, needs no heap. */
    port_irq_state_t s = port_irq_save();
    sched_msg_free(A.verdict_block);
    A.verdict_block = NULL;
    sched_post_isr(MT_PID_APPMGR, BUS_APPMGR_PORT_VERDICT, A.verdict, sizeof A.verdict, 0);
    port_irq_restore(s);
}

#endif /* MOTET_BUS */
