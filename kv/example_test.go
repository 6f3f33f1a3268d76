package kv_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/braid-pm/braid/kv"
)

func Example() {
	dir, err := os.MkdirTemp("/dev/shm", "kv-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := kv.Open(&kv.Options{
		Devices:       []string{filepath.Join(dir, "dev0")},
		CheckpointDir: filepath.Join(dir, "ckpt"),
		SegmentSize:   1 << 20,
		DeviceSize:    16 << 20,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	if err := s.Put([]byte("hello"), []byte("world")); err != nil {
		fmt.Println(err)
		return
	}
	v, err := s.Get([]byte("hello"))
	fmt.Println(string(v), err)
}
