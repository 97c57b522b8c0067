# SPDX-License-Identifier: MIT
# Cross-compiling for the AVR port: avr-gcc (5.4) and avr-libc for the
# ATmega128. Use with -DMOTET_PORT=avr:
#   cmake -S . -B build-avr -G Ninja -DMOTET_PORT=avr \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-avr.cmake
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR avr)
set(MOTET_AVR_MCU atmega128)

find_program(MOTET_AVR_GCC avr-gcc)
if(NOT MOTET_AVR_GCC)
  message(FATAL_ERROR "avr-gcc not found: install gcc-avr avr-libc binutils-avr "
                      "(./motet setup --all)")
endif()
set(CMAKE_C_COMPILER ${MOTET_AVR_GCC})
# A test program of the compiler check cannot link without a firmware
# layout; a static library is enough to know the compiler works.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# -Os everywhere: flash and cycles both matter on an 8-bit core. Each
# function and object gets its own section so the linker drops unused ones.
# -mrelax lets the linker shorten a call or jump whose target is near
# (RCALL/RJMP: a cycle and two bytes less each); the compiler cannot know the
# distance, so without it every call and jump is the long form.
set(CMAKE_C_FLAGS_INIT "-mmcu=${MOTET_AVR_MCU} -mrelax -ffunction-sections -fdata-sections")
# (Cache entries, set before CMake's GNU defaults would put -O2 there.)
set(CMAKE_C_FLAGS_DEBUG "-Os -g" CACHE STRING "")
set(CMAKE_C_FLAGS_RELWITHDEBINFO "-Os -g -DNDEBUG" CACHE STRING "")
set(CMAKE_C_FLAGS_RELEASE "-Os -DNDEBUG" CACHE STRING "")
set(CMAKE_C_FLAGS_MINSIZEREL "-Os -DNDEBUG" CACHE STRING "")

# simavr's .mmcu section (MCU name and clock, read by the simulator) must be
# kept and moved out of the way: left in place it shifts .data, and strings
# then read as garbage (docs/simavr-harness.md).
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-mmcu=${MOTET_AVR_MCU} -mrelax -Wl,--gc-sections -Wl,--undefined=_mmcu,--section-start=.mmcu=0x910000")

# Host programs (Python, pkg-config, the host compiler) are found as usual.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
