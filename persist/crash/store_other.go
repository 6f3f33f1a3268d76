//go:build !linux

package crash

func newStore(size int) (imageStore, []byte, []byte, error) {
	s, live, media := newCopyStore(size)
	return s, live, media, nil
}
