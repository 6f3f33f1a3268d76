package cow

import "github.com/braid-pm/braid/persist"

// Poisoned media (issue 18). Every operation runs under persist.Guard: a
// load or store of poisoned media, or of a file truncated under its
// mapping, is a *persist.MediaError (errors.Is persist.ErrMedia, and
// ErrCorrupt) naming the range, not a dead process. Open reads the header
// only, so a poisoned page costs the objects on it (their Read, Update and
// Updates are ErrMedia, Check reports the first), and a poisoned header
// costs the array (Open is ErrMedia).

// guard runs fn under persist.Guard.
func guard(r *persist.Region, fn func() error) error { return persist.Guard(fn, r) }

// Poisoned returns the ranges of the array's bytes (header and slots)
// that its region knows to be unreadable, clipped to them: the bad blocks
// the device listed when the file was mapped (persist.Info.Poisoned) and
// pages poisoned by a test (persist.Region.Poison). The objects there
// are persist.ErrMedia; a nil result does not promise that the rest
// reads (media can go bad without the device listing it yet).
func (a *Array) Poisoned() []persist.Range { return a.r.PoisonedIn(a.off, a.end-a.off) }
