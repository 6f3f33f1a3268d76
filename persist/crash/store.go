package crash

// An imageStore hands out buffers that hold a copy of a region's media, to
// build crash images in, and takes them back.
type imageStore interface {
	get() ([]byte, error)
	put([]byte)
	close()
}

// cowMin is the region size from which crash images are copy-on-write
// mappings instead of copies (on Linux): an image then costs what the
// recovery touches, not the region size.
const cowMin = 4 << 20

// copyStore copies media into pooled buffers.
type copyStore struct {
	media []byte
	free  [][]byte
}

func (s *copyStore) get() ([]byte, error) {
	var b []byte
	if n := len(s.free); n > 0 {
		b, s.free = s.free[n-1], s.free[:n-1]
	} else {
		b = make([]byte, len(s.media))
	}
	copy(b, s.media)
	return b, nil
}

func (s *copyStore) put(b []byte) { s.free = append(s.free, b) }
func (s *copyStore) close()       { s.free = nil }

// nopStore belongs to regions that are never crashed again.
type nopStore struct{}

func (nopStore) get() ([]byte, error) { panic("crash: image of an untracked region") }
func (nopStore) put([]byte)           {}
func (nopStore) close()               {}

func newCopyStore(size int) (imageStore, []byte, []byte) {
	live, media := make([]byte, size), make([]byte, size)
	return &copyStore{media: media}, live, media
}
