//go:build !unix

package structtest

import "time"

func cpuTime() time.Duration { return 0 }
