package persist

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/braid-pm/braid/asm"
)

// Info describes a region: what it is mapped on and which instructions make
// its stores durable. Print it (String) so users can see what runs.
type Info struct {
	Path      string     // file path; "" for anonymous and simulated regions
	Size      int        // bytes mapped
	Mapping   string     // "dax" (MAP_SYNC), "shared", "anonymous" or "simulated"
	PMem      bool       // MAP_SYNC accepted: real persistent memory
	Forced    bool       // PMem path forced on a mapping that is not PMem
	Volatile  bool       // nothing survives a power failure (anonymous, tmpfs)
	Poisoned  []Range    // ranges known unreadable: the device's bad blocks at Map, pages poisoned (Region.Poisoned)
	EADR      bool       // platform reports CPU caches inside the persistence domain
	Mode      Mode       // how stores are made durable
	Flush     FlushInstr // flush instruction (ModeFlush only)
	NT        string     // streaming-store path: "avx512", "avx2", "sse2", "off"
	Threshold int        // Copy/Set use streaming stores from this many bytes (0 when NT is off)
	ReadOnly  bool
	Prealloc  bool   // every block allocated up front (no SIGBUS on a full disk)
	Closed    bool   // the region was closed (Info taken after Close)
	Counters  bool   // the region counts its media traffic (Options.Counters)
	Device    string // the emulated device it charges (Options.Device, BRAID_DEVICE); "" for none
}

func (i Info) String() string {
	var b strings.Builder
	name := i.Path
	if name == "" {
		name = i.Mapping
	}
	fmt.Fprintf(&b, "%s: %s, mapping=%s", name, FormatSize(int64(i.Size)), i.Mapping)
	switch {
	case i.PMem:
		b.WriteString(" (PMem)")
	case i.Forced:
		b.WriteString(" (PMem path forced)")
	}
	if i.Volatile {
		b.WriteString(" volatile")
	}
	switch i.Mode {
	case ModeFlush:
		fmt.Fprintf(&b, ", durability=%s+sfence", i.Flush)
	case ModeEADR:
		b.WriteString(", durability=sfence only (eADR)")
	case ModeMsync:
		b.WriteString(", durability=msync")
	}
	if i.NT == "off" {
		b.WriteString(", streaming stores off")
	} else {
		fmt.Fprintf(&b, ", streaming stores=%s from %d B", i.NT, i.Threshold)
	}
	if i.ReadOnly {
		b.WriteString(", read-only")
	}
	if len(i.Poisoned) > 0 {
		var n int64
		for _, g := range i.Poisoned {
			n += g.Len()
		}
		fmt.Fprintf(&b, ", %d poisoned ranges (%s)", len(i.Poisoned), FormatSize(n))
	}
	if i.Counters {
		b.WriteString(", traffic counted")
	}
	if i.Device != "" {
		fmt.Fprintf(&b, ", emulating device %s", i.Device)
	}
	if i.Closed {
		b.WriteString(", closed")
	}
	return b.String()
}

// FormatSize prints n in the largest binary unit that divides it ("64 MiB",
// "4097 B"): how Info and the commands print sizes.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// newRegion fills the parts common to every region kind.
func newRegion(mem []byte, mode Mode, c config, info Info) *Region {
	r := &Region{mem: mem, size: len(mem), mode: mode, ntMin: c.ntMin, ntOff: asm.NTPath() == "none", faults: c.faults}
	if len(mem) > 0 {
		r.base = uintptr(ptrOf(mem))
	}
	switch mode {
	case ModeEADR:
		r.kind = kEADR
	case ModeMsync:
		r.kind = kMsync
	default:
		switch c.flush {
		case FlushCLWB:
			r.kind = kCLWB
		case FlushCLFLUSHOPT:
			r.kind = kCLFLUSHOPT
		default:
			r.kind = kCLFLUSH
		}
	}
	r.fastNT = r.kind <= kEADR && !r.ntOff
	info.Size = len(mem)
	info.Mode = mode
	if mode == ModeFlush {
		info.Flush = c.flush
	}
	info.NT = asm.NTPath()
	info.Threshold = c.ntMin
	if c.ntOff || mode == ModeMsync {
		info.NT, info.Threshold = "off", 0
	}
	r.info = info
	if c.count {
		r.count()
	}
	r.emulate(c.dev)
	return r
}

// eadrGlob names the files in which Linux says where each NVDIMM region's
// persistence domain ends.
const eadrGlob = "/sys/bus/nd/devices/region*/persistence_domain"

// platformEADR reports whether every NVDIMM region the kernel knows has its
// persistence domain in the CPU caches (Linux: persistence_domain reads
// "cpu_cache"; "memory_controller" is ADR, where lines must be flushed).
// It is false when there are none. glob is eadrGlob, or a test's tree.
func platformEADR(glob string) bool {
	files, _ := filepath.Glob(glob)
	if len(files) == 0 {
		return false
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || strings.TrimSpace(string(b)) != "cpu_cache" {
			return false
		}
	}
	return true
}
