/* SPDX-License-Identifier: MIT */
/*
 * The board interface (boardlink.h). A call from the firmware is one
 * exchange with the board program, made while the core stands at the STS
 * that wrote CALL, so that the answer is there at the next instruction
 * whatever the host's timing: the run stays deterministic.
 *
 * Framing on both pipes: a 16-bit little-endian length, then that many
 * bytes. The harness copies bytes and does not read them; the firmware and
 * the board program agree on what they mean (apps/ssl/board_host.h for
 * the SSL application).
 */
#include "boardlink.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "avr_board_if.h"
#include "sim_io.h"

#define ANSWER_MAX 4096u /* the largest answer an ATmega128 buffer could take */
/* How long a board program may take to say it is ready without --timeout:
 * the SSL board reads its scenario in well under a second. */
#define READY_WAIT_S 5.0
/* The status by which a board program refuses its arguments, as every
 * program of the project does (a usage error). */
#define BOARD_REFUSED 2

static struct {
    avr_t *avr;
    const char *program;
    pid_t pid;
    int to_board, from_board; /* pipe ends; -1: none */
    bool broken;              /* the program ended or broke the protocol */
    uint8_t answer[ANSWER_MAX];
} L = {.to_board = -1, .from_board = -1};

static uint16_t reg16(avr_io_addr_t lo, avr_io_addr_t hi)
{
    return (uint16_t) (L.avr->data[lo] | L.avr->data[hi] << 8);
}

static bool write_all(const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(L.to_board, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t) k;
    }
    return true;
}

static bool read_all(uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = read(L.from_board, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t) k;
    }
    return true;
}

/* Once: the module's sensors are gone, and the run says so. */
static uint8_t broken(const char *why)
{
    if (!L.broken)
        fprintf(stderr,
                "motet-simavr: board program %s %s at cycle %llu; its sensors read "
                "nothing from now on\n",
                L.program, why, (unsigned long long) L.avr->cycle);
    L.broken = true;
    return AVR_BOARD_FAILED;
}

/* One exchange: the request at REQ into the answer buffer. */
static uint8_t call(uint16_t *answered)
{
    if (L.to_board < 0) return AVR_BOARD_NONE;
    if (L.broken) return AVR_BOARD_FAILED;
    uint16_t req = reg16(AVR_BOARD_IF_REQ_LO, AVR_BOARD_IF_REQ_HI);
    uint8_t n = L.avr->data[AVR_BOARD_IF_REQ_LEN];
    uint16_t ans = reg16(AVR_BOARD_IF_ANS_LO, AVR_BOARD_IF_ANS_HI);
    uint16_t cap = reg16(AVR_BOARD_IF_ANS_LEN_LO, AVR_BOARD_IF_ANS_LEN_HI);
    if ((uint32_t) req + n > (uint32_t) L.avr->ramend + 1u ||
        (uint32_t) ans + cap > (uint32_t) L.avr->ramend + 1u) {
        fprintf(stderr, "motet-simavr: board call at cycle %llu: a buffer outside SRAM\n",
                (unsigned long long) L.avr->cycle);
        return AVR_BOARD_FAILED;
    }
    uint8_t head[2] = {n, 0};
    if (!write_all(head, 2) || !write_all(L.avr->data + req, n)) return broken("ended");
    if (!read_all(head, 2)) return broken("ended");
    uint16_t len = (uint16_t) (head[0] | head[1] << 8);
    if (len > ANSWER_MAX || !read_all(L.answer, len)) return broken("broke the protocol");
    if (len > cap) return AVR_BOARD_TOO_LONG;
    memcpy(L.avr->data + ans, L.answer, len);
    *answered = len;
    return AVR_BOARD_OK;
}

static void command(struct avr_t *avr, avr_io_addr_t addr, uint8_t v, void *param)
{
    (void) addr;
    (void) param;
    if (v != AVR_BOARD_CMD_CALL) return;
    uint16_t len = 0;
    avr->data[AVR_BOARD_IF_STATUS] = call(&len);
    avr->data[AVR_BOARD_IF_ANS_LEN_LO] = (uint8_t) len;
    avr->data[AVR_BOARD_IF_ANS_LEN_HI] = (uint8_t) (len >> 8);
}

/* The child's side of start_program(): on the pipes, or a word on
 * exec_report (closed on a successful exec) saying why not. */
static _Noreturn void exec_program(const options_t *opt, char **argv, int down[2], int up[2],
                                   int exec_report)
{
    dup2(down[0], STDIN_FILENO);
    dup2(up[1], STDOUT_FILENO);
    close(down[0]);
    close(down[1]);
    close(up[0]);
    close(up[1]);
    execv(opt->board, argv);
    int err = errno;
    ssize_t written = write(exec_report, &err, sizeof err);
    (void) written;
    _exit(EXIT_ERROR);
}

