/* SPDX-License-Identifier: MIT */
/*
 * motet-simavr: command line, summary and exit status (see harness.h).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define DEFAULT_PULSE 16u

static const char usage_text[] =
    "usage: motet-simavr [options] IMAGE.elf\n"
    "\n"
    "Run an AVR firmware image on libsimavr as fast as it simulates (sleep is not\n"
    "paced to real time), print its USART0 output on stdout and exit with the\n"
    "status the firmware gave port_halt(). Cycle-exact: interrupts are injected\n"
    "at chosen cycles and GPIO edges are stamped with the cycle they happened at.\n"
    "\n"
    "run:\n"
    "  -f, --freq HZ            CPU clock (default: the image's .mmcu section, else 8000000)\n"
    "  -m, --mcu NAME           MCU (default: the image's .mmcu section, else atmega128)\n"
    "  -c, --max-cycles N       stop with status 124 after N simulated cycles\n"
    "  -t, --timeout SECONDS    stop with status 124 after this much host time\n"
    "      --no-xram            no external SRAM behind MCUCR.SRE (ATmega128)\n"
    "      --no-timer-hold      let simavr restart TCNT1/TCNT3 from 0 after a clock stop\n"
    "interrupts:\n"
    "  -i, --irq INTn@C[,C...]  inject a low pulse on line INTn (n = 0..7; pins PD0..3,\n"
    "                           PE4..7) at each cycle C; repeatable\n"
    "      --irq-file FILE      injections, one 'INTn CYCLE' per line ('#' comments)\n"
    "      --pulse CYCLES       width of each low pulse (default 16)\n"
    "measurement:\n"
    "  -p, --trace PINS         record every edge of these GPIO pins, e.g. B0,B1,E4;\n"
    "                           repeatable\n"
    "  -o, --trace-out FILE     write edges there, one 'CYCLE NAME LEVEL' line each;\n"
    "                           injections appear as 'CYCLE INTn 1' (asserted) / '0'\n"
    "      --trace-sleep        also write 'CYCLE SLEEP M' when the core sleeps (M = 1 +\n"
    "                           SM2:0: 1 idle, 4 power-save, ...) and 'CYCLE SLEEP 0' at wake\n"
    "      --profile FILE       write a flat profile: cycles spent in each function\n"
    "      --profile-gate PIN   count only while PIN (e.g. A1) is high\n"
    "      --profile-pc FILE    with --profile: also write cycles and executions per\n"
    "                           instruction address (annotate a disassembly with it)\n"
    "device (motet run; docs/simavr-harness.md, \"On a device\"):\n"
    "      --bus SOCKET         join the hub at SOCKET: bus interface, lock-step\n"
    "      --module N           this module's bus address (0..15, default 0)\n"
    "      --loader             this module loads the application\n"
    "      --board PROGRAM      serve the board interface's calls (the module's sensors)\n"
    "                           by this host program over pipes\n"
    "      --board-arg ARG      an argument for the board program (repeatable)\n"
    "      --log FILE           write the kernel's event log there as the image writes it,\n"
    "                           each record at its cycle (logtap.h); needs --log-ring\n"
    "      --log-ring R:B:O     the image's log_ring (data address R, B bytes) and\n"
    "                           log_write_offset (data address O)\n"
    "  -j, --json FILE          write the summary (cycles, asleep, stack, ...) as JSON\n"
    "  -q, --quiet              no summary line on stderr\n"
    "  -h, --help               this text\n"
    "\n"
    "Numbers are decimal or 0x hex. Exit status: the firmware's port_halt() status\n"
    "(0..122); 123 the board program refused its arguments (it exited with status 2\n"
    "before it was ready); 124 cycle limit or timeout, or the board program silent\n"
    "past the timeout (5 s without one); 125 usage or load error, or a board program\n"
    "that could not start, ended otherwise or sent another first frame; 126 crash,\n"
    "or a sleep with interrupts off\n"
    "that is not port_halt(); 127 on a device, the watchdog reset the chip (alone,\n"
    "it reboots and runs on). simavr 1.6 charges no cycles for interrupt entry or\n"
    "wake-up: see docs/simavr-harness.md.\n";

static void usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "motet-simavr: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(motet-simavr --help for the options)\n");
    exit(EXIT_ERROR);
}

/* Whole-string unsigned decimal or 0x hex. */
static uint64_t parse_u64(const char *text, const char *what)
{
    bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const char *digits = hex ? text + 2 : text;
    char *end;
    if (!(hex ? isxdigit((unsigned char) *digits) : isdigit((unsigned char) *digits)))
        usage_error(what, text);
    errno = 0;
    unsigned long long v = strtoull(digits, &end, hex ? 16 : 10);
    if (errno || *end) usage_error(what, text);
    return v;
}

