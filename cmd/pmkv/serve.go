package main

import (
	"context"
	"io"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return usagef("serve: not yet")
}
