package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/braid-pm/braid/internal/cli"
	"github.com/braid-pm/braid/kv"
)

// storeFlags name a store and how to open it; every command has them
// (pmkv's persistent flags).
type storeFlags struct {
	dir, devices, checkpoint string
	ndev                     int
	workers, queue           int
	batch                    byteSize
	noBatch, ordered         bool
	segment, deviceSize      byteSize
	maxKey, maxValue         int
	valueLimit               string    // where maxValue comes from, for messages
	stderr                   io.Writer // where progress bars and notes go
	made                     []string  // directories options made (unmake)
	pmem                     string
	device                   string // -device (else BRAID_DEVICE)
	progress                 cli.Progress
	emulated                 string         // the emulated device's name, once opened
	fs                       *pflag.FlagSet // where they were declared: which were given
}

func (f *storeFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.dir, "dir", "", "the store: devices DIR/dev0..N-1, checkpoints in DIR/ckpt")
	fs.StringVar(&f.devices, "devices", "", "comma-separated device directories (instead of -dir; with -checkpoint)")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint directory (with -devices)")
	fs.IntVar(&f.ndev, "ndev", 0, "devices under -dir, 0 to 64 (0: the DIR/dev* there, else 1)")
	fs.IntVar(&f.workers, "workers", 0, "workers per device (0: from the device profile)")
	fs.IntVar(&f.queue, "queue", 0, "requests queued per worker (0: kv's default)")
	sizeVar(fs, &f.batch, "batch", "batch threshold in log bytes (0: kv's default)")
	fs.BoolVar(&f.noBatch, "nobatch", false, "one fence per put (batching off)")
	fs.BoolVar(&f.ordered, "ordered", true, "keep the ordered index (scan needs it)")
	sizeVar(fs, &f.segment, "segment", "log segment size (0: kv's default, 64MiB)")
	sizeVar(fs, &f.deviceSize, "device-size", "the most bytes a device may take; segment files are added as data arrives (0: kv's default, 1GiB, or what is there)")
	fs.IntVar(&f.maxKey, "maxkey", 0, "largest key in bytes (0: kv's default, 1024)")
	fs.IntVar(&f.maxValue, "maxvalue", 0, "largest value in bytes (0: 1MiB, or less with small segments: a quarter of -segment less -maxkey)")
	fs.StringVar(&f.pmem, "pmem", "auto", "map segments on the PMem instruction path: auto (on tmpfs), on, off (msync)")
	fs.StringVar(&f.device, "device", "", "emulate each device as one of: "+cli.DeviceNames()+", or a profile file with a model (default: $BRAID_DEVICE)")
	fs.Var(&f.progress, "progress", cli.ProgressUsage)
	fs.Lookup("progress").DefValue = "auto"
}

// sizeVar declares a size flag whose default, 0, means the store's.
func sizeVar(fs *pflag.FlagSet, p *byteSize, name, usage string) {
	fs.Var(p, name, usage)
	fs.Lookup(name).DefValue = "0"
}

// given reports whether the store flag name was on the command line.
func (f *storeFlags) given(name string) bool { return f.fs != nil && f.fs.Changed(name) }

// emulate puts the emulated device of -device (else BRAID_DEVICE) into o:
// kv makes one device of that profile per device directory, so that
// devices add up as real ones do.
func (f *storeFlags) emulate(o *kv.Options) error {
	d, err := cli.Device(f.device, nil)
	if err != nil || d == nil {
		return err
	}
	if d.Emulating() {
		p := d.Profile()
		o.Emulate = &p
		f.emulated = d.Name()
	}
	return nil
}

