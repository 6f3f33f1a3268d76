package sort

import (
	"fmt"
	"os"

	"github.com/braid-pm/braid/persist"
)

// mapped is a file the sorter reads or writes, mapped with persist. Every
// byte the sorter writes to it goes through Region.Copy with streaming
// stores, so on PMem (or tmpfs with BRAID_FORCE_PMEM=1) the output is
// flushed and fenced by the time put returns; on an ordinary file persist
// falls back to msync of the pages written.
type mapped struct {
	path string
	r    *persist.Region // nil for an empty file
	data []byte
}

// createMapped creates path (which must not exist) with size bytes.
func createMapped(path string, size int64, force bool) (*mapped, error) {
	if size == 0 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		return &mapped{path: path}, f.Close()
	}
	// Preallocated (fallocate: a full file system fails here, never with a
	// SIGBUS later) but not prefaulted: the writer pool faults the pages in
	// as it writes, in parallel, which on tmpfs in a VM costs about half of
	// a single-threaded MAP_POPULATE of the whole file.
	r, err := persist.Map(path, &persist.Options{Size: size, Create: true, Exclusive: true, ForcePMem: force, NoPrefault: true})
	if err != nil {
		return nil, fmt.Errorf("create %s (%d bytes): %w", path, size, err)
	}
	return &mapped{path: path, r: r, data: r.Bytes()}, nil
}

// openMapped maps an existing file read-only.
func openMapped(path string) (*mapped, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() == 0 {
		return &mapped{path: path}, nil
	}
	r, err := persist.Map(path, &persist.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	return &mapped{path: path, r: r, data: r.Bytes()}, nil
}

func (m *mapped) bytes() []byte { return m.data }

// put copies src to offset off of the file with streaming stores and makes
// it durable (one fence per call: calls are chunk-sized).
func (m *mapped) put(off int64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if off < 0 || off+int64(len(src)) > int64(len(m.data)) {
		return fmt.Errorf("sort: write of %d bytes at %d outside %s (%d bytes)", len(src), off, m.path, len(m.data))
	}
	return m.r.Copy(m.data[off:off+int64(len(src))], src, persist.NonTemporal)
}

// sync makes the whole file durable.
func (m *mapped) sync() error {
	if m.r == nil {
		return nil
	}
	return m.r.Sync()
}

// info describes the mapping (which flush path runs).
func (m *mapped) info() string {
	if m.r == nil {
		return m.path + ": empty"
	}
	return m.r.String()
}

func (m *mapped) close() error {
	if m.r == nil {
		return nil
	}
	err := m.r.Close()
	m.r, m.data = nil, nil
	return err
}
