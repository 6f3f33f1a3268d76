//go:build !linux

package sort

// renameNoReplace renames tmp to path unless path exists: a hard link and
// an unlink.
func renameNoReplace(tmp, path string) error { return linkRename(tmp, path) }
