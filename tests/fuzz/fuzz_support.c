/* SPDX-License-Identifier: MIT */
#include "fuzz_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

void fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
    abort();
}

void fuzz_boot(void)
{
    native_options_t opt = {.realtime = false, .seed = 1};
    port_native_configure(&opt);
    motet_boot();
}

bool fuzz_more(const fuzz_input_t *in)
{
    return in->at < in->size;
}

uint8_t fuzz_u8(fuzz_input_t *in)
{
    return in->at < in->size ? in->data[in->at++] : 0u;
}

uint16_t fuzz_u16(fuzz_input_t *in)
{
    uint16_t lo = fuzz_u8(in);
    return (uint16_t) (lo | (uint16_t) (fuzz_u8(in) << 8));
}

uint32_t fuzz_u32(fuzz_input_t *in)
{
    uint32_t lo = fuzz_u16(in);
    return lo | (uint32_t) fuzz_u16(in) << 16;
}

size_t fuzz_bytes(fuzz_input_t *in, uint8_t *out, size_t n)
{
    size_t left = in->size - in->at;
    if (n > left) n = left;
    if (n) memcpy(out, in->data + in->at, n);
    in->at += n;
    return n;
}
