/* SPDX-License-Identifier: MIT */
/*
 * The application manager task.
 *
 * It runs at the top priority so that no application task can run while an
 * application is half built. A description is first validated as a whole
 * (appdesc.c) and its placement checked (modules, programs), so a bad one
 * creates nothing. Then stage one creates every local task, remote control
 * block and local group membership; if any of those fails, all of them are
 * removed again. Stage one also makes each local task's INIT, so that no
 * INIT fails for want of memory: a message block holding its init string
 * (on the heap when the block cannot hold it); if it cannot, the load
 * fails as any stage-one failure does. (An INIT can still be refused for
 * a task killed or initialised by another between the stages:
 * init_all().) Stage two posts those blocks as they are
 * (sched_post_block()); they wait in the queue until the manager
 * returns, so every task exists before any initialises.
 *
 * On a multi-module device every module's manager gets the description
 * (bus_app_load()) on BUS_APPMGR_PORT_DESC; one a task hands it on PORT_0
 * with the bus up is handed to bus_app_load() in turn, as appmgr_load()
 * does. After stage one it reports its outcome to the bus
 * manager and keeps the description until the device-wide verdict comes on
 * BUS_APPMGR_PORT_VERDICT: MT_OK runs stage two, an error from any module
 * undoes stage one here too. Ids are handed out only on success, so every
 * module keeps mapping relative ids to the same device ids.
 */
#include <string.h>

#include "appdesc.h"
#include "appmgr_internal.h"
#include "bus_internal.h"
#include "debug_assert.h"
#include "mcast_internal.h"
#include "mem_internal.h"
#include "motet/appmgr.h"
#include "motet/bus.h"
#include "motet/log.h"
#include "motet/mcast.h"
#include "motet/mem.h"
#include "motet/program.h"
#include "program_internal.h"
#include "sched_internal.h"

/* The application manager and the description loader (config.h). */
#if MOTET_APPMGR

static struct {
    appmgr_result_t last;
    mt_pid_t next_pid;  /* first device pid not yet handed out */
    uint8_t next_group; /* first device group not yet handed out */
    uint8_t *held;      /* created here, waiting for the other modules */
    uint16_t held_len;
    msg_t *inits; /* set aside at stage one, one per local task: stage two's INITs */
} M;

static mt_pid_t device_pid(mt_pid_t base, uint8_t rel)
{
    return (mt_pid_t) (base + rel);
}

/* Translate a relative route into a device route. */
static route_t map_route(const uint8_t *entry, mt_pid_t pid_base, uint8_t group_base)
{
    route_t r = {.pid = entry[0], .port = entry[1]};
    if (r.pid == MT_PID_MULTICAST)
        r.port = (mt_port_t) (group_base + entry[1]);
    else if (r.pid < MT_PID_SYSTEM)
        r.pid = device_pid(pid_base, entry[0]);
    return r;
}

static bool is_local(const appdesc_task_t *t)
{
    return t->module == bus_self();
}

/* A module of the device: every module is given the same set (the hub
 * sends it from the device file before bus_start()), so every module
 * judges a placement alike. */
static bool module_exists(mt_module_t m)
{
    return m < MOTET_BUS_MODULES && (bus_modules() & ((uint32_t) 1u << m)) != 0;
}

/* The load fails because of task `rel_pid` on `module`: recorded, and
 * logged with both, which the kernel cannot name but the host can. */
static void note_task(mt_err_t err, uint8_t rel_pid, mt_module_t module)
{
    M.last.bad_task = rel_pid;
    M.last.bad_module = module;
    log_event(EV_APPFAIL, rel_pid, (uint16_t) ((uint16_t) ((uint16_t) err << 8) | module));
}

static mt_err_t refuse_task(mt_err_t err, const appdesc_task_t *t)
{
    note_task(err, t->rel_pid, t->module);
    return log_error(err);
}

/* Every task must be on a module of the device, and a local task's
 * program on this module: a task elsewhere would only fail later, as
 * unreachable, or silently for a multicast. */
static mt_err_t check_placement(const appdesc_t *d)
{
    for (uint8_t i = 0; i < d->num_tasks; i++) {
        appdesc_task_t t;
        appdesc_task(d, i, &t);
        if (!module_exists(t.module)) return refuse_task(MT_ERR_NO_MODULE, &t);
        if (is_local(&t) && !program_find(t.prog_id)) return refuse_task(MT_ERR_NO_PROGRAM, &t);
    }
    return MT_OK;
}

