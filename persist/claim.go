package persist

import "fmt"

// A claim is an area of a region in use by an open structure.
type claim struct {
	off, end int
	owner    string
	id       uint64
}

// Claim marks the bytes [off, off+n) of the region as used by owner (a
// short description such as "walog log") until the returned release is
// called; release is idempotent. A claim that overlaps one not yet
// released fails with an error wrapping ErrBusy that names both.
//
// Structures claim their area in Create and Open and release it in Close,
// so that a second structure opened on bytes the first still uses — which
// would overwrite what the first acknowledged as durable — is an error
// instead. A claim lives in this Region value only: it does not see other
// Region values mapping the same file, nor other processes. Close releases
// every claim of the region. An area that is out of range or empty is an
// error wrapping ErrRange or ErrInvalid.
func (r *Region) Claim(off, n int, owner string) (release func(), err error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if n <= 0 {
		return nil, fmt.Errorf("%w: claim of %d bytes", ErrInvalid, n)
	}
	if off < 0 || off > r.size || n > r.size-off {
		return nil, fmt.Errorf("%w: claim of %d bytes at offset %d of a %d-byte region", ErrRange, n, off, r.size)
	}
	r.claimMu.Lock()
	defer r.claimMu.Unlock()
	end := off + n
	for _, c := range r.claims {
		if off < c.end && c.off < end {
			return nil, fmt.Errorf("%w: %s at bytes %d..%d overlaps %s at %d..%d (close it first)", ErrBusy, owner, off, end, c.owner, c.off, c.end)
		}
	}
	r.claimN++
	id := r.claimN
	r.claims = append(r.claims, claim{off: off, end: end, owner: owner, id: id})
	return func() { r.unclaim(id) }, nil
}

func (r *Region) unclaim(id uint64) {
	r.claimMu.Lock()
	defer r.claimMu.Unlock()
	for i, c := range r.claims {
		if c.id == id {
			r.claims = append(r.claims[:i], r.claims[i+1:]...)
			return
		}
	}
}
