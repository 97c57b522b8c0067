# SPDX-License-Identifier: MIT
# motet-simavr's own files, named once for its two builds: the native build
# (CMakeLists.txt) and the AVR cross build's host step (host-build.cmake).
set(MOTET_SIMAVR_SOURCES boardlink.c buslink.c logtap.c main.c profile.c sim.c)
set(MOTET_SIMAVR_HEADERS boardlink.h buslink.h harness.h logtap.h profile.h)