static double parse_seconds(const char *text)
{
    char *end;
    errno = 0;
    double s = strtod(text, &end);
    if (errno || *end || !(s > 0.0)) usage_error("bad number of seconds '%s'", text);
    return s;
}

static void add_inject(options_t *o, uint8_t line, uint64_t cycle)
{
    if (o->n_injects == o->cap_injects) {
        o->cap_injects = o->cap_injects ? o->cap_injects * 2 : 64;
        o->injects = realloc(o->injects, o->cap_injects * sizeof *o->injects);
        if (!o->injects) usage_error("%s", "out of memory");
    }
    o->injects[o->n_injects++] = (inject_t){.cycle = cycle, .line = line};
}

/* "INTn" or "n" -> n; anything else is an error. */
static uint8_t parse_line(const char *text)
{
    const char *n = strncmp(text, "INT", 3) == 0 ? text + 3 : text;
    if (n[0] < '0' || n[0] >= '0' + HARNESS_LINES || n[1]) usage_error("bad line '%s'", text);
    return (uint8_t) (n[0] - '0');
}

/* INTn@C[,C...] */
static void parse_irq(options_t *o, char *arg)
{
    char *at = strchr(arg, '@');
    if (!at) usage_error("--irq wants INTn@CYCLE, not '%s'", arg);
    *at = 0;
    uint8_t line = parse_line(arg);
    for (char *c = strtok(at + 1, ","); c; c = strtok(NULL, ","))
        add_inject(o, line, parse_u64(c, "bad cycle '%s'"));
}

static void parse_irq_file(options_t *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) usage_error("cannot read --irq-file '%s'", path);
    char buf[256];
    while (fgets(buf, sizeof buf, f)) {
        char *hash = strchr(buf, '#');
        if (hash) *hash = 0;
        char *line = strtok(buf, " \t\r\n");
        if (!line) continue;
        char *cycle = strtok(NULL, " \t\r\n");
        if (!cycle || strtok(NULL, " \t\r\n")) usage_error("bad line in '%s'", path);
        add_inject(o, parse_line(line), parse_u64(cycle, "bad cycle '%s'"));
    }
    fclose(f);
}

/* "B0" -> port 'B', bit 0. */
static trace_pin_t parse_pin(const char *p)
{
    char port = (char) toupper((unsigned char) p[0]);
    if (port < 'A' || port > 'G' || p[1] < '0' || p[1] > '7' || p[2])
        usage_error("bad pin '%s' (want a port letter and a bit, e.g. B0)", p);
    return (trace_pin_t){.port = port, .bit = (uint8_t) (p[1] - '0')};
}

/* B0,B1,E4 */
static void parse_pins(options_t *o, char *arg)
{
    for (char *p = strtok(arg, ","); p; p = strtok(NULL, ",")) {
        if (o->n_pins == HARNESS_MAX_PINS) usage_error("%s", "too many --trace pins");
        o->pins[o->n_pins++] = parse_pin(p);
    }
}

static int inject_cmp(const void *a, const void *b)
{
    const inject_t *x = a, *y = b;
    return x->cycle < y->cycle ? -1 : x->cycle > y->cycle;
}

/* Pulses on one line must not overlap, or an edge would be lost. */
static void check_injects(options_t *o)
{
    if (o->n_injects)
        qsort(o->injects, o->n_injects, sizeof *o->injects, inject_cmp); /* not NULL */
    uint64_t free_at[HARNESS_LINES] = {0};
    for (size_t i = 0; i < o->n_injects; i++) {
        const inject_t *in = &o->injects[i];
        if (in->cycle < free_at[in->line])
            usage_error("%s", "two injections on one line less than --pulse cycles apart");
        free_at[in->line] = in->cycle + o->pulse + 1;
    }
}

enum {
    OPT_NO_XRAM = 256,
    OPT_NO_HOLD,
    OPT_IRQ_FILE,
    OPT_PULSE,
    OPT_TRACE_SLEEP,
    OPT_PROFILE,
    OPT_PROFILE_GATE,
    OPT_PROFILE_PC,
    OPT_LOG,
    OPT_LOG_RING,
    OPT_BUS,
    OPT_MODULE,
    OPT_LOADER,
    OPT_BOARD,
    OPT_BOARD_ARG
};

