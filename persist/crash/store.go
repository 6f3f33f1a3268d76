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
// recovery touches, not the region size, and a crash point what the
// workload wrote (the kernel lists the pages), not the region size.
// Around 1 MiB a copied image and a mapped one cost the same.
const cowMin = 1 << 20

// pageSize is the unit of dirty-page tracking.
const pageSize = 4096

// A dirtyTracker lists the pages of a region's live memory that may
// differ from its media: the others are equal to it.
type dirtyTracker interface {
	// written calls fn, in ascending order, with the byte range of
	// every run of pages that may differ; on an error it has not
	// called fn.
	written(fn func(lo, hi int)) error
	close()
}

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

// overlayStore belongs to a region of a crash image that is crashed again
// (a crash during recovery): its media is an image of base with words
// changed (the units that survived the first crash, then what the
// recovery's fences made durable), and each of its images is an image of
// base with those words copied in. For a large region an image so costs
// what copy-on-write costs, not a copy of the region.
type overlayStore struct {
	base  imageStore
	media []byte  // from base.get, changed at words
	words []int32 // words where media may differ from base (repeats allowed)
}

func (s *overlayStore) get() ([]byte, error) {
	b, err := s.base.get()
	if err != nil {
		return nil, err
	}
	bw, mw := words(b), words(s.media)
	for _, w := range s.words {
		bw[w] = mw[w]
	}
	return b, nil
}

func (s *overlayStore) put(b []byte) { s.base.put(b) }

func (s *overlayStore) close() {
	if s.media != nil {
		s.base.put(s.media)
		s.media = nil
	}
}

// wrote notes that media word w was written.
func (s *overlayStore) wrote(w int) { s.words = append(s.words, int32(w)) }
