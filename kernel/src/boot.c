/* SPDX-License-Identifier: MIT */
/*
 * Start-up in named stages: the port, then the components that others
 * depend on (log and memory first, the scheduler last), then the
 * application manager, the first task; interrupts are enabled last.
 */
#include "appmgr_internal.h"
#include "bus_internal.h"
#include "log_ring.h"
#include "mcast_internal.h"
#include "mem_internal.h"
#include "motet/bus.h"
#include "motet/motet.h"
#include "motet/port.h"
#include "sched_internal.h"
#include "timer_internal.h"

void motet_boot(void)
{
    port_init();
    log_init();
    mem_init();
    timer_init();
    mcast_init();
    sched_init();
    bus_init();
#if MOTET_APPMGR
    mt_err_t err = appmgr_start(); /* a failed INIT run in it halted there */
    if (err) task_system_start_failed(MT_PID_APPMGR, err);
#endif
    port_irq_enable(); /* the module is live: interrupts may now post */
}