// limits checks -segment and resolves -maxkey and -maxvalue (called once
// flags are parsed), so that a key or value is judged against the limits
// the store will have, and the message says where a limit comes from.
func (f *storeFlags) limits() error {
	seg := int64(f.segment)
	switch {
	case seg != 0 && (seg%4096 != 0 || seg < kv.MinSegmentSize || seg > kv.MaxSegmentSize):
		return usagef("-segment %s: want 0 (kv's default, 64 MiB) or a multiple of 4 KiB from 4 KiB to 2 GiB", cli.FormatSize(seg))
	case f.maxKey < 0 || f.maxKey > kv.MaxKeyLimit:
		return usagef("-maxkey %d: want 0 (kv's default, 1024) to %d", f.maxKey, kv.MaxKeyLimit)
	case f.maxValue < 0:
		return usagef("-maxvalue %d: want 0 (kv's default) or more", f.maxValue)
	}
	if seg == 0 {
		seg = kv.DefaultSegmentSize
	}
	if f.maxKey == 0 {
		f.maxKey = kv.DefaultMaxKey
	}
	f.valueLimit = "-maxvalue"
	if f.maxValue == 0 {
		room := seg/4 - int64(f.maxKey)
		if room < 1 {
			return usagef("-segment %s leaves no room for values beside %d-byte keys (-maxkey): a key and its value take at most a quarter of a segment; give a larger -segment or a smaller -maxkey",
				cli.FormatSize(seg), f.maxKey)
		}
		f.maxValue = int(min(kv.DefaultMaxValue, room))
		if f.maxValue < kv.DefaultMaxValue {
			f.valueLimit = fmt.Sprintf("-maxvalue 0 with -segment %s: a quarter of the segment less -maxkey %d", cli.FormatSize(seg), f.maxKey)
		}
	}
	return nil
}

// kvFlags names pmkv's flags for kv.Options' fields in Validate's
// messages.
var kvFlags = strings.NewReplacer("WorkersPerDevice", "-workers", "DeviceSize", "-device-size", "SegmentSize", "-segment",
	"MaxKey", "-maxkey", "MaxValue", "-maxvalue", "QueueDepth", "-queue", "BatchBytes", "-batch", "invalid argument: ", "")

// options resolves the flags into kv.Options. With create, missing
// directories are made (the store is created on empty devices); without,
// the store must exist. Every problem is a usage error, found before the
// store is opened.
func (f *storeFlags) options(create bool) (*kv.Options, error) {
	var devs []string
	ckpt := f.checkpoint
	switch {
	case f.dir != "" && f.devices != "":
		return nil, usagef("-dir and -devices: give one of them")
	case f.dir == "" && f.devices == "":
		return nil, usagef("no store given: use -dir DIR (or -devices D1,D2 -checkpoint C)")
	case f.ndev < 0 || f.ndev > 64:
		return nil, usagef("-ndev %d: want 0 (what is there) to 64", f.ndev)
	case f.dir != "":
		if ckpt != "" {
			return nil, usagef("-checkpoint goes with -devices; with -dir it is DIR/ckpt")
		}
		if err := checkDir("-dir ", f.dir, create); err != nil {
			return nil, err
		}
		n := f.ndev
		if n == 0 {
			n = countDevices(f.dir)
		}
		for i := range n {
			devs = append(devs, filepath.Join(f.dir, "dev"+strconv.Itoa(i)))
		}
		ckpt = filepath.Join(f.dir, "ckpt")
	default:
		if ckpt == "" {
			return nil, usagef("-devices needs -checkpoint DIR")
		}
		for _, d := range strings.Split(f.devices, ",") {
			if d = strings.TrimSpace(d); d == "" {
				return nil, usagef("-devices %q: an empty device name", f.devices)
			}
			devs = append(devs, d)
		}
	}
	for _, d := range append(devs, ckpt) {
		if err := checkDir("", d, create); err != nil {
			return nil, err
		}
	}
	if !create && !hasFiles(devs[0]) {
		return nil, usagef("no store in %s (create one with pmkv put, load or bench)", strings.Join(devs, ", "))
	}
	o := &kv.Options{Devices: devs, CheckpointDir: ckpt, WorkersPerDevice: f.workers, QueueDepth: f.queue,
		BatchBytes: int(f.batch), NoBatching: f.noBatch, SegmentSize: int64(f.segment), DeviceSize: int64(f.deviceSize),
		OrderedIndex: f.ordered, MaxKey: f.maxKey, MaxValue: f.maxValue}
	switch f.pmem {
	case "on":
		o.PMem = true
	case "off":
	case "auto":
		o.PMem = onTmpfs(devs[0])
	default:
		return nil, usagef("-pmem %q: want auto, on or off", f.pmem)
	}
	if err := f.emulate(o); err != nil {
		return nil, err
	}
	o.Progress = f.kvProgress()
	if err := o.Validate(); err != nil {
		return nil, cli.UsageError{Msg: kvFlags.Replace(strings.TrimPrefix(err.Error(), "kv: ")), Err: err}
	}
	if create {
		for _, d := range append(devs, ckpt) {
			if err := f.mkdirs(d); err != nil {
				return nil, usagef("%s: %v", d, pathErr(err))
			}
		}
	}
	return o, nil
}

