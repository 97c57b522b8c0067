/* SPDX-License-Identifier: MIT */
/*
 * migration.pml with multicasts: a sender on P multicasts two numbered
 * messages to T's group while T moves, and each frame, the RESULT
 * included, reaches each module at its own moment (a module that rejects
 * a frame takes it when it is sent again). One message from each unicast
 * sender keeps the state space small enough for the test run
 * (tests/tools/test_spin_migration.py runs every check on this model too).
 */
#define NP 1
#define NS 1
#define NC 2
#include "migration.pml"
