/* SPDX-License-Identifier: MIT */
/*
 * The native port: a Motet module as a Linux process (see native.h).
 *
 * Interrupts. SIGALRM is the compare interrupt, SIGUSR1 the external lines
 * (port_native_irq_pending says which lines). Disabling interrupts only sets the flag
 * port_native_irq_disabled (inline, port_config.h): no system call on the
 * hot path. A signal that arrives while the flag is set records itself in
 * port_native_irq_pending and returns; enabling again
 * takes whatever is pending at once, as a microcontroller takes a pending
 * interrupt the moment its I bit is set. Interrupt bodies run with the real
 * signals blocked (sa_mask, or sigprocmask on the rare enable-with-pending
 * path), so a body is never nested; sched_isr_exit() then runs with the
 * signals unblocked but the flag still set, in the same frame, and clears it
 * only while it runs a handler, so an interrupt can preempt the handlers it
 * dispatches (rule 3, docs/architecture.md) but never nests on an exit with nothing to run.
 *
 * Simulated clock. The 64-bit tick counter sim_now moves only in port_sleep()
 * (a jump to the next event) and port_native_busy() (step by step to each
 * event inside the interval). An event falls due when the clock reaches it and
 * is delivered by raising its real signal; events due at the same tick go
 * compare first, then lines in the order they were scheduled. The ticks that
 * busy code declares are its own work: time taken by interrupts and handlers
 * that preempt it comes on top, as on a real processor. A compare armed at or
 * before the current counter value (a distance of 0, or of half the counter
 * range or more) is due at once: the next port_sleep() or port_native_busy()
 * delivers it, never port_compare_set() itself. Sleeping with nothing
 * scheduled and no --until would last forever, so the module stops instead:
 * "native: idle with nothing scheduled, stopping" on stderr, exit status 0.
 * Reaching --until stops it with status 0 too.
 *
 * Time grants (multi-module devices only). When the bus link (bus_native.c)
 * installs a grant hook, the simulated clock never moves without asking it
 * first: busy work and sleep ask to move to a time and move only as far as
 * the hub allows, which is where a frame from another module may arrive.
 * Without a hook nothing changes.
 *
 * Real clock. CLOCK_MONOTONIC microseconds since configuration; the compare
 * is a POSIX timer that raises SIGALRM (a past deadline fires at once);
 * sleeping blocks in pselect() with the interrupt signals unblocked; scheduled
 * lines and --until are polled by sleep (as its timeout) and by busy.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "motet/port.h"
#include "motet/sched.h"
#include "motet/timer.h"
#include "native.h"

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal handlers need lock-free atomics");

/* port_native_irq_pending bits: one per external line, then the compare. */
#define PENDING_LINES   ((1u << NATIVE_IRQ_LINES) - 1u)
#define PENDING_COMPARE (1u << NATIVE_IRQ_LINES)
/* Room for scheduled external interrupts (sim and real). */
#define SCHEDULE_MAX 64
/* Half of the 32-bit counter: compare distances at or beyond it are past. */
#define COUNTER_HALF 0x80000000u
#define NS_PER_TICK  (1000000000u / PORT_TICKS_PER_SECOND)

typedef enum { COMPARE_OFF, COMPARE_ARMED, COMPARE_FIRED } compare_state_t;

typedef struct scheduled_irq {
    uint64_t at;
    uint8_t line;
} scheduled_irq_t;

static const native_options_t default_options = {
    .realtime = false, .seed = 1, .until_ticks = 0, .counter_start = 0, .log_path = NULL};
static native_options_t options = {.seed = 1}; /* the defaults until configured */

/* Interrupt state shared with the signal handler. */
volatile sig_atomic_t port_native_irq_disabled = 1; /* reset state: irq off */
volatile sig_atomic_t port_native_in_isr;
atomic_uint port_native_irq_pending;
static sigset_t irq_signals;

/* The compare, in absolute ticks; only touched with interrupts off. */
static compare_state_t compare_state;
static uint64_t compare_at;

static native_isr_fn line_isr[NATIVE_IRQ_LINES];
static scheduled_irq_t schedule[SCHEDULE_MAX]; /* in scheduling order */
static unsigned schedule_len;

/* The simulated clock, and the options the inline counter read
 * (port_config.h) needs: exported, every event record reads the counter. */
uint64_t port_native_sim_now;
#define sim_now port_native_sim_now
bool port_native_realtime_counter;
uint32_t port_native_counter_start;
static uint64_t epoch_ns; /* real clock: CLOCK_MONOTONIC at configuration */
static timer_t rt_timer;
static bool rt_timer_created;

