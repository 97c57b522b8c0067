/* SPDX-License-Identifier: MIT */
/*
 * Broken on purpose: migration_timeout.pml with a source that, having
 * given a migration up (out of time, its image still on the way), ignores
 * the destination's late ATTACHED instead of answering ABORT. The image
 * reached the destination after the failed RESULT, so the copy it attached
 * stays frozen there for good: `no_stale_copy` fails.
 */
#define BROKEN_NO_ABORT
#include "migration_timeout.pml"
