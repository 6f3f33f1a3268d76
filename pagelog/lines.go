package pagelog

import "math/bits"

// Lines is a dirty-line mask for WriteLines: bit i%64 of word i/64 marks
// the 64-byte line i of a page. A buffer manager keeps one per frame.
type Lines []uint64

// NewLines returns an empty mask for pages of pageSize bytes.
func NewLines(pageSize int) Lines { return make(Lines, (pageSize/lineSize+63)/64) }

// Set marks line i.
func (l Lines) Set(i int) { l[i/64] |= 1 << (i % 64) }

// Has reports whether line i is marked.
func (l Lines) Has(i int) bool { return l[i/64]&(1<<(i%64)) != 0 }

// Mark marks the lines that hold bytes [off, off+n) of the page.
func (l Lines) Mark(off, n int) {
	if n <= 0 {
		return
	}
	for i := off / lineSize; i <= (off+n-1)/lineSize; i++ {
		l.Set(i)
	}
}

// Count returns the number of marked lines.
func (l Lines) Count() int {
	n := 0
	for _, w := range l {
		n += bits.OnesCount64(w)
	}
	return n
}

// Reset clears the mask.
func (l Lines) Reset() { clear(l) }
