// Package blkref measures pagelog against PMDK's libpmemblk in one process,
// interleaved, so that the ratio holds on a noisy machine: the reference
// of the pagelog README ("at least 1.5x pmemblk" for 4 KiB pages).
//
// Everything but this file is behind the pmdk build tag (cgo and
// libpmemblk-dev, which `make test` must not need). Run it with
//
//	PMEM_IS_PMEM_FORCE=1 go test -tags pmdk -run TestVersusPMDK -v ./bench/pmdk/blkref/
//
// Every writer writes the same patterned page; with BLKREF_ZERO=1 a page
// of zeros (which streams faster on some machines, this VM among them).
package blkref
