// Package pagelog propagates fixed-size pages from DRAM to persistent memory
// failure-atomically: after a crash every page is either its old or its new
// version, never a mix. It is the page-flush building block of van Renen et
// al., "Building blocks for persistent memory" (VLDB J. 2020, section 3.2):
// what a buffer manager needs to evict dirty pages to PMem.
//
// A Store lives in a persist.Region. Create formats one (page size, page
// count and slot count go into its superblock); Open recovers one. Pages
// have ids 0..Pages()-1 and start as zeros.
//
// # Guarantees
//
//   - Write(pid, page): when it returns nil, the new version of the page is
//     durable. If a crash comes first, recovery finds the old version or
//     the new one, whole.
//   - WriteLines(pid, page, dirty): the same, for a page of which only the
//     marked cache lines changed.
//   - Read(pid, buf) returns the last version written (acknowledged or
//     being written concurrently, never a mix of two).
//   - Open recovers after any crash, including a crash during an earlier
//     Open: nothing acknowledged is lost, nothing torn is returned.
//   - Concurrency: all methods may be called from many goroutines. Page p
//     is written on lane p mod Lanes(); operations on one lane serialize
//     (so writes to the same page are ordered, the later one wins), those
//     on different lanes run in parallel. Lanes() = Slots()-Pages(), the
//     number of spare slots. Close waits for the operations in flight.
//   - Bad input (a pid out of range, a buffer of the wrong size, a bad
//     mask, options that do not fit the region) is an error wrapping a
//     sentinel of this package. Nothing panics.
//   - Regions: Create needs a writable region (else ErrReadOnly, which
//     wraps persist.ErrReadOnly). Open on a read-only region gives a store
//     for Read and Check as long as recovery has nothing to write, and
//     ErrReadOnly otherwise; writes to it are ErrReadOnly. A closed region
//     is an error wrapping persist.ErrClosed. Close a store before its
//     region: an operation that starts after the region was closed returns
//     persist.ErrClosed, but closing the region while one runs unmaps its
//     memory under it.
//
// # Corruption
//
// Bytes damaged after they were written (a media error, a stray write) are
// reported as errors wrapping ErrCorrupt, and so persist.ErrCorrupt, never
// returned as data:
//
//   - The superblock carries a CRC32C. Every word of a copy-on-write slot
//     header is sealed: 48 bits of data and a CRC-16 of them in the same
//     8-byte word, still written with one failure-atomic store. Every
//     damage of up to 5 bits or confined to two adjacent bytes of a word is
//     detected, other damage with probability 1-2^-16. Open decodes every
//     header and checks what a crash can leave (each page one slot, or two
//     with consecutive versions; every lane one spare), so a damaged header
//     is an error of Open.
//   - The micro logs are walog PopLogs: a checked header, and a CRC-32C in
//     every entry, verified by Open before the entry is decoded and
//     replayed. Damage to a log's last entry that looks exactly like an
//     append torn by a crash drops that entry (its lines were in place
//     already, unless the crash came too); any other damage is an error.
//   - Payloads: with Options.PayloadCRC, a copy-on-write store keeps a
//     CRC32C of every page version (over the payload and the page id),
//     written before the header that makes the version current; Read
//     verifies it, and Open verifies every page (unless Options.SkipScan).
//     The Checksum layout always does. Without PayloadCRC (the default),
//     damage to the payload of a copy-on-write store is not detected:
//     Read returns the damaged bytes. PayloadCRC costs a CRC32C of the
//     page on every write and read, +40-60% on a 4 KiB page write here
//     (see the README), which is why it is not the default.
//   - Checksum layout: a damaged page or home header whose lane's backup
//     holds the same version is repaired from the backup by Open, as it
//     would be after a torn write (Recovery().Restored); otherwise it is
//     an error. A damaged backup is ignored, like one torn by a crash.
//
// # Layouts
//
// The region holds, in order: the superblock (4 KiB, of which 64 bytes are
// used: magic, format version, layout, page size, pid bits, page and slot
// counts, flags, CRC32C), the slot header table, the lanes' micro logs
// (copy-on-write layouts only), and Slots() page-sized payload slots, each
// page-aligned relative to the region.
//
// Copy-on-write (Packed, TwoWord). There are more slots than pages; each
// page is current in one slot, and each lane owns one spare. A write copies
// the page into its lane's spare with streaming stores (and, with
// PayloadCRC, streams the page's CRC word into the spare's header) and
// fences (barrier 1), then makes that slot current by writing its header:
// the page id (pid) and a page version number (pvn) one higher than the
// page's current one. The previous slot of the page becomes the lane's
// spare. Recovery reads every header and takes, for each page, the slot
// with the newer version.
//
//   - Packed (the default): pid, pvn and the check code share one 8-byte
//     word, written with one aligned 8-byte streaming store and a fence
//     (barrier 2): failure-atomic like Store64, and faster here than
//     Store64 + flush + fence. Safe when only aligned 8-byte stores are
//     atomic, which is all braid assumes. The pvn has 47-pidBits bits and
//     counts modulo 2^(47-pidBits), so it never runs out: a page has at
//     most two slots naming it, one version apart — its current slot and
//     the one its last write left as its lane's spare. Recovery keeps it
//     so by giving every slot that holds an old version back to the lane
//     of its page.
//   - TwoWord: the paper's header, pid and pvn in two words of one cache
//     line. The pid must be stored strictly before the pvn: a pvn that
//     became durable with the slot's previous pid would make this payload
//     the newest version of that other page. With a flush and a fence
//     between the two stores (three barriers) this is safe under 8-byte
//     atomicity. With only a fence between them (Options.FenceOnly, the
//     paper's cheaper variant) it is safe only if cache lines are written
//     back whole: the crash simulator in line-atomic mode passes it, in the
//     default word-atomic mode it finds the pvn on the media without the
//     pid. TwoWord versions only grow; a page that reaches 2^47-2 of them
//     gets ErrVersionExhausted.
//
// Micro log (WriteLines with few dirty lines, copy-on-write layouts). Each
// lane has a walog PopLog (Options.MicroLogBytes, 64 KiB by default). A
// write appends a redo entry — the page id, the slot and version it
// applies to, the page's new CRC word with PayloadCRC, the dirty-line mask
// and the dirty lines — with one barrier; it is durable from there. Then
// the dirty lines (and the CRC word) are stored in place, in the page's
// current slot, with streaming stores and no fence of their own. Entries
// accumulate; a full log wraps (walog's Checkpoint, then Reset) after a
// fence has made the lines in place durable. Recovery replays, in order,
// every entry whose slot and version are still its page's current ones
// (idempotent), and skips the others: a copy-on-write write of the page
// since made them stale. Because Packed versions wrap, a lane empties its
// log before a copy-on-write write that could bring a page back to the
// slot and version of an old entry (never with the default pid bits, every
// 2^(47-pidBits) writes of a lane otherwise).
//
// Checksum. Page p lives in place in slot p, with a header holding its
// version (seq) and the CRC32C of pid, seq and payload; slot Pages()+l is
// the backup of lane l. A write copies the new page and its checksummed
// header to the backup and persists it (barrier 1), then writes page and
// header in place and persists them (barrier 2). A crash can tear only the
// page being written in place, whose backup is then complete: recovery
// finds the CRC mismatch and copies the backup back. Read verifies the CRC.
// Each page is written twice, so this layout is slower than copy-on-write
// (see the README), as the paper found.
package pagelog