static int start_program(const options_t *opt)
{
    int down[2], up[2], report[2];
    if (pipe(down) != 0 || pipe(up) != 0 || pipe(report) != 0 ||
        fcntl(report[1], F_SETFD, FD_CLOEXEC) != 0) {
        perror("motet-simavr: board: pipe");
        return EXIT_ERROR;
    }
    char **argv = calloc(opt->n_board_args + 2u, sizeof *argv);
    if (!argv) return EXIT_ERROR;
    argv[0] = (char *) opt->board;
    for (size_t i = 0; i < opt->n_board_args; i++) argv[i + 1] = opt->board_args[i];
    fflush(NULL);
    L.pid = fork();
    if (L.pid < 0) {
        perror("motet-simavr: board: fork");
        free(argv);
        return EXIT_ERROR;
    }
    if (L.pid == 0) {
        close(report[0]);
        exec_program(opt, argv, down, up, report[1]);
    }
    free(argv);
    close(down[0]);
    close(up[1]);
    close(report[1]);
    L.to_board = down[1];
    L.from_board = up[0];
    signal(SIGPIPE, SIG_IGN); /* a program that ended is seen by write() */
    int err = 0;
    ssize_t n;
    do n = read(report[0], &err, sizeof err);
    while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n <= 0) return 0; /* closed by the exec: the program runs */
    fprintf(stderr, "motet-simavr: cannot start board program %s: %s\n", opt->board, strerror(err));
    boardlink_stop();
    return EXIT_ERROR;
}

/* Close the pipes to and from the board program, stop it first if
 * `terminate`, and wait for it; its wait status. */
static int end_program(bool terminate)
{
    close(L.to_board);
    close(L.from_board);
    L.to_board = L.from_board = -1;
    if (terminate) kill(L.pid, SIGTERM);
    int status = 0;
    waitpid(L.pid, &status, 0);
    return status;
}

/* Reads the n bytes of the first frame's head by `deadline` (monotonic
 * seconds): 1 read, 0 the program closed its output first, -1 late. */
static int read_by(uint8_t *p, size_t n, double deadline)
{
    while (n) {
        double left = deadline - harness_now_seconds();
        if (left <= 0) return -1;
        struct pollfd pfd = {.fd = L.from_board, .events = POLLIN};
        int ready = poll(&pfd, 1, (int) (left * 1000.0) + 1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return 0;
        if (ready == 0) continue;
        ssize_t k = read(L.from_board, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return 0;
        p += k;
        n -= (size_t) k;
    }
    return 1;
}

/* The program's first frame, empty, says that it took its arguments; one
 * that exits with BOARD_REFUSED before it refused them (a sensor it does
 * not serve, a scenario it cannot read), and the module must not join a
 * bus without its sensors. Every other start is told as what it is. */
static int wait_ready(double wait_s)
{
    uint8_t head[2];
    int got = read_by(head, 2, harness_now_seconds() + wait_s);
    if (got == 1 && head[0] == 0 && head[1] == 0) return 0;
    int status = end_program(got != 0);
    if (got < 0) {
        fprintf(stderr,
                "motet-simavr: board program %s did not say it was ready within %g s (it sent "
                "no first frame; stopped)\n",
                L.program, wait_s);
        return EXIT_LIMIT;
    }
    if (got == 1) {
        fprintf(stderr,
                "motet-simavr: board program %s sent a first frame of %u bytes, not the empty "
                "one that says it is ready (stopped)\n",
                L.program, (unsigned) (head[0] | head[1] << 8));
        return EXIT_ERROR;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == BOARD_REFUSED) {
        fprintf(stderr,
                "motet-simavr: board program %s ended with status %d before it was ready: it "
                "refused its arguments (its message is above)\n",
                L.program, BOARD_REFUSED);
        return EXIT_BOARD;
    }
    if (WIFEXITED(status))
        fprintf(stderr,
                "motet-simavr: board program %s ended with status %d before it was ready "
                "(what it said, if anything, is above)\n",
                L.program, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        fprintf(stderr,
                "motet-simavr: board program %s was killed by signal %d (%s) before it "
                "was ready\n",
                L.program, WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        fprintf(stderr, "motet-simavr: board program %s closed its output before it was ready\n",
                L.program);
    return EXIT_ERROR;
}

int boardlink_start(avr_t *core, const options_t *opt)
{
    L.avr = core;
    L.program = opt->board;
    core->data[AVR_BOARD_IF_STATUS] = AVR_BOARD_NONE;
    avr_register_io_write(core, AVR_BOARD_IF_CMD, command, NULL);
    if (!opt->board) return 0;
    int err = start_program(opt);
    return err ? err : wait_ready(opt->timeout > 0 ? opt->timeout : READY_WAIT_S);
}

void boardlink_stop(void)
{
    if (L.to_board < 0) return;
    (void) end_program(false);
}
