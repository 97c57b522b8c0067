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
 *
 * A load is named by its loader (the DESC frame's sender) and the loader's
 * number for it (the DESC frame's port byte); every outcome names the load
 * it is about, and a module counts only the outcomes of the load it takes
 * part in. A module takes part in one load at a time, the first whose
 * description reaches it (a loader's own, from the moment it starts it):
 * a description of another load meanwhile is refused, logged, and that
 * refusal is this module's outcome of it (MT_ERR_STATE), so that the other
 * load fails on every module, and its loader learns why, rather than mix
 * with the first. A load whose outcomes the bus lost would keep modules
 * busy for ever: a loader's description given up ends its load there
 * (bus_app_given_up()), and a newer load of the same loader supersedes
 * the one a module waits on (supersede()), so a loader can always recover
 * by loading again (docs/bus.md, Lost frames).
 */
#include <string.h>

#include "bus_internal.h"
#include "motet/appmgr.h"
#include "motet/log.h"
#include "motet/port.h"
#include "sched_internal.h"

#if MOTET_BUS

static struct {
    bool busy;                             /* taking part in a load, until its verdict */
    mt_module_t loader;                    /* the load's: its loader */
    uint8_t number;                        /* and the loader's number for it */
    uint8_t last_number;                   /* this module's number for its latest load */
    bool outcome_given;                    /* our manager's outcome of it has gone */
    uint32_t reported;                     /* modules whose outcome has come */
    uint8_t verdict[BUS_APP_OUTCOME_SIZE]; /* MT_OK or the first error reported */
    msg_t *verdict_block;                  /* set aside for the verdict to our manager */
} A;

static void take_part(mt_module_t loader, uint8_t number)
{
    A.busy = true;
    A.loader = loader;
    A.number = number;
    A.outcome_given = false;
    A.reported = 0;
    A.verdict[0] = MT_OK;
    A.verdict[1] = APPMGR_NO_TASK;
    A.verdict[2] = 0;
}

void bus_app_reset(void)
{
    A.busy = false;
    A.last_number = 0;
    A.verdict_block = NULL; /* after motet_boot(): the pool holds every block */
}

/* This module's outcome of load (loader, number), broadcast; any context. */
static void report_outcome(mt_module_t loader, uint8_t number, mt_err_t err, uint8_t task,
                           mt_module_t module)
{
    uint8_t created[BUS_APP_CREATED_SIZE] = {(uint8_t) err, task, module, loader, number};
    if (bus_send_frame(BUS_FRAME_CREATED, BUS_BROADCAST, MT_PID_APPMGR, BUS_APPMGR_PORT_VERDICT,
                       BUS_PRIO_SYSTEM, created, sizeof created) != MT_OK)
        bus_app_report(bus_self(), created); /* logged; the others cannot know */
}

/* The load ends here: its verdict to our manager, on the block set aside
 * for it when our manager holds its description. */
static void give_verdict(void)
{
    A.busy = false;
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

/* A newer load of `loader` supersedes the one this module waits on, whose
 * verdict may never come (an outcome lost on the bus): it ends here as
 * failed (MT_ERR_BUS_LOST), its part undone. Only once our
 * manager has reported on it, as its report would otherwise go out named
 * as the newer load's. True if it ended. */
static bool supersede(mt_module_t loader)
{
    if (!A.busy || A.loader != loader || !A.outcome_given) return false;
    A.verdict[0] = MT_ERR_BUS_LOST; /* logged by our manager as it undoes */
    A.verdict[1] = APPMGR_NO_TASK;
    A.verdict[2] = 0;
    give_verdict();
    return true;
}

mt_err_t bus_app_load(const uint8_t *desc, uint16_t len)
{
    if (!bus_active()) return appmgr_load(desc, len);
    if (len > MOTET_APP_DESC_MAX || (len && !desc)) return log_error(MT_ERR_DESC_LENGTH);
    uint8_t number = (uint8_t) (A.last_number + 1u);
    /* The loader takes part in its load from here on: another module's
     * outcome can come before the loader's own frame is acknowledged by
     * everyone; and before the frame is queued, since a port's interface
     * may take frames in meanwhile (the native link does), another load's
     * description among them, which must find this module busy. With
     * interrupts off: a description must see the load whole. */
    port_irq_state_t s = port_irq_save();
    bool busy = A.busy && !supersede(bus_self());
    if (!busy) take_part(bus_self(), number);
    port_irq_restore(s);
    if (busy) return log_error(MT_ERR_STATE);
    mt_err_t err = bus_send_frame(BUS_FRAME_DESC, BUS_BROADCAST, MT_PID_APPMGR, number,
                                  BUS_PRIO_SYSTEM, desc, len);
    if (err) {
        A.busy = false; /* nothing went: no module takes part */
        return err;
    }
    A.last_number = number;
    return MT_OK;
}

void bus_app_description(const bus_frame_t *f)
{
    /* A loader takes part in its load from its start (bus_app_load()). */
    bool this_load = A.loader == f->src && A.number == f->port;
    if (A.busy && !this_load && !supersede(f->src)) {
        log_error(MT_ERR_STATE);
        report_outcome(f->src, f->port, MT_ERR_STATE, APPMGR_NO_TASK, bus_self());
        return;
    }
    if (!A.busy) take_part(f->src, f->port);
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

void bus_app_given_up(const bus_frame_t *f, mt_err_t why)
{
    if (!A.busy || A.loader != bus_self() || A.number != f->port) return;
    A.busy = false; /* our manager never had it: nothing to undo here */
    report_outcome(bus_self(), f->port, why, APPMGR_NO_TASK, bus_self());
}

/* Our manager's description is the load this module takes part in. */
void bus_app_created(mt_err_t err, uint8_t task, mt_module_t module)
{
    A.outcome_given = true;
    report_outcome(A.loader, A.number, err, task, module);
}

void bus_app_report(mt_module_t from, const uint8_t *outcome)
{
    /* Another load's outcome (one this module refused, or an earlier
     * load's come late) counts for nothing here. */
    bool this_load =
        outcome[BUS_APP_OUTCOME_SIZE] == A.loader && outcome[BUS_APP_OUTCOME_SIZE + 1] == A.number;
    if (!A.busy || !this_load || from >= MOTET_BUS_MODULES) return;
    A.reported |= (uint32_t) 1u << from;
    if (outcome[0] != MT_OK && A.verdict[0] == MT_OK) memcpy(A.verdict, outcome, sizeof A.verdict);
    if ((A.reported & bus_modules()) == bus_modules()) give_verdict();
}

#endif /* MOTET_BUS */
