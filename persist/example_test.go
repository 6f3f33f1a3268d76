package persist_test

import (
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/braid-pm/braid/persist"
)

// Map a file, store into it, and make the stores durable: Persist for one
// range, Flush of several ranges and one Drain for all of them, Copy that
// stores and persists in one call. On tmpfs (/dev/shm) with ForcePMem the
// instruction path is PMem's; on an ordinary file it is msync.
func Example() {
	dir, err := os.MkdirTemp("", "braid-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	r, err := persist.Map(filepath.Join(dir, "data.pm"), &persist.Options{Size: 1 << 20, Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	b := r.Bytes() // structures keep offsets into it, never pointers

	binary.LittleEndian.PutUint64(b[64:], 42)
	if err := r.Persist(b[64:72]); err != nil { // flush the line, fence
		log.Fatal(err)
	}

	copy(b[4096:], "first")
	copy(b[8192:], "second")
	if err := r.Flush(b[4096:4101]); err != nil { // start the write-backs...
		log.Fatal(err)
	}
	if err := r.Flush(b[8192:8198]); err != nil {
		log.Fatal(err)
	}
	if err := r.Drain(); err != nil { // ...and wait for both with one fence
		log.Fatal(err)
	}

	if err := r.Copy(b[12288:12293], []byte("third"), 0); err != nil { // durable on return
		log.Fatal(err)
	}
	persist.Store64(b[128:], 7) // one failure-atomic 8-byte store: a commit word
	if err := r.Persist(b[128:136]); err != nil {
		log.Fatal(err)
	}

	fmt.Println(binary.LittleEndian.Uint64(b[64:]), string(b[4096:4101]), string(b[8192:8198]), string(b[12288:12293]), persist.Load64(b[128:]))
	// Output: 42 first second third 7
}