// mkdirs makes dir and its missing parents, remembering which it made.
func (f *storeFlags) mkdirs(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		f.made = append(f.made, missing[i])
	}
	return nil
}

// unmake removes the directories options made, newest first, when the
// store could not be created in them (kv removed its files): a failed
// create leaves nothing behind. A directory that is not empty stays.
func (f *storeFlags) unmake() {
	for i := len(f.made) - 1; i >= 0; i-- {
		_ = os.Remove(f.made[i])
	}
	f.made = nil
}

// checkDir: dir is a directory, or (create) does not exist yet but can be
// made (its nearest existing parent is a directory).
func checkDir(what, dir string, create bool) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return usagef("%s%s is not a directory (a store is a directory)", what, dir)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return usagef("%s%s: %v", what, dir, pathErr(err))
	case !create:
		return usagef("%s%s: no such directory (no store there)", what, dir)
	}
	parent := filepath.Dir(dir)
	for parent != filepath.Dir(parent) {
		if st, err := os.Stat(parent); err == nil {
			if !st.IsDir() {
				return usagef("%s%s: %s is not a directory", what, dir, parent)
			}
			return nil
		}
		parent = filepath.Dir(parent)
	}
	return nil
}

// countDevices is how many DIR/dev0, dev1, ... exist (at least 1).
func countDevices(dir string) int {
	n := 0
	for {
		if st, err := os.Stat(filepath.Join(dir, "dev"+strconv.Itoa(n))); err != nil || !st.IsDir() {
			break
		}
		n++
	}
	return max(n, 1)
}

func hasFiles(dir string) bool {
	es, err := os.ReadDir(dir)
	return err == nil && len(es) > 0
}

func pathErr(err error) error { return cli.PathErr(err) }

// store is what the commands use of a kv.Store.
type store interface {
	Put(key, value []byte) error
	Get(key []byte) ([]byte, error)
	Delete(key []byte) error
	Scan(from, to []byte, fn func(key, value []byte) bool) error
	Checkpoint() error
	GC() (kv.GCReport, error)
	Stats() kv.Stats
	Recovery() kv.RecoveryReport
	Check() error
	Close() error
	// PutAsync queues a put; done is called once it is durable.
	PutAsync(key, value []byte, done func(kv.Token, error)) error
	// apply makes every op durable before it returns (kv.Store.Apply).
	apply(ops []op) error
}

// op is one put or delete of an apply.
type op struct {
	key, value []byte
	del        bool
}

type kvStore struct{ *kv.Store }

func (s kvStore) apply(ops []op) error {
	var b kv.Batch
	for _, o := range ops {
		if o.del {
			b.Delete(o.key)
		} else {
			b.Put(o.key, o.value)
		}
	}
	return s.Apply(&b)
}

// openStore opens the store (a variable for the tests' stand-in while kv
// is being written).
var openStore = func(o *kv.Options) (store, error) {
	s, err := kv.Open(o)
	if err != nil {
		return nil, err
	}
	return kvStore{s}, nil
}

// getter is what a lookup command uses of a kv.Reader.
type getter interface {
	Get(key []byte) ([]byte, error)
	Close() error
}

// openReader opens the store for point reads (a variable, as openStore).
var openReader = func(o *kv.Options) (getter, error) {
	r, err := kv.OpenReader(o)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func createFile(path string) (*os.File, error) { return os.Create(path) }
