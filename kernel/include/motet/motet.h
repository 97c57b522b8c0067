/* SPDX-License-Identifier: MIT */
/*
 * Motet: everything an application needs, in one include.
 */
#ifndef MOTET_MOTET_H
#define MOTET_MOTET_H

#include "motet/appmgr.h"
#include "motet/bus.h"
#include "motet/config.h"
#include "motet/events.h"
#include "motet/log.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/migrate.h"
#include "motet/module.h"
#include "motet/msgq.h"
#include "motet/mutex.h"
#include "motet/pool.h"
#include "motet/program.h"
#include "motet/sched.h"
#include "motet/thread.h"
#include "motet/timer.h"
#include "motet/timesync.h"
#include "motet/types.h"

/* Bring up every kernel component in order (port first); boot only. */
void motet_boot(void);

#endif /* MOTET_MOTET_H */
