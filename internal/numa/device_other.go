//go:build !linux

package numa

func deviceOf(string) (uint32, uint32, bool, error) { return 0, 0, false, ErrUnsupported }
