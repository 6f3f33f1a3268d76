#!/bin/sh
# make bench-redis: the real redis-benchmark against pmkv serve and against
# a durable redis-server (appendonly yes, appendfsync always) on the same
# machine, same clients, pipeline 1 and 16, SET and GET of 100-byte values,
# the two servers interleaved, RUNS rounds; then redis-cli round trips
# against pmkv serve. Prints a table of the medians (requests/s and p99).
set -eu
PMKV=${PMKV:-bin/pmkv}
SHM=${SHM:-/dev/shm}
RUNS=${RUNS:-3}
N=${N:-200000}
CLIENTS=${CLIENTS:-50}
KV_PORT=6380
REDIS_PORT=6381
dir=$(mktemp -d "$SHM/bench-redis-XXXXXX")
out=$dir/results.csv
cleanup() {
	[ -n "${kvpid:-}" ] && kill "$kvpid" 2>/dev/null && wait "$kvpid" 2>/dev/null || true
	[ -n "${rpid:-}" ] && kill "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
"$PMKV" serve -dir "$dir/kv" -addr 127.0.0.1:$KV_PORT -segment 64MiB -device-size 2GiB >"$dir/kv.log" 2>&1 &
kvpid=$!
mkdir -p "$dir/redis"
redis-server --port $REDIS_PORT --bind 127.0.0.1 --dir "$dir/redis" --appendonly yes --appendfsync always \
	--save '' --daemonize no --logfile "$dir/redis.log" &
rpid=$!
for p in $KV_PORT $REDIS_PORT; do
	i=0; until redis-cli -p $p PING >/dev/null 2>&1; do i=$((i+1)); [ $i -lt 200 ] || { echo "nothing on port $p"; cat "$dir"/*.log; exit 1; }; sleep 0.1; done
done
echo "redis-cli against pmkv serve:"
redis-cli -p $KV_PORT SET k v
redis-cli -p $KV_PORT GET k
redis-cli -p $KV_PORT DBSIZE
echo "load: $(uptime)"
echo "redis-benchmark -t set,get -d 100 -n $N -c $CLIENTS -r 1000000 -P {1,16} --csv, $RUNS rounds, servers interleaved"
: >"$out"
for r in $(seq "$RUNS"); do
	for P in 1 16; do
		for srv in pmkv:$KV_PORT redis:$REDIS_PORT; do
			name=${srv%%:*}; port=${srv##*:}
			redis-benchmark -p "$port" -t set,get -d 100 -n "$N" -c "$CLIENTS" -r 1000000 -P "$P" --csv 2>/dev/null |
				grep -v '^"test"' | sed "s/^/$name,$P,/" >>"$out"
		done
	done
done
echo "load: $(uptime)"
# server,pipeline,"test","rps","avg","min","p50","p95","p99","max"
awk -F, '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
{ gsub(/"/, ""); k = $1 SUBSEP $2 SUBSEP $3; n[k]++; rps[k, n[k]] = $4; p99[k, n[k]] = $9; keys[$2 SUBSEP $3] = 1 }
END {
	printf "%-8s %-4s %14s %10s %14s %10s %8s\n", "pipeline", "op", "pmkv req/s", "p99 ms", "redis req/s", "p99 ms", "ratio"
	for (pt in keys) {
		split(pt, q, SUBSEP)
		for (s = 0; s < 2; s++) {
			srv = s ? "redis" : "pmkv"; k = srv SUBSEP q[1] SUBSEP q[2]
			for (i = 1; i <= n[k]; i++) { a[i] = rps[k, i]; b[i] = p99[k, i] }
			R[s] = med(a, n[k]); L[s] = med(b, n[k])
		}
		printf "%-8s %-4s %14.0f %10.3f %14.0f %10.3f %7.2fx\n", q[1], q[2], R[0], L[0], R[1], L[1], R[1] ? R[0] / R[1] : 0
	}
}' "$out" | sort -k1,1n -k2,2r
