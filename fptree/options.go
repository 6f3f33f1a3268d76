package fptree

import (
	"fmt"
	"math"

	"github.com/braid-pm/braid/coro"
)

// Limits and defaults.
const (
	// MinLeafSlots and MaxLeafSlots bound Options.LeafSlots: a leaf's
	// bitmap is one 64-bit word.
	MinLeafSlots = 4
	MaxLeafSlots = 64
	// DefaultLeafSlots is the leaf size when Options.LeafSlots is 0:
	// FPTree's 64 (a sweep by benchmark is still to be run; README).
	DefaultLeafSlots = 64
	// DefaultGroup is how many operations GetBatch and PutBatch
	// interleave when Options.Group is 0, chosen by BenchmarkGroupSize.
	DefaultGroup = 8
	// MaxLeaves bounds the leaves of a tree: leaf numbers are 32-bit.
	MaxLeaves = math.MaxUint32
)

// Options configure Create and Open. A nil *Options means the defaults.
//
// LeafSlots and Leaves are persistent: Create writes them into the header.
// At Open they may be 0, which means whatever the tree has; a non-zero
// value that differs from the tree's is an error. Offset says where the
// tree is; Size is its area (Create) or, at Open, 0 or the size the header
// implies; Group only affects this process.
type Options struct {
	// Offset of the tree's area in the region: a multiple of 64.
	Offset int
	// Size of the area in bytes. Create: 0 means Footprint of Leaves when
	// Leaves is set, else the rest of the region, and the leaves are as
	// many as the area holds. Open: 0 means what the header says.
	Size int
	// Leaves is the tree's capacity in leaves (2 or more); 0 means as
	// many as Size holds. A tree of n keys needs about n/(0.7·LeafSlots)
	// leaves when the keys arrive in random order and up to
	// 2n/LeafSlots when they arrive sorted (a split leaves half a leaf
	// behind); deletes free a leaf only when it is empty.
	Leaves int
	// LeafSlots is the number of key/value slots of a leaf, from
	// MinLeafSlots to MaxLeafSlots; 0 means DefaultLeafSlots. Tests use
	// 4, so that most inserts split.
	LeafSlots int
	// Group is how many lookups GetBatch, and inserts PutBatch, run
	// interleaved: 1 to coro.MaxGroup, 0 means DefaultGroup.
	Group int
}

// Validate reports the first problem with the options, wrapping
// ErrInvalid.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	switch {
	case o.Offset < 0 || o.Offset%64 != 0:
		return fmt.Errorf("%w: Offset %d is not a non-negative multiple of 64", ErrInvalid, o.Offset)
	case o.Size < 0:
		return fmt.Errorf("%w: Size %d is negative: want 0 (the rest of the region, or what the header says) or a byte count", ErrInvalid, o.Size)
	case o.Leaves < 0 || o.Leaves == 1 || uint64(o.Leaves) > MaxLeaves:
		return fmt.Errorf("%w: Leaves %d: want 0 (as many as fit) or 2 to %d", ErrInvalid, o.Leaves, uint64(MaxLeaves))
	case o.LeafSlots != 0 && (o.LeafSlots < MinLeafSlots || o.LeafSlots > MaxLeafSlots):
		return fmt.Errorf("%w: LeafSlots %d: want 0 (the default, %d) or %d to %d", ErrInvalid, o.LeafSlots, DefaultLeafSlots, MinLeafSlots, MaxLeafSlots)
	case o.Group < 0 || o.Group > coro.MaxGroup:
		return fmt.Errorf("%w: Group %d: want 0 (the default, %d) or 1 to %d", ErrInvalid, o.Group, DefaultGroup, coro.MaxGroup)
	}
	if o.Leaves > 0 && o.Size > 0 {
		need, err := Footprint(o)
		if err != nil {
			return err
		}
		if o.Size < need {
			return fmt.Errorf("%w: Size %d is less than the %d bytes %d leaves of %d slots take", ErrInvalid, o.Size, need, o.Leaves, o.slots())
		}
	}
	return nil
}

func (o *Options) slots() int {
	if o == nil || o.LeafSlots == 0 {
		return DefaultLeafSlots
	}
	return o.LeafSlots
}

func (o *Options) group() int {
	if o == nil || o.Group == 0 {
		return DefaultGroup
	}
	return o.Group
}

// Footprint returns the bytes of the area a tree of opts.Leaves leaves of
// opts.LeafSlots slots takes: the header line, the log line and the
// leaves. Leaves must be set (the capacity; Size is not consulted).
func Footprint(opts *Options) (int, error) {
	if opts == nil || opts.Leaves == 0 {
		return 0, fmt.Errorf("%w: Footprint needs Options.Leaves", ErrInvalid)
	}
	o := *opts
	o.Size = 0
	if err := o.Validate(); err != nil {
		return 0, err
	}
	g := geometry(o.slots())
	if uint64(o.Leaves) > uint64(math.MaxInt-leavesOff)/uint64(g.stride) {
		return 0, fmt.Errorf("%w: %d leaves of %d bytes do not fit in an int", ErrInvalid, o.Leaves, g.stride)
	}
	return leavesOff + o.Leaves*g.stride, nil
}
