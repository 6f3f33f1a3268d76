#!/bin/sh
# make redis-suite: Redis's own test suite (tag 7.0.15, from Debian's
# source package; tclsh from Debian's tcl) in external-server mode, as
# Redis's external CI job runs it (--tags -slow) with --singledb, against
# pmkv serve and against a fresh redis-server as the control. Prints the
# tests passed per unit, pmkv vs control. The source is fetched once into
# $CACHE (default bin/redis-suite) with a private apt state, so the
# system's package lists are left alone.
set -eu
PMKV=${PMKV:-bin/pmkv}
SHM=${SHM:-/dev/shm}
CACHE=${CACHE:-bin/redis-suite}
UNITS=${UNITS:-"protocol keyspace type/string type/incr expire scan multi bitops info-command quit"}
KV_PORT=${KV_PORT:-$((16400 + ($$ % 500) * 2))}
REDIS_PORT=${REDIS_PORT:-$((KV_PORT + 1))}
# runtest's own ports (its test server listens just below BASEPORT): apart
# per run, so that two runs side by side do not take each other's.
BASEPORT=${BASEPORT:-$((22000 + ($$ % 64) * 128))}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
src=$CACHE/redis-7.0.15
if [ ! -x "$src/runtest" ]; then
	mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial"
	echo "deb-src http://deb.debian.org/debian bookworm main" >"$CACHE/apt/src.list"
	apt="-o Dir::Etc::SourceList=$CACHE/apt/src.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$CACHE/apt/lists -o Dir::Cache=$CACHE/apt/cache"
	# shellcheck disable=SC2086
	apt-get $apt update -qq
	# shellcheck disable=SC2086
	(cd "$CACHE" && apt-get $apt source --download-only redis >/dev/null)
	tar -xzf "$CACHE"/redis_7.0.15.orig.tar.gz -C "$CACHE"
fi
mkdir -p "$src/src"
for b in redis-server redis-cli redis-benchmark redis-check-aof redis-check-rdb; do
	ln -sf "$(command -v $b)" "$src/src/$b"
done
dir=$(mktemp -d "$SHM/redis-suite-XXXXXX")
cleanup() {
	[ -n "${kvpid:-}" ] && kill "$kvpid" 2>/dev/null && wait "$kvpid" 2>/dev/null || true
	[ -n "${rpid:-}" ] && kill "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
"$PMKV" serve -dir "$dir/kv" -addr 127.0.0.1:$KV_PORT -segment 64MiB -device-size 2GiB -maxvalue 16000000 >"$dir/kv.log" 2>&1 &
kvpid=$!
mkdir -p "$dir/redis"
redis-server --port $REDIS_PORT --bind 127.0.0.1 --dir "$dir/redis" --save '' --daemonize no --logfile "$dir/redis.log" \
	--enable-protected-configs yes --enable-debug-command yes --enable-module-command yes &
rpid=$!
for p in $KV_PORT $REDIS_PORT; do
	i=0; until redis-cli -p $p PING >/dev/null 2>&1; do i=$((i+1)); [ $i -lt 200 ] || { echo "nothing on port $p"; cat "$dir"/*.log; exit 1; }; sleep 0.1; done
done
count() { sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -c "^\[$2\]" || true; }
printf '%-14s %6s %8s %s\n' unit pmkv control "pmkv's first failure or exception"
tp=0; tc=0
for u in $UNITS; do
	f=$(echo "$u" | tr / _)
	for side in pmkv control; do
		port=$KV_PORT; [ $side = control ] && port=$REDIS_PORT
		(cd "$src" && timeout 900 ./runtest --host 127.0.0.1 --port $port --singledb --tags -slow \
			--single "unit/$u" --clients 1 --timeout 60 --baseport $BASEPORT >"$dir/$f.$side" 2>&1) || true
	done
	p=$(count "$dir/$f.pmkv" ok); c=$(count "$dir/$f.control" ok)
	tp=$((tp+p)); tc=$((tc+c))
	why=$(sed 's/\x1b\[[0-9;]*m//g' "$dir/$f.pmkv" | grep -m1 -A1 '^\[err\]\|^\[exception\]' | tr '\n' ' ' | cut -c1-110)
	printf '%-14s %6d %8d %s\n' "$u" "$p" "$c" "$why"
	[ -z "${KEEP:-}" ] || cp "$dir/$f.pmkv" "$dir/$f.control" "$KEEP"/
done
printf '%-14s %6d %8d\n' total "$tp" "$tc"
echo "load: $(uptime)"
