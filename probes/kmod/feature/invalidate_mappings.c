// SPDX-License-Identifier: GPL-2.0
/* struct dma_buf_attach_ops calls its importer callback invalidate_mappings (7.1 on), not
 * move_notify. */
#include <linux/dma-buf.h>

static void invalidate(struct dma_buf_attachment *attach)
{
}

const struct dma_buf_attach_ops ops = { .invalidate_mappings = invalidate };
