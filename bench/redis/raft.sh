#!/bin/sh
# pmkv serve replicated by raft against pmkv serve alone: redis-benchmark
# SET of 100-byte values, pipeline 1 and 16, against one pmkv serve and
# against the leader of a 3-node raft group (pmkv serve -raft-id, every
# node on this machine, loopback), interleaved, RUNS rounds; prints the
# medians (requests/s and p99) and the ratio replicated / single.
set -eu
PMKV=${PMKV:-bin/pmkv}
SHM=${SHM:-/dev/shm}
RUNS=${RUNS:-3}
N=${N:-50000}
CLIENTS=${CLIENTS:-50}
dir=$(mktemp -d "$SHM/bench-raft-XXXXXX")
out=$dir/results.csv
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
F="-segment 64MiB -device-size 2GiB"
"$PMKV" serve -dir "$dir/single" -addr 127.0.0.1:6390 $F >"$dir/single.log" 2>&1 &
pids="$pids $!"
P=a=127.0.0.1:7391,b=127.0.0.1:7392,c=127.0.0.1:7393
for i in 1 2 3; do
	id=$(echo abc | cut -c$i)
	"$PMKV" serve -dir "$dir/$id" -addr 127.0.0.1:639$i $F -raft-id "$id" -raft-addr 127.0.0.1:739$i -raft-peers $P \
		-raft-segment 64MiB >"$dir/$id.log" 2>&1 &
	pids="$pids $!"
done
leader=
i=0
while [ -z "$leader" ]; do
	i=$((i+1)); [ $i -lt 300 ] || { echo "no raft leader"; cat "$dir"/*.log; exit 1; }
	sleep 0.1
	for p in 6391 6392 6393; do
		redis-cli -p $p INFO replication 2>/dev/null | grep -q '^raft_leader_ready:1' && leader=$p
	done
done
echo "load: $(uptime)"
echo "redis-benchmark -t set -d 100 -n $N -c $CLIENTS -r 1000000 -P {1,16} --csv, $RUNS rounds, single and raft leader interleaved"
: >"$out"
for r in $(seq "$RUNS"); do
	for P in 1 16; do
		for srv in single:6390 raft:$leader; do
			name=${srv%%:*}; port=${srv##*:}
			redis-benchmark -p "$port" -t set -d 100 -n "$N" -c "$CLIENTS" -r 1000000 -P "$P" --csv 2>>"$dir/errors" |
				grep -v '^"test"' | sed "s/^/$name,$P,/" >>"$out"
		done
	done
done
echo "load: $(uptime)"
awk -F, '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
{ gsub(/"/, ""); k = $1 SUBSEP $2; n[k]++; rps[k, n[k]] = $4; p99[k, n[k]] = $9; pl[$2] = 1 }
END {
	printf "%-8s %14s %10s %14s %10s %8s\n", "pipeline", "single req/s", "p99 ms", "raft req/s", "p99 ms", "ratio"
	for (q in pl) {
		for (s = 0; s < 2; s++) {
			k = (s ? "raft" : "single") SUBSEP q
			if (!n[k]) { print "no result for " k " (a failed redis-benchmark: see its errors)"; exit 1 }
			for (i = 1; i <= n[k]; i++) { a[i] = rps[k, i]; b[i] = p99[k, i] }
			R[s] = med(a, n[k]); L[s] = med(b, n[k])
		}
		printf "%-8s %14.0f %10.3f %14.0f %10.3f %7.2fx\n", q, R[0], L[0], R[1], L[1], R[0] ? R[1] / R[0] : 0
	}
}' "$out" | sort -k1,1n
