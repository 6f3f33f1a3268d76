//go:build !linux

package main

// onTmpfs: tmpfs is Linux's; elsewhere -pmem auto means msync.
func onTmpfs(string) bool { return false }