static uint64_t sleep_ticks;
static uint32_t sleep_count;
static uint64_t rng_state;

static native_grant_fn grant_hook; /* NULL: a module on its own */

/* ---------------------------------------------------------------- helpers */

static void native_fatal(const char *what)
{
    fprintf(stderr, "native: %s\n", what);
    port_halt(2);
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Current module time in ticks, either clock. */
static uint64_t now_ticks(void)
{
    if (options.realtime) return (monotonic_ns() - epoch_ns) / NS_PER_TICK;
    return sim_now;
}

/* Real clock: stop the module once --until has passed. */
static void check_until(uint64_t now)
{
    if (options.until_ticks != 0 && now >= options.until_ticks) port_halt(0);
}

/* ------------------------------------------------------------- interrupts */

static void block_irq_signals(sigset_t *old)
{
    sigprocmask(SIG_BLOCK, &irq_signals, old);
}

static void unblock_irq_signals(void)
{
    sigprocmask(SIG_UNBLOCK, &irq_signals, NULL);
}

/* The pending compare bit is genuine only if the compare fired: in sim mode
 * the clock marked it FIRED; in real mode a SIGALRM may be stale (generated
 * for a compare since replaced), so check the deadline here. */
static bool compare_fires(void)
{
    if (compare_state == COMPARE_ARMED && now_ticks() >= compare_at) compare_state = COMPARE_FIRED;
    if (compare_state != COMPARE_FIRED) return false;
    compare_state = COMPARE_OFF;
    return true;
}

/* One interrupt entry: the body with further interrupts held, then the exit
 * dispatch, which enables them only to run handlers. Entered and left with
 * signals blocked and the flag set. */
static void run_interrupt(bool compare, unsigned lines)
{
    sig_atomic_t outer_in_isr = port_native_in_isr;
    port_native_in_isr = 1;
    sched_isr_enter();
    if (compare) timer_isr_compare();
    for (unsigned line = 0; line < NATIVE_IRQ_LINES; line++)
        if ((lines & (1u << line)) && line_isr[line]) line_isr[line]();
    port_native_in_isr = outer_in_isr;

    /* Signals from here on find the flag set and only record themselves;
     * sched_isr_exit() clears it (taking them) only to run a handler. */
    unblock_irq_signals();
    sched_isr_exit();
    block_irq_signals(NULL);
    atomic_signal_fence(memory_order_seq_cst);
}

/* Take every pending interrupt; signals blocked, flag set. */
static void take_interrupts(void)
{
    for (;;) {
        unsigned bits = atomic_exchange(&port_native_irq_pending, 0u);
        bool compare = (bits & PENDING_COMPARE) && compare_fires();
        unsigned lines = bits & PENDING_LINES;
        if (!compare && lines == 0) return;
        run_interrupt(compare, lines);
    }
}

/* Both signals share this handler; sa_mask blocks both while it runs. */
static void on_irq_signal(int sig)
{
    int saved_errno = errno;
    if (sig == SIGALRM) atomic_fetch_or(&port_native_irq_pending, PENDING_COMPARE);
    if (!port_native_irq_disabled) {
        port_native_irq_disabled = 1;
        take_interrupts();
        port_native_irq_disabled = 0; /* the interrupted code had interrupts enabled */
    }
    errno = saved_errno;
}

/* Rare path of enabling: something arrived while interrupts were off. */
void port_native_take_pending(void)
{
    sigset_t old;
    block_irq_signals(&old);
    port_native_irq_disabled = 1;
    take_interrupts();
    port_native_irq_disabled = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void port_irq_enable(void)
{
    /* A signal from here on finds the flag clear and runs itself; one that
     * came before left its bit, which port_irq_restore() takes now. */
    port_irq_restore(0);
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_irq_signal;
    sa.sa_mask = irq_signals;
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGALRM, &sa, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
        native_fatal("sigaction failed");
}

/* ---------------------------------------------------------- external lines */

static void check_line(uint8_t line)
{
    if (line >= NATIVE_IRQ_LINES) native_fatal("irq line out of range");
}

void port_native_irq_attach(uint8_t line, native_isr_fn isr)
{
    check_line(line);
    line_isr[line] = isr;
}

void port_native_irq_raise(uint8_t line)
{
    check_line(line);
    atomic_fetch_or(&port_native_irq_pending, 1u << line);
    raise(SIGUSR1);
}

void port_native_irq_schedule(uint8_t line, uint64_t at)
{
    check_line(line);
    if (at <= now_ticks()) {
        port_native_irq_raise(line);
        return;
    }
    port_irq_state_t s = port_irq_save();
    if (schedule_len == SCHEDULE_MAX) native_fatal("too many scheduled irqs");
    schedule[schedule_len++] = (scheduled_irq_t){.at = at, .line = line};
    port_irq_restore(s);
}

/* ------------------------------------------------------------------ events */

/* Earliest pending event (the armed sim compare or a scheduled line); the
 * compare wins a tie, lines keep their scheduling order. -1: none. */
static int next_event(uint64_t *at)
{
    int which = -1;
    if (!options.realtime && compare_state == COMPARE_ARMED) {
        *at = compare_at;
        which = NATIVE_IRQ_LINES;
    }
    for (unsigned i = 0; i < schedule_len; i++) {
        if (which < 0 || schedule[i].at < *at) {
            *at = schedule[i].at;
            which = (int) i;
        }
    }
    return which;
}

/* Remove the earliest event if it is due; returns the line, NATIVE_IRQ_LINES
 * for the compare, -1 if nothing is due. Interrupts off. */
static int pop_due_event(void)
{
    uint64_t at;
    int which = next_event(&at);
    if (which < 0 || at > now_ticks()) return -1;
    if (which == NATIVE_IRQ_LINES) {
        compare_state = COMPARE_FIRED;
        return NATIVE_IRQ_LINES;
    }
    int line = schedule[which].line;
    schedule_len--;
    memmove(&schedule[which], &schedule[which + 1],
            (schedule_len - (unsigned) which) * sizeof schedule[0]);
    return line;
}

/* Raise the signal of every event that is due now. Each is taken at once
 * if interrupts are enabled (and may run code that moves the clock on), or
 * recorded as pending if not. */
static void deliver_due_events(void)
{
    for (;;) {
        port_irq_state_t s = port_irq_save();
        int ev = pop_due_event();
        port_irq_restore(s);
        if (ev < 0) return;
        if (ev == NATIVE_IRQ_LINES)
            raise(SIGALRM);
        else
            port_native_irq_raise((uint8_t) ev);
    }
}

/* ------------------------------------------------------------ time: counter */

MT_NOINLINE port_counter_t port_native_realtime_counter_read(void)
{
    return (port_counter_t) (options.counter_start + now_ticks());
}

port_counter_t port_counter_read(void)
{
    return port_counter_read_irq_off();
}

uint64_t port_native_time(void)
{
    return now_ticks();
}

bool port_native_realtime(void)
{
    return options.realtime;
}

uint32_t port_cycles(void)
{
    if (options.realtime) return (uint32_t) monotonic_ns();
    return (uint32_t) sim_now;
}

/* ------------------------------------------------------------ time: compare */

static void rt_timer_arm(uint64_t at)
{
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (at != UINT64_MAX) {
        uint64_t ns = epoch_ns + at * NS_PER_TICK;
        its.it_value.tv_sec = (time_t) (ns / 1000000000u);
        its.it_value.tv_nsec = (long) (ns % 1000000000u);
    }
    if (timer_settime(rt_timer, TIMER_ABSTIME, &its, NULL) != 0) native_fatal("timer_settime");
}

void port_compare_set(port_counter_t at)
{
    uint64_t now = now_ticks();
    uint32_t distance = (uint32_t) (at - port_counter_read());
    /* The kernel never arms more than half the range ahead: beyond is past. */
    compare_at = distance >= COUNTER_HALF ? now : now + distance;
    compare_state = COMPARE_ARMED;
    atomic_fetch_and(&port_native_irq_pending, ~PENDING_COMPARE);
    if (options.realtime) rt_timer_arm(compare_at);
}

void port_compare_disable(void)
{
    compare_state = COMPARE_OFF;
    atomic_fetch_and(&port_native_irq_pending, ~PENDING_COMPARE);
    if (options.realtime && rt_timer_created) rt_timer_arm(UINT64_MAX);
}

/* ------------------------------------------------ time grants (bus link) */

void port_native_set_grant_hook(native_grant_fn fn)
{
    grant_hook = fn;
}

/* How far the simulated clock may move towards `want` now: all the way
 * without a hook; with one, as far as it grants (see native.h). */
static uint64_t granted(uint64_t want, bool sleeping)
{
    if (!grant_hook || want <= sim_now) return want;
    uint64_t to = grant_hook(sim_now, want, sleeping);
    if (to <= sim_now || (!sleeping && to > want)) native_fatal("bus: time grant out of range");
    return to;
}

/* ------------------------------------------------------------- busy, sleep */

/* Move the simulated clock to `to`; stops the module when that would pass
 * --until. A run covers [0, until]: events due at `until` itself still happen,
 * so `--until 1` sees the tick at 1 s. */
static void sim_advance(uint64_t to, bool sleeping)
{
    bool stop = options.until_ticks != 0 && to > options.until_ticks;
    if (stop) to = options.until_ticks > sim_now ? options.until_ticks : sim_now;
    if (sleeping) sleep_ticks += to - sim_now;
    sim_now = to;
    if (stop) port_halt(0);
}

static void sim_busy(uint32_t ticks)
{
    uint64_t work = ticks;
    for (;;) {
        deliver_due_events(); /* preemption: its time is not our work */
        if (work == 0) return;
        uint64_t at, step = work;
        if (next_event(&at) >= 0 && at - sim_now < step) step = at - sim_now;
        uint64_t to = granted(sim_now + step, false); /* short: a frame comes then */
        work -= to - sim_now;
        sim_advance(to, false);
    }
}

static void real_busy(uint32_t ticks)
{
    uint64_t end = now_ticks() + ticks;
    for (uint64_t now = now_ticks(); now < end; now = now_ticks()) {
        check_until(now);
        deliver_due_events();
    }
}

void port_native_busy(uint32_t ticks)
{
    if (options.realtime)
        real_busy(ticks);
    else
        sim_busy(ticks);
}

/* With a grant hook: move as the hub allows until an event is due. Nothing
 * scheduled is no reason to stop: another module may send a frame. */
static void sim_advance_granted(void)
{
    uint64_t at;
    bool have = next_event(&at) >= 0;
    while (!have || at > sim_now) {
        uint64_t until = options.until_ticks ? options.until_ticks + 1u : UINT64_MAX;
        uint64_t want = have ? at : until;
        sim_advance(granted(want, true), true);
        have = next_event(&at) >= 0;
    }
}

/* Jump the clock to the next event, or stop the module if none will come. */
static void sim_advance_to_next_event(void)
{
    uint64_t at;
    if (grant_hook) {
        sim_advance_granted();
        return;
    }
    if (next_event(&at) >= 0) {
        if (at > sim_now) sim_advance(at, true);
        return;
    }
    if (options.until_ticks != 0) {
        sim_advance(options.until_ticks, true);
        port_halt(0);
    }
    fprintf(stderr, "native: idle with nothing scheduled, stopping\n");
    port_halt(0);
}

static void sim_sleep(void)
{
    /* An interrupt already pending wakes the module without any wait. */
    if (atomic_load(&port_native_irq_pending) == 0u) sim_advance_to_next_event();
    port_irq_enable();
    deliver_due_events();
    (void) port_irq_save();
}

/* pselect() timeout until the next scheduled line or --until; NULL: none. */
static struct timespec *real_timeout(struct timespec *ts)
{
    uint64_t at, now = now_ticks();
    bool have = next_event(&at) >= 0;
    if (options.until_ticks != 0 && (!have || options.until_ticks < at)) {
        at = options.until_ticks;
        have = true;
    }
    if (!have) return NULL;
    uint64_t ns = at > now ? (at - now) * NS_PER_TICK : 0u;
    ts->tv_sec = (time_t) (ns / 1000000000u);
    ts->tv_nsec = (long) (ns % 1000000000u);
    return ts;
}

/* Signals stay blocked except inside pselect(), which unblocks them and
 * waits atomically; a signal then takes its interrupt in the handler. */
static void real_sleep(void)
{
    sigset_t old, open;
    uint64_t start = now_ticks();
    block_irq_signals(&old);
    open = old;
    sigdelset(&open, SIGALRM);
    sigdelset(&open, SIGUSR1);
    for (;;) {
        check_until(now_ticks());
        deliver_due_events(); /* flag set: only records them */
        if (atomic_load(&port_native_irq_pending) != 0u) {
            take_interrupts();
            break;
        }
        struct timespec ts, *timeout = real_timeout(&ts);
        port_native_irq_disabled = 0;
        int rc = pselect(0, NULL, NULL, NULL, timeout, &open);
        port_native_irq_disabled = 1;
        if (rc < 0) break; /* a signal came and its handler ran */
    }
    sleep_ticks += now_ticks() - start;
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void port_sleep(port_sleep_mode_t mode)
{
    (void) mode; /* every mode wakes on both signals here */
    sleep_count++;
    native_event_dump_flush(); /* the host link: drained while idle */
    if (options.realtime)
        real_sleep();
    else
        sim_sleep();
}

uint64_t port_native_sleep_ticks(void)
{
    return sleep_ticks;
}

uint32_t port_native_sleep_count(void)
{
    return sleep_count;
}

/* ------------------------------------------------------- start-up, console */

static void reset_clock(void)
{
    sim_now = 0;
    epoch_ns = monotonic_ns();
    sleep_ticks = 0;
    sleep_count = 0;
    rng_state = options.seed != 0 ? options.seed : 0x9E3779B97F4A7C15u;
}

void port_native_configure(const native_options_t *opt)
{
    options = *opt;
    port_native_realtime_counter = opt->realtime;
    port_native_counter_start = opt->counter_start;
    reset_clock();
    native_event_dump_open(opt->log_path);
}

static void create_rt_timer(void)
{
    if (rt_timer_created) return;
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGALRM;
    if (timer_create(CLOCK_MONOTONIC, &ev, &rt_timer) != 0) native_fatal("timer_create");
    rt_timer_created = true;
}

/* Full reset to the configured options, callable again and again (each test
 * boots anew, possibly after a failed assertion jumped out of a handler). */
void port_init(void)
{
    sigemptyset(&irq_signals);
    sigaddset(&irq_signals, SIGALRM);
    sigaddset(&irq_signals, SIGUSR1);
    port_native_irq_disabled = 1;
    port_native_in_isr = 0;
    if (options.realtime) create_rt_timer();
    if (rt_timer_created) rt_timer_arm(UINT64_MAX); /* also after a switch to sim */
    port_compare_disable();
    install_handlers();
    unblock_irq_signals();
    atomic_store(&port_native_irq_pending, 0u);
    memset(line_isr, 0, sizeof line_isr);
    schedule_len = 0;
    grant_hook = NULL;
    native_bus_reset();
    reset_clock();
}

void port_halt(int status)
{
    native_event_dump_flush();
    native_event_dump_close();
    fflush(stdout);
    exit(status);
}

void port_console_write(const char *text, size_t n)
{
    while (n > 0) {
        ssize_t done = write(STDOUT_FILENO, text, n);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return;
        text += done;
        n -= (size_t) done;
    }
}

/* ------------------------------------------------------ options and random */

uint64_t port_native_random(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Du;
}

static void usage(const char *bad)
{
    fprintf(stderr,
            "native: bad argument '%s'\n"
            "usage: [--sim | --realtime] [--seed N] [--until SECONDS] [--counter-start N]"
            " [--log FILE]\n",
            bad);
    exit(2);
}

/* Unsigned decimal or 0x hex, whole string. */
static uint64_t parse_number(const char *text, uint64_t max)
{
    bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const char *digits = hex ? text + 2 : text;
    char *end;
    if (!(hex ? isxdigit((unsigned char) digits[0]) : isdigit((unsigned char) digits[0])))
        usage(text);
    errno = 0;
    unsigned long long v = strtoull(digits, &end, hex ? 16 : 10);
    if (errno != 0 || *end != '\0' || v > max) usage(text);
    return v;
}

/* Non-negative decimal seconds ("1.5") to ticks. */
static uint64_t parse_seconds(const char *text)
{
    char *end;
    if (!isdigit((unsigned char) text[0]) && text[0] != '.') usage(text);
    errno = 0;
    double s = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !(s >= 0.0) || s > 1e9) usage(text);
    return (uint64_t) (s * PORT_TICKS_PER_SECOND + 0.5);
}

/* Match `--name VALUE` or `--name=VALUE`; advances *i past a separate value. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    const char *arg = argv[*i];
    if (strncmp(arg, name, n) != 0) return NULL;
    if (arg[n] == '=') return arg + n + 1;
    if (arg[n] != '\0') return NULL;
    if (*i + 1 >= argc) usage(arg);
    return argv[++*i];
}

/* *opt starts from the defaults: callers may pass it uninitialised. */
int port_native_parse_args(int argc, char **argv, native_options_t *opt)
{
    *opt = default_options;
    int kept = argc > 0 ? 1 : 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--sim") == 0)
            opt->realtime = false;
        else if (strcmp(argv[i], "--realtime") == 0)
            opt->realtime = true;
        else if ((v = option_value(argc, argv, &i, "--seed")))
            opt->seed = parse_number(v, UINT64_MAX);
        else if ((v = option_value(argc, argv, &i, "--until")))
            opt->until_ticks = parse_seconds(v);
        else if ((v = option_value(argc, argv, &i, "--counter-start")))
            opt->counter_start = (uint32_t) parse_number(v, UINT32_MAX);
        else if ((v = option_value(argc, argv, &i, "--log")))
            opt->log_path = v;
        else
            argv[kept++] = argv[i];
    }
    if (kept < argc) argv[kept] = NULL;
    return kept;
}
