//go:build !linux

package crash

func newStore(size int) (imageStore, []byte, []byte, dirtyTracker, error) {
	s, live, media := newCopyStore(size)
	return s, live, media, nil, nil
}
