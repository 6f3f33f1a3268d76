//go:build amd64 || arm64 || ppc64 || ppc64le || riscv64 || loong64 || s390x || mips64 || mips64le

package persist

import "unsafe"

const is64bit = true

// store64 is one aligned 64-bit store: the compiler never splits it on a
// 64-bit platform, and unlike atomic.StoreUint64 (XCHG on amd64) it does
// not wait for earlier stores to drain.
func store64(p unsafe.Pointer, v uint64) { *(*uint64)(p) = v }