static mt_err_t create_task(const appdesc_task_t *t, mt_pid_t base, uint8_t group_base)
{
    mt_pid_t pid = device_pid(base, t->rel_pid);
    if (!is_local(t)) return sched_task_create_remote(pid, t->prio, t->module);
    /* A scratch table on the heap, not the stack: small modules have a
     * few hundred bytes of stack, and the scheduler copies the table. */
    route_t *routes = NULL;
    if (t->num_routes) {
        routes = mem_alloc_owned(t->num_routes * sizeof(route_t), MEM_OWNER_KERNEL);
        if (!routes) return MT_ERR_NO_MEM;
    }
    for (uint8_t r = 0; r < t->num_routes; r++)
        routes[r] = map_route(&t->routes[r * APPDESC_ENTRY_SIZE], base, group_base);
    const program_t *prog = program_find(t->prog_id);
    task_spec_t spec = {.pid = pid,
                        .prio = t->prio,
                        .flags = t->flags,
                        .handler = prog->handler,
                        .state_size = prog->state_size,
                        .routes = routes,
                        .n_routes = t->num_routes};
    mt_err_t err = sched_task_create(&spec);
    mem_release(routes);
    return err;
}

static mt_err_t join_groups(const appdesc_t *d, mt_pid_t base, uint8_t group_base)
{
    for (uint8_t g = 0; g < d->num_groups; g++) {
        appdesc_group_t grp;
        appdesc_group(d, g, &grp);
        for (uint8_t k = 0; k < grp.num_members; k++) {
            const uint8_t *e = &grp.members[k * APPDESC_ENTRY_SIZE];
            mt_pid_t pid = device_pid(base, e[0]);
            if (!task_find_locked(pid)) continue; /* a member on another module */
            mt_err_t err = mcast_join((uint8_t) (group_base + grp.rel_group), pid, e[1]);
            if (err) return err;
        }
    }
    return MT_OK;
}

/* Remove whatever stage one created for tasks 0 .. n-1. */
static void undo_creation(const appdesc_t *d, uint8_t n, mt_pid_t base)
{
    for (uint8_t i = 0; i < n; i++) {
        appdesc_task_t t;
        appdesc_task(d, i, &t);
        mt_pid_t pid = device_pid(base, t.rel_pid);
        mcast_leave_all(pid);
        if (is_local(&t))
            sched_task_kill(pid); /* not initialised: no FINAL */
        else
            sched_task_remove_remote(pid);
    }
}

static mt_err_t create_all(const appdesc_t *d, mt_pid_t base, uint8_t group_base)
{
    uint8_t done = 0; /* tasks created so far */
    mt_err_t err = MT_OK;
    while (done < d->num_tasks) {
        appdesc_task_t t;
        appdesc_task(d, done, &t);
        err = create_task(&t, base, group_base);
        if (err) { /* logged where it arose; the failing task created nothing itself */
            note_task(err, t.rel_pid, t.module);
            break;
        }
        if (is_local(&t)) M.last.created++;
        done++;
    }
    if (!err) err = join_groups(d, base, group_base);
    if (err) {
        undo_creation(d, done, base);
        M.last.created = 0;
    }
    return err;
}

/* A local task's INIT, ready to post: a message block holding its init
 * string, in the block or on the heap (sched_msg_copy_payload()), copied
 * here with interrupts on; stage two then needs nothing more. */
static mt_err_t set_aside_init(const appdesc_task_t *t, msg_t **slot)
{
    msg_t *m = sched_msg_alloc(); /* logs an empty pool */
    if (!m) return MT_ERR_QUEUE_FULL;
    mt_err_t err = sched_msg_copy_payload(m, t->init, t->init_len); /* logs a full heap */
    if (err) {
        sched_msg_free(m);
        return err;
    }
    m->next = NULL;
    *slot = m;
    return MT_OK;
}

static void drop_inits(void)
{
    while (M.inits) {
        msg_t *m = M.inits;
        MT_DEBUG_ASSERT(m); /* one per local task: set_aside_inits() */
        M.inits = m->next;
        sched_msg_free(m);
    }
}

