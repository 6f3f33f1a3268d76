package kv_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/braid-pm/braid/internal/structtest"
	"github.com/braid-pm/braid/kv"
)

func Example() {
	dir, err := os.MkdirTemp(structtest.ShmDir(), "kv-example-") // /dev/shm, or the temporary directory without it
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	dev := filepath.Join(dir, "dev0") // one directory per PMem device
	if err := os.Mkdir(dev, 0o755); err != nil {
		fmt.Println(err)
		return
	}
	opts := &kv.Options{
		Devices:       []string{dev},
		CheckpointDir: filepath.Join(dir, "ckpt"), // "the disk"
		SegmentSize:   1 << 20,
		DeviceSize:    16 << 20,
		PMem:          true, // the PMem path on tmpfs (as BRAID_FORCE_PMEM=1)
	}
	s, err := kv.Open(opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Put([]byte("hello"), []byte("world")); err != nil { // durable on return
		fmt.Println(err)
		return
	}
	var b kv.Batch
	b.Put([]byte("a"), []byte("1"))
	b.Delete([]byte("hello"))
	if err := s.Apply(&b); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Close(); err != nil { // checkpoints
		fmt.Println(err)
		return
	}

	s, err = kv.Open(opts) // recovers: the checkpoint, then the logs after it
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	v, err := s.Get([]byte("a"))
	fmt.Printf("a=%s %v\n", v, err)
	_, err = s.Get([]byte("hello"))
	fmt.Println(err)
	// Output:
	// a=1 <nil>
	// kv: key not found
}
