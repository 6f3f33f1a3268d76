package pagelog

// variant selects a deliberately wrong ordering. Only tests set it, to show
// that the crash simulator catches each mistake (export_test.go).
type variant uint8

const (
	correct variant = iota
	// brokenPVNFirst stores the version number before the page id
	// (TwoWord): the new version briefly names the slot's previous page.
	brokenPVNFirst
	// brokenNoPayloadFence does not wait for the payload before storing
	// the header: header and payload become durable at one fence, in no
	// particular order.
	brokenNoPayloadFence
	// brokenInPlaceFirst stores a micro-log write's lines in place before
	// its log entry is durable.
	brokenInPlaceFirst
	// brokenReplayStale makes recovery replay every micro-log entry into
	// its page's current slot, also entries of versions the page has left.
	brokenReplayStale
	// brokenNoSettle empties a micro log (wrap, reset) without first
	// writing back the in-place lines its entries protect.
	brokenNoSettle
	// brokenNoWrapReset never empties a Packed micro log before a version
	// could wrap around: an old entry can match its page's version again.
	brokenNoWrapReset
	// brokenNoBackupFence starts the in-place write of a Checksum page
	// before its backup is durable.
	brokenNoBackupFence
	// brokenLateCRC stores the payload CRC word after the commit word
	// (payload CRCs): a crash can leave the new version's header with
	// the old CRC.
	brokenLateCRC
	// brokenNoLaneAffinity makes recovery hand out the free slots in slot
	// order instead of giving a slot with an old version back to its
	// page's lane (Packed): an old version can then outlive 2^verBits
	// writes of its page and look newer than the current one.
	brokenNoLaneAffinity
	// brokenZeroSuper makes Create invalidate the old superblocks by
	// zeroing their magics instead of marking them "being created": a
	// crash during Create over a store leaves zeroed superblocks over its
	// bytes, which Open reports as a damaged store, not "no store".
	brokenZeroSuper
	// brokenReuseSpare keeps a slot on poisoned media as its lane's spare
	// (media.go): the lane's next copy-on-write write stores a page
	// where it cannot be read back (on real PMem, where stores to poison
	// need not fault, an acknowledged page lost).
	brokenReuseSpare
)
