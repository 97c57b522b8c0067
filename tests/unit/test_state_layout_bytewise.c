/* SPDX-License-Identifier: MIT */
/*
 * The byte-by-byte path of state_layout.c, the one a big-endian processor
 * takes (every port so far is little-endian and copies fields whole): the
 * tests of test_state_layout.c on a copy of state_layout.c compiled with
 * STATE_LAYOUT_COPY 0, its functions renamed so that they do not clash
 * with the kernel's.
 */
#define STATE_LAYOUT_COPY        0
#define state_layout_size        bytewise_state_layout_size
#define state_layout_encode_part bytewise_state_layout_encode_part
#define state_layout_encode      bytewise_state_layout_encode
#define state_layout_decode      bytewise_state_layout_decode
#define state_layout_decode_part bytewise_state_layout_decode_part
#define state_layout_clear_rest  bytewise_state_layout_clear_rest

#include "state_layout.c"

#include "test_state_layout.c"
