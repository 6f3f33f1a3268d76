package fam

import "github.com/braid-pm/braid/persist"

// Poisoned media (issue 18). Every operation of both arrays runs under
// persist.Guard: a load or store of poisoned media, or of a file
// truncated under its mapping, is a *persist.MediaError (errors.Is
// persist.ErrMedia, and ErrCorrupt) naming the range, not a dead process.
// Recovery guards object by object (lane by lane) and goes on past what
// it cannot read, so a poisoned page costs the objects (or the lane) on
// it, never the array; a poisoned header costs the array (Open is
// ErrMedia).

// guard runs fn under persist.Guard.
func guard(r *persist.Region, fn func() error) error { return persist.Guard(fn, r) }

// Unreadable returns the number of objects Open's recovery could not read:
// they lie on poisoned media (their Read is persist.ErrMedia). The others
// were recovered.
func (a *Array) Unreadable() int { return a.lost }

// Poisoned returns the ranges of the array's bytes (header and objects)
// that its region knows to be unreadable, clipped to them: the bad blocks
// the device listed when the file was mapped (persist.Info.Poisoned) and
// pages poisoned by a test (persist.Region.Poison). The objects there
// are persist.ErrMedia; a nil result does not promise that the rest
// reads (media can go bad without the device listing it yet).
func (a *Array) Poisoned() []persist.Range { return a.r.PoisonedIn(a.off, a.end-a.off) }

// Unreadable returns what OpenLog's recovery could not read: the lanes
// whose redo log is on poisoned media (updates of their objects then fail
// with persist.ErrMedia) and the records it could not replay because
// their object is (the object's Read is ErrMedia). Everything else was
// recovered.
func (a *LogArray) Unreadable() int { return a.lost }

// Poisoned is Array.Poisoned for the log-based array: its header, lanes
// and objects.
func (a *LogArray) Poisoned() []persist.Range { return a.r.PoisonedIn(a.off, a.end-a.off) }
