//go:build !linux

package sort

// Portable fallbacks of os_linux.go. (Mapping files needs Linux: on other
// systems persist.Map, and so the sorter, report ErrUnsupported.)

func physicalMemory() int64 { return 0 }

func adviseHuge([]byte) {}

func canPopulate() bool { return false }

func dirOnTmpfs(string) bool { return false }

func populate([]byte) error { return nil }
