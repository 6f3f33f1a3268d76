//go:build pmdk

// The C side of bench/pmdk: each loop runs n iterations of one benchmark
// with libpmem (or a PMDK pool library) and returns, so that one cgo call
// covers a whole b.N batch.

#ifndef PMDKBENCH_H
#define PMDKBENCH_H

#include <stddef.h>
#include <stdint.h>

#include <libpmemlog.h>
#include <libpmemblk.h>

// pb_map creates path (it must not exist) with len bytes through
// pmem_map_file, sparse: nothing is allocated until the caller writes it
// (Prefault). It returns the mapping, or NULL with errno set. *is_pmem is
// libpmem's verdict (1 with PMEM_IS_PMEM_FORCE=1).
void *pb_map(const char *path, size_t len, int *is_pmem);
int pb_unmap(void *addr, size_t len);
// pb_persist is pmem_persist.
void pb_persist(char *p, size_t len);

// pb_copy_persist: n pmem_memcpy_persist of size bytes from src to
// sequential destinations in [base, base+len), wrapping at the end. *off is
// the next destination, updated.
void pb_copy_persist(char *base, size_t len, const char *src, size_t size, long n, size_t *off);

// pb_persist_seq: n times an 8-byte store of the counter *i into line
// (*i % lines) and pmem_persist of those 8 bytes; *i is updated.
void pb_persist_seq(char *base, size_t len, long n, uint64_t *i);

// pb_persist_rand: the same on lines picked by xorshift64 from *x.
void pb_persist_rand(char *base, size_t len, long n, uint64_t *x);

// pb_flush: n times an increment of the first byte of line (*i % lines)
// and pmem_flush of 8 bytes there, then one pmem_drain.
void pb_flush(char *base, size_t len, long n, uint64_t *i);

// pb_log_create creates a pmemlog pool and fills it once with chunk-byte
// appends (so every page is touched), then rewinds it.
PMEMlogpool *pb_log_create(const char *path, size_t poolsize, const char *buf, size_t chunk);
// pb_log_append: n pmemlog_append of size bytes, rewinding when full.
// Returns 0, or -1 with errno set.
int pb_log_append(PMEMlogpool *plp, const char *buf, size_t size, long n);

// pb_blk_create creates a pmemblk pool of bsize-byte blocks and writes
// every block once.
PMEMblkpool *pb_blk_create(const char *path, size_t bsize, size_t poolsize, const char *buf);
// pb_blk_write: n pmemblk_write to sequential block numbers from *blockno,
// wrapping at the end. Returns 0, or -1 with errno set.
int pb_blk_write(PMEMblkpool *pbp, const char *buf, long n, long long *blockno);

// pb_obj is a pmemobj pool with a root object of size bytes.
typedef struct pb_obj pb_obj;
// pb_obj_create creates the pool and its root object (zeroed, so touched),
// and warms the transaction machinery with a few transactions.
pb_obj *pb_obj_create(const char *path, size_t poolsize, size_t rootsize);
// pb_obj_tx: n transactions, each pmemobj_tx_add_range of size bytes of the
// root at *off and a store of val there; sequential offsets, wrapping.
// Returns 0, or -1 when a transaction aborted.
int pb_obj_tx(pb_obj *o, const char *val, size_t size, long n, uint64_t *off);
void pb_obj_close(pb_obj *o);

#endif
