// SPDX-License-Identifier: GPL-2.0
/* iommutrace_probe.ko: /dev/iommutrace-probe, whose ioctls make DMA mappings on behalf of a PCI
 * device so that the tracer sees its IOMMU domain map them. What an open file made is undone by
 * RELEASE or when the file is closed. */
#include "iommutrace_probe.h"
#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

/* the uapi's layout, the same for 32- and 64-bit callers */
static_assert(sizeof(struct iommutrace_probe_pci_addr) == 8);
static_assert(sizeof(struct iommutrace_probe_dma_segment) == 16);
static_assert(sizeof(struct iommutrace_probe_import_dmabuf) == 72);
static_assert(sizeof(struct iommutrace_probe_get_segments) == 24);
static_assert(sizeof(struct iommutrace_probe_map_resource) == 64);
static_assert(sizeof(struct iommutrace_probe_release) == 8);

/* What one open file has mapped, by handle (from 1). The mutex serialises the file's ioctls, so
 * that a RELEASE never frees what another ioctl is reading; a handle being set up is reserved
 * (NULL) until its mapping is in place. */
struct probe_file {
	struct mutex lock;
	struct xarray mappings;
};

static int probe_open(struct inode *inode, struct file *file)
{
	struct probe_file *pf;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	pf = kzalloc(sizeof(*pf), GFP_KERNEL);
	if (!pf)
		return -ENOMEM;
	mutex_init(&pf->lock);
	xa_init_flags(&pf->mappings, XA_FLAGS_ALLOC1);
	file->private_data = pf;
	return nonseekable_open(inode, file);
}

/* A mapping to be made for the device at ADDR, with a reference to it, or an ERR_PTR. */
static struct probe_mapping *mapping_new(const struct iommutrace_probe_pci_addr *addr)
{
	struct probe_mapping *m;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->importer = probe_pci_get(addr);
	if (IS_ERR(m->importer)) {
		long err = PTR_ERR(m->importer);

		kfree(m);
		return ERR_PTR(err);
	}
	return m;
}

/* Free a mapping that mapping_new() made, whether or not it was then mapped. */
static void mapping_free(struct probe_mapping *m)
{
	pci_dev_put(m->importer);
	kfree(m);
}

static void mapping_undo(struct probe_mapping *m)
{
	switch (m->kind) {
	case PROBE_DMABUF_IMPORT:
		dmabuf_import_undo(m);
		break;
	case PROBE_BAR_MAP:
		bar_map_undo(m);
		break;
	}
	mapping_free(m);
}

static int probe_release(struct inode *inode, struct file *file)
{
	struct probe_file *pf = file->private_data;
	struct probe_mapping *m;
	unsigned long handle;

	xa_for_each(&pf->mappings, handle, m)
		mapping_undo(m);
	xa_destroy(&pf->mappings);
	mutex_destroy(&pf->lock);
	kfree(pf);
	return 0;
}

static long ioctl_import_dmabuf(struct probe_file *pf, void __user *uarg)
{
	struct iommutrace_probe_import_dmabuf args;
	struct probe_mapping *m;
	u32 handle;
	int err;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.segments_capacity && !args.segments_ptr) {
		pr_info("IMPORT_DMABUF: room for %u segments at NULL\n", args.segments_capacity);
		return -EINVAL;
	}
	m = mapping_new(&args.importer);
	if (IS_ERR(m))
		return PTR_ERR(m);
	/* reserved first, so that running out of memory never undoes a mapping the tracer saw */
	err = xa_alloc(&pf->mappings, &handle, NULL, xa_limit_32b, GFP_KERNEL);
	if (err)
		goto free;
	err = dmabuf_import_map(m, args.dmabuf_fd);
	if (err)
		goto unreserve;
	err = dmabuf_import_copy_segments(m, 0, args.segments_capacity, args.segments_ptr);
	args.dmabuf_size_bytes = m->import.dmabuf->size;
	args.segments_count = m->import.segments_count;
	args.handle = handle;
	strscpy_pad(args.exporter, m->import.dmabuf->exp_name ?: "", sizeof(args.exporter));
	if (!err && copy_to_user(uarg, &args, sizeof(args)))
		err = -EFAULT;
	if (err) {
		dmabuf_import_undo(m);
		goto unreserve;
	}
	xa_store(&pf->mappings, handle, m, GFP_KERNEL);
	return 0;

unreserve:
	xa_release(&pf->mappings, handle);
free:
	mapping_free(m);
	return err;
}

