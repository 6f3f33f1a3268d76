//go:build linux

package numa

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BindThread restricts the calling OS thread to cpus (sched_setaffinity).
// The caller must have locked its goroutine to the thread
// (runtime.LockOSThread) or the binding lands on whichever thread the
// goroutine happens to run on.
func BindThread(cpus []int) error {
	if len(cpus) == 0 {
		return fmt.Errorf("%w: no CPU to bind to", ErrUnsupported)
	}
	var set unix.CPUSet
	set.Zero()
	for _, c := range cpus {
		if c < 0 || c >= len(set)*64 {
			return fmt.Errorf("%w: CPU %d outside the affinity mask", ErrUnsupported, c)
		}
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("%w: sched_setaffinity %s: %v", ErrUnsupported, FormatList(cpus), err)
	}
	return nil
}

// ThreadCPUs returns the calling thread's affinity mask.
func ThreadCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("numa: sched_getaffinity: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// Linux's memory policy modes and flags (linux/mempolicy.h).
const (
	mpolBind    = 2
	mpolFNode   = 1 << 0
	mpolFAddr   = 1 << 1
	mpolMFMove  = 1 << 1
	maxNodeBits = 1024
)

// Bind binds the pages of b (page-aligned, mapped outside the Go heap) to
// node (mbind MPOL_BIND, moving pages already there). Where the kernel
// refuses — the node is not online, no NUMA support, a seccomp filter —
// the error wraps ErrUnsupported and b is unchanged.
func Bind(b []byte, node int) error {
	if len(b) == 0 {
		return nil
	}
	if node < 0 || node >= maxNodeBits {
		return fmt.Errorf("%w: node %d, want 0..%d", ErrUnsupported, node, maxNodeBits-1)
	}
	addr := uintptr(unsafe.Pointer(&b[0]))
	if addr%uintptr(unix.Getpagesize()) != 0 {
		return fmt.Errorf("%w: range at %#x is not page-aligned", ErrUnsupported, addr)
	}
	var mask [maxNodeBits / 64]uint64
	mask[node/64] |= 1 << (node % 64)
	_, _, errno := unix.Syscall6(unix.SYS_MBIND, addr, uintptr(len(b)), mpolBind,
		uintptr(unsafe.Pointer(&mask[0])), maxNodeBits+1, mpolMFMove)
	runtime.KeepAlive(b)
	if errno != 0 {
		return fmt.Errorf("%w: mbind to node %d: %v", ErrUnsupported, node, errno)
	}
	return nil
}

// PageNode returns the node that holds the page at b[0] (get_mempolicy
// MPOL_F_NODE|MPOL_F_ADDR); the page must have been touched.
func PageNode(b []byte) (int, error) {
	if len(b) == 0 {
		return -1, fmt.Errorf("%w: empty range", ErrUnsupported)
	}
	var node int32
	_, _, errno := unix.Syscall6(unix.SYS_GET_MEMPOLICY, uintptr(unsafe.Pointer(&node)), 0, 0,
		uintptr(unsafe.Pointer(&b[0])), mpolFNode|mpolFAddr, 0)
	runtime.KeepAlive(b)
	if errno != 0 {
		return -1, fmt.Errorf("%w: get_mempolicy: %v", ErrUnsupported, errno)
	}
	return int(node), nil
}

// CPU returns the CPU the calling thread runs on now (getcpu).
func CPU() int {
	var cpu, node uint32
	if _, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), uintptr(unsafe.Pointer(&node)), 0); errno != 0 {
		return -1
	}
	return int(cpu)
}
