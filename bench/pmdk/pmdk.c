//go:build pmdk

#include "pmdk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libpmem.h>
#include <libpmemobj.h>

void *pb_map(const char *path, size_t len, int *is_pmem) {
	size_t mapped = 0;
	char *p = pmem_map_file(path, len, PMEM_FILE_CREATE | PMEM_FILE_EXCL | PMEM_FILE_SPARSE, 0644, &mapped, is_pmem);
	if (p == NULL)
		return NULL;
	if (mapped != len) {
		pmem_unmap(p, mapped);
		errno = EINVAL;
		return NULL;
	}
	return p;
}

void pb_persist(char *p, size_t len) { pmem_persist(p, len); }

int pb_unmap(void *addr, size_t len) { return pmem_unmap(addr, len); }

void pb_copy_persist(char *base, size_t len, const char *src, size_t size, long n, size_t *off) {
	size_t o = *off;
	for (long i = 0; i < n; i++) {
		if (o + size > len)
			o = 0;
		pmem_memcpy_persist(base + o, src, size);
		o += size;
	}
	*off = o;
}

void pb_persist_seq(char *base, size_t len, long n, uint64_t *i) {
	uint64_t lines = len / 64, k = *i;
	for (long j = 0; j < n; j++) {
		uint64_t off = (k % lines) * 64;
		*(uint64_t *)(base + off) = k;
		pmem_persist(base + off, 8);
		k++;
	}
	*i = k;
}

void pb_persist_rand(char *base, size_t len, long n, uint64_t *x) {
	uint64_t lines = len / 64, v = *x;
	for (long j = 0; j < n; j++) {
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		uint64_t off = (v % lines) * 64;
		*(uint64_t *)(base + off) = v;
		pmem_persist(base + off, 8);
	}
	*x = v;
}

void pb_flush(char *base, size_t len, long n, uint64_t *i) {
	uint64_t lines = len / 64, k = *i;
	for (long j = 0; j < n; j++) {
		uint64_t off = (k % lines) * 64;
		base[off]++;
		pmem_flush(base + off, 8);
		k++;
	}
	pmem_drain();
	*i = k;
}

PMEMlogpool *pb_log_create(const char *path, size_t poolsize, const char *buf, size_t chunk) {
	PMEMlogpool *plp = pmemlog_create(path, poolsize, 0644);
	if (plp == NULL)
		return NULL;
	while (pmemlog_append(plp, buf, chunk) == 0)
		;
	if (errno != ENOSPC) {
		int e = errno;
		pmemlog_close(plp);
		errno = e;
		return NULL;
	}
	pmemlog_rewind(plp);
	return plp;
}

int pb_log_append(PMEMlogpool *plp, const char *buf, size_t size, long n) {
	for (long i = 0; i < n; i++) {
		if (pmemlog_append(plp, buf, size) == 0)
			continue;
		if (errno != ENOSPC)
			return -1;
		pmemlog_rewind(plp);
		if (pmemlog_append(plp, buf, size) != 0)
			return -1;
	}
	return 0;
}

PMEMblkpool *pb_blk_create(const char *path, size_t bsize, size_t poolsize, const char *buf) {
	PMEMblkpool *pbp = pmemblk_create(path, bsize, poolsize, 0644);
	if (pbp == NULL)
		return NULL;
	long long bn = 0;
	if (pb_blk_write(pbp, buf, (long)pmemblk_nblock(pbp), &bn) != 0) {
		int e = errno;
		pmemblk_close(pbp);
		errno = e;
		return NULL;
	}
	return pbp;
}

int pb_blk_write(PMEMblkpool *pbp, const char *buf, long n, long long *blockno) {
	long long nb = (long long)pmemblk_nblock(pbp), bn = *blockno;
	for (long i = 0; i < n; i++) {
		if (pmemblk_write(pbp, buf, bn) != 0)
			return -1;
		if (++bn >= nb)
			bn = 0;
	}
	*blockno = bn;
	return 0;
}

struct pb_obj {
	PMEMobjpool *pop;
	PMEMoid root;
	char *base;
	size_t size;
};

pb_obj *pb_obj_create(const char *path, size_t poolsize, size_t rootsize) {
	PMEMobjpool *pop = pmemobj_create(path, "braid-pmdkbench", poolsize, 0644);
	if (pop == NULL)
		return NULL;
	PMEMoid root = pmemobj_root(pop, rootsize);
	if (OID_IS_NULL(root)) {
		int e = errno;
		pmemobj_close(pop);
		errno = e;
		return NULL;
	}
	pb_obj *o = malloc(sizeof *o);
	if (o == NULL) {
		pmemobj_close(pop);
		errno = ENOMEM;
		return NULL;
	}
	o->pop = pop;
	o->root = root;
	o->base = pmemobj_direct(root);
	o->size = rootsize;
	char val[64] = {1};
	uint64_t off = 0;
	if (pb_obj_tx(o, val, sizeof val, 1000, &off) != 0) {
		pb_obj_close(o);
		errno = EIO;
		return NULL;
	}
	return o;
}

int pb_obj_tx(pb_obj *o, const char *val, size_t size, long n, uint64_t *off) {
	uint64_t of = *off;
	for (long i = 0; i < n; i++) {
		volatile int failed = 0;
		if (of + size > o->size)
			of = 0;
		TX_BEGIN(o->pop) {
			pmemobj_tx_add_range(o->root, of, size);
			memcpy(o->base + of, val, size);
		} TX_ONABORT {
			failed = 1;
		} TX_END
		if (failed)
			return -1;
		of += size;
	}
	*off = of;
	return 0;
}

void pb_obj_close(pb_obj *o) {
	pmemobj_close(o->pop);
	free(o);
}