static long ioctl_get_segments(struct probe_file *pf, void __user *uarg)
{
	struct iommutrace_probe_get_segments args;
	struct probe_mapping *m;
	int err;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.segments_capacity && !args.segments_ptr) {
		pr_info("GET_SEGMENTS: room for %u segments at NULL\n", args.segments_capacity);
		return -EINVAL;
	}
	m = xa_load(&pf->mappings, args.handle);
	if (!m || m->kind != PROBE_DMABUF_IMPORT) {
		pr_info("GET_SEGMENTS: handle %u is no import\n", args.handle);
		return -ENOENT;
	}
	err = dmabuf_import_copy_segments(m, args.first_segment, args.segments_capacity,
					  args.segments_ptr);
	if (err)
		return err;
	args.segments_count = m->import.segments_count;
	if (copy_to_user(uarg, &args, sizeof(args)))
		return -EFAULT;
	return 0;
}

static long ioctl_map_resource(struct probe_file *pf, void __user *uarg)
{
	struct iommutrace_probe_map_resource args;
	struct probe_mapping *m;
	struct pci_dev *peer;
	phys_addr_t phys;
	u32 handle;
	int err;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.pad || args.pad2) {
		pr_info("MAP_RESOURCE: padding not zero\n");
		return -EINVAL;
	}
	m = mapping_new(&args.importer);
	if (IS_ERR(m))
		return PTR_ERR(m);
	peer = probe_pci_get(&args.peer);
	if (IS_ERR(peer)) {
		err = PTR_ERR(peer);
		goto free;
	}
	err = probe_bar_phys(peer, args.bar_index, args.bar_offset_bytes, args.length_bytes, &phys);
	if (err)
		goto put_peer;
	err = xa_alloc(&pf->mappings, &handle, NULL, xa_limit_32b, GFP_KERNEL);
	if (err)
		goto put_peer;
	err = bar_map_map(m, peer, phys, args.length_bytes);
	if (err)
		goto unreserve;
	args.phys_addr = phys;
	args.dma_addr = m->bar.dma_addr;
	args.handle = handle;
	if (copy_to_user(uarg, &args, sizeof(args))) {
		err = -EFAULT;
		bar_map_undo(m);
		xa_release(&pf->mappings, handle);
		goto free;
	}
	xa_store(&pf->mappings, handle, m, GFP_KERNEL);
	return 0;

unreserve:
	xa_release(&pf->mappings, handle);
put_peer:
	pci_dev_put(peer);
free:
	mapping_free(m);
	return err;
}

static long ioctl_release(struct probe_file *pf, void __user *uarg)
{
	struct iommutrace_probe_release args;
	struct probe_mapping *m;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.pad) {
		pr_info("RELEASE: padding not zero\n");
		return -EINVAL;
	}
	m = xa_erase(&pf->mappings, args.handle);
	if (!m) {
		pr_info("RELEASE: no handle %u\n", args.handle);
		return -ENOENT;
	}
	mapping_undo(m);
	return 0;
}

static long probe_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct probe_file *pf = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	mutex_lock(&pf->lock);
	switch (cmd) {
	case IOMMUTRACE_PROBE_IMPORT_DMABUF:
		ret = ioctl_import_dmabuf(pf, uarg);
		break;
	case IOMMUTRACE_PROBE_GET_SEGMENTS:
		ret = ioctl_get_segments(pf, uarg);
		break;
	case IOMMUTRACE_PROBE_MAP_RESOURCE:
		ret = ioctl_map_resource(pf, uarg);
		break;
	case IOMMUTRACE_PROBE_RELEASE:
		ret = ioctl_release(pf, uarg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	mutex_unlock(&pf->lock);
	return ret;
}

static const struct file_operations probe_fops = {
	.owner = THIS_MODULE,
	.open = probe_open,
	.release = probe_release,
	.unlocked_ioctl = probe_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice probe_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = IOMMUTRACE_PROBE_DEVICE_NAME,
	.fops = &probe_fops,
	.mode = 0600,
};
module_misc_device(probe_misc);

MODULE_DESCRIPTION("iommutrace: DMA mappings made on behalf of a PCI device, for tracing");
MODULE_LICENSE("GPL");
/* a bare token until cdd30ebb1b9f ("module: Convert symbol namespace to string literal", 6.13):
 * the string form would compile there too but name the namespace "\"DMA_BUF\"" */
#ifdef IOMMUTRACE_HAVE_IMPORT_NS_TOKEN
MODULE_IMPORT_NS(DMA_BUF);
#else
MODULE_IMPORT_NS("DMA_BUF");
#endif
