/* SPDX-License-Identifier: MIT */
/*
 * Shared parts of the libFuzzer targets (tests/fuzz/README.md): a fresh
 * native kernel for every input, a reader of the input's bytes, and the
 * invariant checks that end the run with a crash libFuzzer reports.
 */
#ifndef FUZZ_SUPPORT_H
#define FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "motet/motet.h"

/* A broken invariant: say which, and crash (libFuzzer saves the input). */
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) fuzz_fail(__FILE__, __LINE__, #cond);                                         \
    } while (0)

/* Report a broken invariant and abort. */
_Noreturn void fuzz_fail(const char *file, int line, const char *what);

/* Boot a fresh native kernel on the simulated clock, counter at 0: every
 * input starts from the same state. */
void fuzz_boot(void);

/* The input, read front to back; past its end every read gives zeros. */
typedef struct fuzz_input {
    const uint8_t *data;
    size_t size;
    size_t at;
} fuzz_input_t;

/* True while bytes are left. */
bool fuzz_more(const fuzz_input_t *in);
/* The next byte. */
uint8_t fuzz_u8(fuzz_input_t *in);
/* The next two bytes, little-endian. */
uint16_t fuzz_u16(fuzz_input_t *in);
/* The next four bytes, little-endian. */
uint32_t fuzz_u32(fuzz_input_t *in);
/* Up to `n` next bytes into out; returns how many there were. */
size_t fuzz_bytes(fuzz_input_t *in, uint8_t *out, size_t n);

#endif /* FUZZ_SUPPORT_H */