/* In task order, as init_all() takes them. */
static mt_err_t set_aside_inits(const appdesc_t *d)
{
    msg_t **tail = &M.inits;
    for (uint8_t i = 0; i < d->num_tasks; i++) {
        appdesc_task_t t;
        appdesc_task(d, i, &t);
        if (!is_local(&t)) continue;
        mt_err_t err = set_aside_init(&t, tail);
        if (err) {
            drop_inits();
            note_task(err, t.rel_pid, t.module);
            return err;
        }
        tail = &(*tail)->next;
    }
    return MT_OK;
}

/* Everything stage one did for this description goes. */
static void undo_part(const appdesc_t *d)
{
    drop_inits();
    undo_creation(d, d->num_tasks, M.last.pid_base);
    M.last.created = 0;
}

/* Each INIT is the block set aside for it, posted as it is (it waits until
 * the manager returns, rule 2), in task order. What can still refuse it is
 * a task killed, or sent its INIT by someone else, since stage one:
 * recorded as the load's outcome, and logged. */
static mt_err_t init_all(const appdesc_t *d, mt_pid_t base)
{
    mt_err_t first = MT_OK;
    for (uint8_t i = 0; i < d->num_tasks; i++) {
        appdesc_task_t t;
        appdesc_task(d, i, &t);
        if (!is_local(&t)) continue;
        msg_t *m = M.inits;
        MT_DEBUG_ASSERT(m); /* one per local task: set_aside_inits() */
        M.inits = m->next;
        mt_err_t err =
            sched_post_block(sched_current_pid(), device_pid(base, t.rel_pid), PORT_INIT, m);
        if (err && !first) {
            first = err;
            note_task(err, t.rel_pid, t.module);
        }
    }
    return first;
}

/* Stage one: validate, then create this module's part. */
static mt_err_t create_part(const uint8_t *buf, uint16_t len, appdesc_t *d)
{
    mt_err_t err = appdesc_parse(buf, len, d);
    M.last.bad_offset = d->bad_offset;
    if (err) return err;
    err = check_placement(d);
    if (err) return err;
    if ((unsigned) M.next_pid + d->num_tasks - 1u > MT_PID_LAST_APP ||
        M.next_group + d->num_groups > UINT8_MAX)
        return log_error(MT_ERR_NO_SLAB);
    M.last.pid_base = M.next_pid;
    M.last.group_base = M.next_group;
    MT_DEBUG_ASSERT(!M.inits); /* the last load's were all posted or dropped */
    err = create_all(d, M.next_pid, M.next_group);
    if (err) return err;
    err = set_aside_inits(d);
    if (err) undo_part(d);
    return err;
}

/* Stage two: hand out the ids for good and initialise the local tasks. */
static mt_err_t commit(const appdesc_t *d)
{
    M.next_pid = (mt_pid_t) (M.next_pid + d->num_tasks);
    M.next_group = (uint8_t) (M.next_group + d->num_groups);
    return init_all(d, M.last.pid_base);
}

/* Keep the description until the verdict, or undo stage one if we cannot. */
static mt_err_t hold(void *data, uint16_t len, const appdesc_t *d)
{
    M.held_len = len;
    M.held = sched_take(data, len);
    if (M.held) return MT_OK;
    undo_part(d);
    return MT_ERR_NO_MEM; /* logged by sched_take_msg() */
}

static mt_err_t load(void *data, uint16_t len)
{
    appdesc_t d;
    mt_err_t err = create_part(data, len, &d);
    if (!bus_active()) {
        if (!err) err = commit(&d);
        return err;
    }
    if (!err) err = hold(data, len, &d);
    /* The verdict follows on BUS_APPMGR_PORT_VERDICT. */
    bus_app_created(err, M.last.bad_task, M.last.bad_module);
    return err;
}

/* The device-wide verdict on the description held since stage one. */
static void decide(const void *data, uint16_t len)
{
    if (!M.held || len != BUS_APP_OUTCOME_SIZE) return; /* our own stage one failed */
    const uint8_t *v = data;
    mt_err_t verdict = (mt_err_t) v[0];
    appdesc_t d;
    appdesc_parse(M.held, M.held_len, &d); /* valid: parsed in stage one */
    if (verdict == MT_OK) {
        M.last.err = commit(&d);
    } else {
        undo_part(&d);
        M.last.err = verdict;
        /* Another module's failure: logged here too, so that every
         * module's log says why nothing runs. */
        if (v[1] != APPMGR_NO_TASK) note_task(verdict, v[1], v[2]);
        log_error(verdict);
    }
    mem_free(M.held);
    M.held = NULL;
}

