// SPDX-License-Identifier: GPL-2.0
/* Compiles wherever the probes' compiler command works: Kbuild stops when it does not, rather than
 * take every probe's failure for a missing feature. */
#include <linux/dma-buf.h>
#include <linux/module.h>