static const struct option long_options[] = {
    {"freq", required_argument, NULL, 'f'},
    {"mcu", required_argument, NULL, 'm'},
    {"max-cycles", required_argument, NULL, 'c'},
    {"timeout", required_argument, NULL, 't'},
    {"no-xram", no_argument, NULL, OPT_NO_XRAM},
    {"no-timer-hold", no_argument, NULL, OPT_NO_HOLD},
    {"irq", required_argument, NULL, 'i'},
    {"irq-file", required_argument, NULL, OPT_IRQ_FILE},
    {"pulse", required_argument, NULL, OPT_PULSE},
    {"trace", required_argument, NULL, 'p'},
    {"trace-out", required_argument, NULL, 'o'},
    {"trace-sleep", no_argument, NULL, OPT_TRACE_SLEEP},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"profile-gate", required_argument, NULL, OPT_PROFILE_GATE},
    {"profile-pc", required_argument, NULL, OPT_PROFILE_PC},
    {"bus", required_argument, NULL, OPT_BUS},
    {"module", required_argument, NULL, OPT_MODULE},
    {"loader", no_argument, NULL, OPT_LOADER},
    {"board", required_argument, NULL, OPT_BOARD},
    {"board-arg", required_argument, NULL, OPT_BOARD_ARG},
    {"log", required_argument, NULL, OPT_LOG},
    {"log-ring", required_argument, NULL, OPT_LOG_RING},
    {"json", required_argument, NULL, 'j'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void parse_option(options_t *o, int c, char *arg)
{
    switch (c) {
    case 'f':
        o->freq = (uint32_t) parse_u64(arg, "bad frequency '%s'");
        break;
    case 'm':
        o->mcu = arg;
        break;
    case 'c':
        o->max_cycles = parse_u64(arg, "bad cycle count '%s'");
        break;
    case 't':
        o->timeout = parse_seconds(arg);
        break;
    case OPT_NO_XRAM:
        o->xram = false;
        break;
    case OPT_NO_HOLD:
        o->timer_hold = false;
        break;
    case 'i':
        parse_irq(o, arg);
        break;
    case OPT_IRQ_FILE:
        parse_irq_file(o, arg);
        break;
    case OPT_PULSE:
        o->pulse = (uint32_t) parse_u64(arg, "bad pulse width '%s'");
        break;
    case 'p':
        parse_pins(o, arg);
        break;
    case 'o':
        o->trace_path = arg;
        break;
    case OPT_TRACE_SLEEP:
        o->trace_sleep = true;
        break;
    case OPT_PROFILE:
        o->profile_path = arg;
        break;
    case OPT_PROFILE_GATE:
        o->profile_gate = parse_pin(arg);
        o->profile_gated = true;
        break;
    case OPT_PROFILE_PC:
        o->profile_pc_path = arg;
        break;
    case OPT_BUS:
        o->bus_socket = arg;
        break;
    case OPT_MODULE: {
        uint64_t m = parse_u64(arg, "bad module '%s'");
        if (m > 15) usage_error("module '%s' is not a bus address 0..15", arg);
        o->bus_module = (uint8_t) m;
        break;
    }
    case OPT_LOADER:
        o->bus_loader = true;
        break;
    case OPT_BOARD:
        o->board = arg;
        break;
    case OPT_BOARD_ARG: {
        char **more = realloc(o->board_args, (o->n_board_args + 1u) * sizeof *more);
        if (!more) usage_error("%s", "out of memory");
        o->board_args = more;
        o->board_args[o->n_board_args++] = arg;
        break;
    }
    case OPT_LOG:
        o->log_path = arg;
        break;
    case OPT_LOG_RING:
        if (logtap_parse_ring(arg, &o->log_ring) != 0)
            usage_error("--log-ring wants RING:BYTES:OFFSET (a ring of 6-byte slots), not '%s'",
                        arg);
        o->log_ring_given = true;
        break;
    case 'j':
        o->json_path = arg;
        break;
    case 'q':
        o->quiet = true;
        break;
    case 'h':
        fputs(usage_text, stdout);
        exit(0);
    default:
        usage_error("%s", "unknown option");
    }
}

static void parse_args(int argc, char **argv, options_t *o)
{
    memset(o, 0, sizeof *o);
    o->pulse = DEFAULT_PULSE;
    o->xram = true;
    o->timer_hold = true;
    int c;
    while ((c = getopt_long(argc, argv, "f:m:c:t:i:p:o:j:qh", long_options, NULL)) != -1)
        parse_option(o, c, optarg);
    if (optind != argc - 1) usage_error("%s", "give exactly one IMAGE.elf");
    if (o->pulse == 0) usage_error("%s", "--pulse must be at least 1 cycle");
    if ((o->profile_gated || o->profile_pc_path) && !o->profile_path)
        usage_error("%s", "--profile-gate and --profile-pc need --profile");
    if (!o->log_path != !o->log_ring_given) usage_error("%s", "--log and --log-ring go together");
    o->elf = argv[optind];
    check_injects(o);
}

/* ---------------------------------------------------------------- report */

static const char *end_name(run_end_t end)
{
    static const char *const names[] = {"halted",  "cycle-limit",      "timeout",       "crashed",
                                        "stopped", "ended by the hub", "watchdog reset"};
    return names[end];
}

/* ATmega128 sleep modes by SM2:0 (reserved codes keep their number). */
static const char *const mode_names[8] = {"idle",  "adc-noise", "power-down", "power-save",
                                          "mode4", "mode5",     "standby",    "ext-standby"};

static double percent(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double) part / (double) whole : 0.0;
}