/* Another module failed the load committed here (BUS_APPMGR_PORT_DISAGREED:
 * error, task, that module, the load's loader and number): what runs here
 * does not run there. Recorded as the load's outcome, and logged naming
 * the module and the load (an EV_APPFAIL would say it never loaded here). */
static void disagreed(const void *data, uint16_t len)
{
    if (len != BUS_APP_CREATED_SIZE) return;
    const uint8_t *v = data;
    M.last.err = (mt_err_t) v[0];
    M.last.bad_task = v[1];
    M.last.bad_module = v[2];
    log_event(EV_DISAGREE, v[2], (uint16_t) ((uint16_t) (v[3] << 8) | v[4]));
    log_error(M.last.err);
}

/* A message on a port past our INIT but PORT_0 came from the kernel's
 * bus code: sent as from the manager itself (bus_app.c), or the expiry
 * of the verdict deadline's timer (bus_internal.h). */
static bool from_bus(mt_port_t port)
{
    if (port == PORT_TIMEOUT0 + BUS_APP_DEADLINE_TIMER) return bus_app_deadline_expired();
    return sched_sender() == MT_PID_APPMGR;
}

static mt_err_t appmgr_handler(void *state, mt_port_t port, void *data, uint16_t len)
{
    (void) state;
    /* Every port but PORT_0 (and our INIT, from the boot) is the bus's:
     * anyone else's message there (a task's route or send, an interrupt's
     * post, a multicast, a timer) would decide, or hold, a load that the
     * bus never brought, and do it silently. */
    if (port != PORT_0 && port != PORT_INIT && !from_bus(port)) {
        log_error(MT_ERR_NO_PORT);
        return MT_OK;
    }
    if (port == BUS_APPMGR_PORT_VERDICT) decide(data, len);
    if (port == PORT_TIMEOUT0 + BUS_APP_DEADLINE_TIMER) bus_app_deadline();
    if (port == BUS_APPMGR_PORT_DISAGREED) disagreed(data, len);
    /* A task's description (a route to our PORT_0) with the bus up is the
     * device's load, as appmgr_load()'s is: it comes back on
     * BUS_APPMGR_PORT_DESC in bus order, or is refused now (logged). Taken
     * as the bus's, it would wait for a verdict that no load brings. */
    if (port == PORT_0 && bus_active()) {
        bus_app_load(data, len);
        return MT_OK;
    }
    if (port != PORT_0 && port != BUS_APPMGR_PORT_DESC) return MT_OK;
    /* A load held for its verdict owns M.last (its ids, undone or
     * committed by the verdict): another cannot start meanwhile. No
     * description the bus brings finds one held: the bus takes part in a
     * load only once the one before has ended, whose verdict it posted
     * first (bus_app.c); nor one a task sends (refused above). Only a
     * kernel change could reach it: kept, and logged, should one break
     * that (the load refused gets no outcome from here). */
    if (M.held) {
        log_error(MT_ERR_STATE);
        return MT_OK;
    }
    memset(&M.last, 0, sizeof M.last);
    M.last.bad_task = APPMGR_NO_TASK;
    M.last.err = load(data, len);
    return MT_OK; /* the outcome is recorded and already logged */
}

mt_err_t appmgr_start(void)
{
    memset(&M, 0, sizeof M);
    M.next_pid = MT_PID_FIRST_APP;
    M.last.err = MT_ERR_STATE; /* nothing loaded yet */
    M.last.bad_task = APPMGR_NO_TASK;
    task_spec_t spec = {.pid = MT_PID_APPMGR, .prio = APPMGR_PRIO, .handler = appmgr_handler};
    mt_err_t err = task_create_system(&spec);
    if (err) return err;
    return sched_task_init(MT_PID_APPMGR, NULL, 0);
}

mt_err_t appmgr_load(const uint8_t *desc, uint16_t len)
{
    if (bus_active()) return bus_app_load(desc, len);
    return sched_send_to(MT_PID_APPMGR, PORT_0, (void *) desc, len, 0);
}

const appmgr_result_t *appmgr_last_result(void)
{
    return &M.last;
}

#endif /* MOTET_APPMGR */
