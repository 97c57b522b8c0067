/* SPDX-License-Identifier: MIT */
/*
 * The hardware the Cortex-M port drives: the Cortex-M3 system control space
 * and the CMSDK peripherals of the mps2-an385 board as QEMU models them.
 * Port-private: only ports/cortex-m/ includes it.
 */
#ifndef PORT_CM_MPS2_H
#define PORT_CM_MPS2_H

#include <stdint.h>

#include "port_config.h"

#define CM_REG(addr) (*(volatile uint32_t *) (addr))

/* ---- system control block ---- */
#define SCB_ICSR        CM_REG(0xE000ED04u)
#define SCB_VTOR        CM_REG(0xE000ED08u)
#define SCB_SCR         CM_REG(0xE000ED10u)
#define SCB_CCR         CM_REG(0xE000ED14u)
#define SCB_SHPR2       CM_REG(0xE000ED1Cu) /* SVCall priority in bits 31:24 */
#define SCB_SHPR3       CM_REG(0xE000ED20u) /* PendSV 23:16, SysTick 31:24 */
#define SCB_CFSR        CM_REG(0xE000ED28u)
#define SCB_HFSR        CM_REG(0xE000ED2Cu)
#define SCB_BFAR        CM_REG(0xE000ED38u)
#define ICSR_NMIPENDSET (1u << 31)
#define ICSR_PENDSVSET  (1u << 28)
#define ICSR_PENDSVCLR  (1u << 27)
#define ICSR_RETTOBASE  (1u << 11) /* the running exception is the only active one */
#define SCR_SLEEPDEEP   (1u << 2)
#define CCR_STKALIGN    (1u << 9)
#define SCB_MMFAR       CM_REG(0xE000ED34u)
#define SCB_SHCSR       CM_REG(0xE000ED24u)
#define SHCSR_MEMFAULT  (1u << 16)
#define SYST_CSR        CM_REG(0xE000E010u)

/* ---- memory protection unit (PMSAv7) ---- */
#define MPU_CTRL            CM_REG(0xE000ED94u)
#define MPU_RNR             CM_REG(0xE000ED98u)
#define MPU_RBAR            CM_REG(0xE000ED9Cu)
#define MPU_RASR            CM_REG(0xE000EDA0u)
#define MPU_CTRL_ENABLE     (1u << 0)
#define MPU_CTRL_PRIVDEFENA (1u << 2) /* the default map where no region matches */
#define MPU_RASR_ENABLE     (1u << 0)
#define MPU_RASR_SIZE(log2) (((log2) -1u) << 1)
#define MPU_RASR_C          (1u << 17)
#define MPU_RASR_AP_RO      (6u << 24) /* read-only, privileged and not */
#define MPU_RASR_XN         (1u << 28) /* no instruction fetch */
#define MPU_RBAR_VALID      (1u << 4)  /* RBAR's low bits name the region */

/* ---- NVIC: one bit per external interrupt in each 32-bit word ---- */
#define NVIC_ISER(n)  CM_REG(0xE000E100u + 4u * (n))
#define NVIC_ICER(n)  CM_REG(0xE000E180u + 4u * (n))
#define NVIC_ISPR(n)  CM_REG(0xE000E200u + 4u * (n))
#define NVIC_ICPR(n)  CM_REG(0xE000E280u + 4u * (n))
#define NVIC_IPR(irq) (*(volatile uint8_t *) (0xE000E400u + (irq)))

/* The code memory (SSRAM1): RAM on this board, read-only for Motet. */
#define CODE_BASE      0x00000000u
#define CODE_SIZE_LOG2 22u /* 4 MB */

/* ---- CMSDK APB timer (TIMER0, TIMER1): a 32-bit down counter ---- */
typedef struct cmsdk_timer {
    volatile uint32_t ctrl;   /* bit 0 enable, bit 3 interrupt enable */
    volatile uint32_t value;  /* counts down; the interrupt is raised on reaching 0 */
    volatile uint32_t reload; /* loaded into value on the clock after 0 */
    volatile uint32_t intr;   /* read: interrupt status; write 1: clear */
} cmsdk_timer_t;
#define TIMER_CTRL_EN (1u << 0)
#define TIMER_CTRL_IE (1u << 3)
#define CM_TIMER0     ((cmsdk_timer_t *) 0x40000000u)
#define CM_TIMER1     ((cmsdk_timer_t *) PORT_CM_COUNTER_BASE) /* port_config.h */

/* ---- CMSDK APB watchdog (watchdog.c) ---- */
typedef struct cmsdk_watchdog {
    volatile uint32_t load; /* write: the counter reloads from it at once */
    volatile uint32_t value;
    volatile uint32_t ctrl; /* bit 0 INTEN, bit 1 RESEN */
    volatile uint32_t intclr;
    volatile uint32_t ris;
    volatile uint32_t mis;
    uint32_t reserved[762];
    volatile uint32_t lock; /* 0xC00: write 0x1ACCE551 to unlock, anything else to lock */
} cmsdk_watchdog_t;
#define CM_WDOG ((cmsdk_watchdog_t *) 0x40008000u)

/* ---- CMSDK APB dual timer: two SP804-style down counters ---- */
typedef struct cmsdk_dualtimer {
    volatile uint32_t load; /* write: value = load at once */
    volatile uint32_t value;
    volatile uint32_t ctrl;
    volatile uint32_t intclr; /* write: clear the interrupt */
    volatile uint32_t ris;
    volatile uint32_t mis;
    volatile uint32_t bgload;
    uint32_t reserved;
} cmsdk_dualtimer_t;
#define DUAL_CTRL_ONESHOT (1u << 0)
#define DUAL_CTRL_32BIT   (1u << 1)
#define DUAL_CTRL_IE      (1u << 5)
#define DUAL_CTRL_EN      (1u << 7)
#define CM_DUALTIMER1     ((cmsdk_dualtimer_t *) 0x40002000u)
/* The second counter, IRQ 10 too: never used by the port itself; on a
 * device the lock-step adapter arms it as its fence (clock.c). */
#define CM_DUALTIMER2 ((cmsdk_dualtimer_t *) 0x40002020u)

/* ---- CMSDK APB UART ---- */
typedef struct cmsdk_uart {
    volatile uint32_t data;
    volatile uint32_t state; /* bit 0: TX buffer full */
    volatile uint32_t ctrl;  /* bit 0: TX enable */
    volatile uint32_t intr;
    volatile uint32_t bauddiv; /* QEMU transmits only with a divider of 16 or more */
} cmsdk_uart_t;
#define UART_STATE_TXFULL (1u << 0)
#define UART_CTRL_TXEN    (1u << 0)
#define CM_UART0          ((cmsdk_uart_t *) 0x40004000u)

/* ---- external interrupt numbers of the AN385 image ---- */
#define IRQ_TIMER0    8u
#define IRQ_TIMER1    9u
#define IRQ_DUALTIMER 10u
#define IRQ_COUNT     32u /* lines the NVIC of this board has */

#endif /* PORT_CM_MPS2_H */
