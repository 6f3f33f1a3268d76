//go:build !linux

package numa

import "fmt"

// BindThread is unsupported off Linux.
func BindThread(cpus []int) error { return fmt.Errorf("%w: not Linux", ErrUnsupported) }

// ThreadCPUs is unsupported off Linux.
func ThreadCPUs() ([]int, error) { return nil, fmt.Errorf("%w: not Linux", ErrUnsupported) }

// Bind is unsupported off Linux.
func Bind(b []byte, node int) error { return fmt.Errorf("%w: not Linux", ErrUnsupported) }

// PageNode is unsupported off Linux.
func PageNode(b []byte) (int, error) { return -1, fmt.Errorf("%w: not Linux", ErrUnsupported) }

// CPU is unknown off Linux.
func CPU() int { return -1 }
