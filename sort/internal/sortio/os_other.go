//go:build !linux

package sortio

// Portable fallbacks of os_linux.go. (Mapping files needs Linux: on other
// systems persist.Map, and so the sorter, report ErrUnsupported.)

func PhysicalMemory() int64 { return 0 }

func AdviseHuge([]byte) {}

func CanPopulate() bool { return false }

func DirOnTmpfs(string) bool { return false }

func Populate([]byte) error { return nil }
