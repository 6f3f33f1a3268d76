package device

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// ProfileFormat is the version of the profile JSON this package writes.
// Format 2 added Source and Model (the device model an emulated Device
// runs); a format-1 profile is still read, without a model.
const ProfileFormat = 2

// A Profile is what cmd/pmbench measured on one device: bandwidth and
// latency per access type, size and thread count, and the summary that the
// layers above use to size their thread pools (the BRAID "D" property) and
// to choose when streaming stores pay off.
type Profile struct {
	Format  int    `json:"format"`
	Device  string `json:"device"`  // the file measured
	Mapping string `json:"mapping"` // Info.String() of the region measured
	CPU     string `json:"cpu"`
	Cores   int    `json:"cores"`
	Date    string `json:"date"` // RFC 3339

	SeqRead   Peak `json:"seq_read"`
	RandRead  Peak `json:"rand_read"`
	SeqWrite  Peak `json:"seq_write"` // streaming stores
	RandWrite Peak `json:"rand_write"`

	// Interference is the read bandwidth with concurrent writers divided
	// by the read bandwidth alone, at the same reader count (1 = writes do
	// not disturb reads).
	Interference float64 `json:"interference"`
	// MovntThreshold is the smallest copy size at which streaming stores
	// beat store+flush (bytes).
	MovntThreshold int `json:"movnt_threshold"`
	// PersistNs is the latency of an 8-byte store plus Persist of its line.
	PersistNs float64 `json:"persist_ns"`

	Points []Point `json:"points,omitempty"` // every measurement

	// Source says where the figures come from: the papers of a shipped
	// profile (Shipped), "measured by pmbench" for a measured one.
	Source string `json:"source,omitempty"`
	// Model is the device model that New emulates: bandwidth per
	// access type as a function of the number of concurrent accessors,
	// the internal access granularity and latencies. Nil for a profile
	// without one (format 1, or the dram profile: nothing to emulate).
	Model *Model `json:"model,omitempty"`
}

// Peak summarizes one access type over thread counts.
type Peak struct {
	GBs     float64 `json:"gbs"`     // best bandwidth, GB/s (1e9 bytes)
	Threads int     `json:"threads"` // thread count of the best bandwidth
	Knee    int     `json:"knee"`    // fewest threads within 5% of the best
}

// Point is one measurement.
type Point struct {
	Op      string  `json:"op"`      // read, write, write+flush, write-nt, copy, ...
	Pattern string  `json:"pattern"` // seq, rand, mixed
	Size    int     `json:"size"`    // access size in bytes
	Threads int     `json:"threads"`
	GBs     float64 `json:"gbs"`
	NsPerOp float64 `json:"ns_per_op"`
}

// Validate checks that a profile is usable.
func (p *Profile) Validate() error {
	if p.Format < 1 || p.Format > ProfileFormat {
		return fmt.Errorf("%w: profile format %d, this build reads 1 to %d", ErrInvalid, p.Format, ProfileFormat)
	}
	for name, pk := range map[string]Peak{"seq_read": p.SeqRead, "rand_read": p.RandRead, "seq_write": p.SeqWrite, "rand_write": p.RandWrite} {
		if pk.GBs < 0 || pk.Threads < 0 || pk.Knee < 0 {
			return fmt.Errorf("%w: profile %s has negative figures", ErrInvalid, name)
		}
	}
	if p.MovntThreshold < 0 || p.Interference < 0 {
		return fmt.Errorf("%w: profile has negative movnt_threshold or interference", ErrInvalid)
	}
	if p.Model != nil {
		if p.Format < 2 {
			return fmt.Errorf("%w: profile format %d has no model (format 2 added it)", ErrInvalid, p.Format)
		}
		if err := p.Model.validate(); err != nil {
			return err
		}
	}
	return nil
}

// LoadProfile reads a profile written by pmbench (or Save).
func LoadProfile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("device: read profile: %w", err)
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: profile %s: %v", ErrInvalid, path, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	return &p, nil
}

// Save writes the profile as indented JSON, atomically (temp file, rename).
func (p *Profile) Save(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%w: profile path %s is a directory", ErrInvalid, path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("device: write profile: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	err = errors.Join(werr, f.Close())
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("device: write profile %s: %w", path, err)
	}
	return nil
}

// ReadThreads is the reader pool size to use: the knee of the random or
// sequential read curve (the larger), or the number of CPUs without a
// profile.
func (p *Profile) ReadThreads() int {
	if p == nil || (p.SeqRead.Knee == 0 && p.RandRead.Knee == 0) {
		return runtime.GOMAXPROCS(0)
	}
	return max(p.SeqRead.Knee, p.RandRead.Knee, 1)
}

// WriteThreads is the writer pool size to use: the knee of the sequential
// write curve, or min(4, CPUs) without a profile (PMem write bandwidth
// stops scaling at a few threads).
func (p *Profile) WriteThreads() int {
	if p == nil || p.SeqWrite.Knee == 0 {
		return min(4, runtime.GOMAXPROCS(0))
	}
	return p.SeqWrite.Knee
}