static void print_summary(const result_t *r)
{
    fprintf(stderr, "motet-simavr: %s", end_name(r->end));
    if (r->end == RUN_HALTED) fprintf(stderr, ", status %d, stack %u B", r->status, r->stack_used);
    fprintf(stderr,
            " | %llu cycles = %.6f s at %lu Hz | asleep %llu cycles (%.2f %%) in %llu sleeps",
            (unsigned long long) r->cycles, (double) r->cycles / r->freq, (unsigned long) r->freq,
            (unsigned long long) r->asleep, percent(r->asleep, r->cycles),
            (unsigned long long) r->sleeps);
    for (unsigned m = 0; m < 8; m++)
        if (r->asleep_mode[m] && r->asleep_mode[m] != r->asleep)
            fprintf(stderr, ", %s %llu", mode_names[m], (unsigned long long) r->asleep_mode[m]);
    if (r->wdt_resets)
        fprintf(stderr, " | %llu watchdog resets, the last at cycle %llu",
                (unsigned long long) r->wdt_resets, (unsigned long long) r->wdt_cycle);
    fprintf(stderr, " | %llu edges, %llu injected | host %.2f s\n", (unsigned long long) r->edges,
            (unsigned long long) r->injected, r->wall);
}

static void write_modes(FILE *f, const result_t *r)
{
    const char *sep = "";
    fprintf(f, "{");
    for (unsigned m = 0; m < 8; m++) {
        if (!r->asleep_mode[m]) continue;
        fprintf(f, "%s\"%s\": %llu", sep, mode_names[m], (unsigned long long) r->asleep_mode[m]);
        sep = ", ";
    }
    fprintf(f, "}");
}

static int write_json(const char *path, const result_t *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return EXIT_ERROR;
    }
    fprintf(f,
            "{\"end\": \"%s\", \"status\": %d, \"stack_used\": %u, \"cycles\": %llu,"
            " \"asleep\": %llu, \"asleep_by_mode\": ",
            end_name(r->end), r->status, r->stack_used, (unsigned long long) r->cycles,
            (unsigned long long) r->asleep);
    write_modes(f, r);
    fprintf(f,
            ", \"sleeps\": %llu, \"edges\": %llu, \"injected\": %llu,"
            " \"watchdog_resets\": %llu, \"freq\": %lu, \"mcu\": \"%s\", \"wall\": %.3f}\n",
            (unsigned long long) r->sleeps, (unsigned long long) r->edges,
            (unsigned long long) r->injected, (unsigned long long) r->wdt_resets,
            (unsigned long) r->freq, r->mcu, r->wall);
    return fclose(f) == 0 ? 0 : EXIT_ERROR;
}

static int exit_status(const result_t *r)
{
    switch (r->end) {
    case RUN_HALTED:
        if (r->status < 0 || r->status > HARNESS_STATUS_MAX) {
            fprintf(stderr, "motet-simavr: firmware status %d is out of 0..%d\n", r->status,
                    HARNESS_STATUS_MAX);
            return EXIT_ABNORMAL;
        }
        return r->status;
    case RUN_ENDED:
        return r->status;
    case RUN_LIMIT:
        fprintf(stderr, "motet-simavr: error: cycle limit reached before the firmware halted\n");
        return EXIT_LIMIT;
    case RUN_TIMEOUT:
        fprintf(stderr, "motet-simavr: error: timeout before the firmware halted\n");
        return EXIT_LIMIT;
    case RUN_CRASHED:
        fprintf(stderr, "motet-simavr: error: the firmware crashed (see simavr's message)\n");
        return EXIT_ABNORMAL;
    case RUN_WATCHDOG:
        fprintf(stderr, "motet-simavr: error: the watchdog reset the chip; a module does not"
                        " rejoin the bus after a reset\n");
        return EXIT_WATCHDOG;
    case RUN_STOPPED:
    default:
        fprintf(stderr, "motet-simavr: error: the firmware slept with interrupts off"
                        " without port_halt()'s marker\n");
        return EXIT_ABNORMAL;
    }
}

int main(int argc, char **argv)
{
    options_t opt;
    result_t res;
    parse_args(argc, argv, &opt);
    int err = harness_run(&opt, &res);
    free(opt.injects);
    free(opt.board_args);
    if (err) return err;
    if (!opt.quiet) print_summary(&res);
    if (opt.json_path && write_json(opt.json_path, &res)) return EXIT_ERROR;
    return exit_status(&res);
}
