package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/braid-pm/braid/bench/raftpeers"
)

type results struct {
	micro   []microResult
	cluster []clusterResult
}

// med is the median over rounds of f.
func med[T any](rs []T, f func(T) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return median(xs)
}

func report(c config, peers []raftpeers.Peer, res map[string]*results) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Printf("\nmedians of %d rounds, %d-byte entries\n", c.rounds, c.size)
	if !c.noMicro {
		fmt.Fprint(w, "store\t")
		for _, b := range c.batches {
			fmt.Fprintf(w, "StoreLogs(%d) entries/s\tp50 µs\tp99 µs\t", b)
		}
		fmt.Fprint(w, "GetLog ns\tDeleteRange prefix 1024 µs\tsuffix 64 µs\t\n")
		for _, p := range peers {
			r := res[p.Name].micro
			fmt.Fprintf(w, "%s\t", p.Name)
			for _, b := range c.batches {
				fmt.Fprintf(w, "%.0f\t%.1f\t%.1f\t",
					med(r, func(m microResult) float64 { return m.batch[b].perSec }),
					med(r, func(m microResult) float64 { return m.batch[b].p50 }),
					med(r, func(m microResult) float64 { return m.batch[b].p99 }))
			}
			fmt.Fprintf(w, "%.0f\t%.1f\t%.1f\t\n",
				med(r, func(m microResult) float64 { return m.getNs }),
				med(r, func(m microResult) float64 { return m.deleteUs }),
				med(r, func(m microResult) float64 { return m.truncUs }))
		}
		w.Flush()
		fmt.Println()
	}
	if !c.noRaft {
		fmt.Fprintf(w, "3-node cluster\tApply p50 µs\tp99 µs\tapplies/s\tleader StoreLogs µs/apply\tfollower µs/apply\tstore share\t%d clients: applies/s\tp50 µs\tp99 µs\t\n", c.clients)
		for _, p := range peers {
			r := res[p.Name].cluster
			p50 := med(r, func(m clusterResult) float64 { return m.p50 })
			lu := med(r, func(m clusterResult) float64 { return m.leaderUs })
			fu := med(r, func(m clusterResult) float64 { return m.followUs })
			mean := 1e6 / med(r, func(m clusterResult) float64 { return m.perSec })
			fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%.0f%%\t%.0f\t%.0f\t%.0f\t\n", p.Name,
				p50, med(r, func(m clusterResult) float64 { return m.p99 }),
				med(r, func(m clusterResult) float64 { return m.perSec }), lu, fu, 100*(lu+fu)/mean,
				med(r, func(m clusterResult) float64 { return m.cperSec }),
				med(r, func(m clusterResult) float64 { return m.cp50 }),
				med(r, func(m clusterResult) float64 { return m.cp99 }))
		}
		w.Flush()
		fmt.Println("store share: (leader + mean follower StoreLogs time per apply) / mean Apply time, one client")
	}
}
