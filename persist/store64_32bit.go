//go:build !(amd64 || arm64 || ppc64 || ppc64le || riscv64 || loong64 || s390x || mips64 || mips64le)

package persist

import (
	"sync/atomic"
	"unsafe"
)

const is64bit = false

// store64 on a 32-bit platform: a plain 64-bit store would be two.
func store64(p unsafe.Pointer, v uint64) { atomic.StoreUint64((*uint64)(p), v) }
