// SPDX-License-Identifier: GPL-2.0
/* MODULE_IMPORT_NS takes a bare token (before 6.13); where it takes a string this does not compile,
 * DMA_BUF being no identifier. */
#include <linux/module.h>

MODULE_IMPORT_NS(DMA_BUF);
