package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// respLine reads one RESP line (without CRLF).
func respLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSuffix(s, "\r\n")
}

// respBulk reads a bulk string's payload after its "$n" line.
func respBulk(t *testing.T, r *bufio.Reader, head string) []byte {
	t.Helper()
	require.True(t, strings.HasPrefix(head, "$"), "want a bulk string, got %q", head)
	n, err := strconv.Atoi(head[1:])
	require.NoError(t, err)
	b := make([]byte, n+2)
	_, err = io.ReadFull(r, b)
	require.NoError(t, err)
	return b[:n]
}

// replCommand reads one command of a replication stream as "arg arg ...".
func replCommand(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	head := respLine(t, r)
	require.True(t, strings.HasPrefix(head, "*"), "want an array, got %q", head)
	n, err := strconv.Atoi(head[1:])
	require.NoError(t, err)
	args := make([]string, n)
	for i := range args {
		args[i] = string(respBulk(t, r, respLine(t, r)))
	}
	return strings.Join(args, " ")
}

// TestServeSyncStream attaches to the replication stream with SYNC, as
// Redis's tests do, and checks what each write propagates: the command
// as given, or its absolute form (SET ... PXAT, PEXPIREAT, DEL for a
// deadline in the past, SET ... KEEPTTL for INCRBYFLOAT), nothing for a
// command that changed nothing, and a MULTI of several writes wrapped in
// MULTI/EXEC (of one write, not).
func TestServeSyncStream(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.NoError(t, c.Set(ctx, "before", "x", 0).Err())

	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("SYNC\r\n"))
	require.NoError(t, err)
	r := bufio.NewReader(nc)
	head := respLine(t, r) // the snapshot: "$n", n bytes, no CRLF (as Redis)
	n, err := strconv.Atoi(strings.TrimPrefix(head, "$"))
	require.NoError(t, err, head)
	rdb := make([]byte, n)
	_, err = io.ReadFull(r, rdb)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(rdb), "REDIS0010"), "snapshot %q", rdb)
	require.Equal(t, "SELECT 0", replCommand(t, r))
	require.Contains(t, c.Info(ctx, "replication").Val(), "connected_slaves:1\r\n")

	now := time.Now().UnixMilli()
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	require.NoError(t, c.Set(ctx, "b", "2", 100*time.Second).Err())
	require.NoError(t, c.Do(ctx, "SET", "p", "1", "pxat", now+100_000).Err()) // SET p 1 PXAT (as Redis 7.0.15)
	require.NoError(t, c.Expire(ctx, "a", 50*time.Second).Err())
	require.NoError(t, c.Get(ctx, "a").Err())                         // a read: nothing
	require.Equal(t, int64(0), c.Del(ctx, "nosuch").Val())            // no effect: nothing
	require.NoError(t, c.IncrByFloat(ctx, "f", 1.5).Err())            // SET f 1.5 KEEPTTL
	require.NoError(t, c.Do(ctx, "EXPIREAT", "b", now/1000-10).Err()) // in the past: DEL b
	require.NoError(t, c.GetEx(ctx, "a", 0).Err())                    // plain GETEX: nothing
	require.NoError(t, c.Do(ctx, "GETEX", "a", "PERSIST").Err())      // PERSIST a
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {       // two writes: MULTI ... EXEC
		p.Set(ctx, "m1", "x", 0)
		p.Get(ctx, "m1")
		p.Incr(ctx, "m2")
		return nil
	})
	require.NoError(t, err)
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error { // one write: no MULTI
		p.Del(ctx, "m1")
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, c.FlushAll(ctx).Err())

	pxat := func(s string) int64 {
		f := strings.Fields(s)
		ms, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		require.NoError(t, err, s)
		return ms
	}
	require.Equal(t, "set a 1", replCommand(t, r)) // as the client sent it
	s := replCommand(t, r)
	require.True(t, strings.HasPrefix(s, "SET b 2 PXAT "), s)
	require.InDelta(t, now+100_000, pxat(s), 60_000)
	require.Equal(t, fmt.Sprintf("SET p 1 PXAT %d", now+100_000), replCommand(t, r))
	s = replCommand(t, r)
	require.True(t, strings.HasPrefix(s, "PEXPIREAT a "), s)
	require.InDelta(t, now+50_000, pxat(s), 60_000)
	require.Equal(t, "SET f 1.5 KEEPTTL", replCommand(t, r))
	require.Equal(t, "DEL b", replCommand(t, r))
	require.Equal(t, "PERSIST a", replCommand(t, r))
	for _, want := range []string{"MULTI", "set m1 x", "incr m2", "EXEC", "del m1", "flushall"} {
		require.Equal(t, want, replCommand(t, r))
	}
}

// TestServeSetrangeHuge: an offset near 2^63 is refused with Redis's
// error (its end overflowed int64 and crashed the server).
func TestServeSetrangeHuge(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	for _, off := range []int64{9223372036854775807, 2147483647} {
		err := c.SetRange(ctx, "K", off, "A").Err()
		require.ErrorContains(t, err, "string exceeds maximum allowed size", fmt.Sprint(off))
	}
	require.Equal(t, "PONG", c.Ping(ctx).Val())
}

// TestServeDebugObject: DEBUG PROTOCOL's samples in RESP2 and RESP3,
// OBJECT ENCODING by content, DEBUG DIGEST-VALUE equal for equal values.
func TestServeDebugObject(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c2 := newClient(t, addr, nil)
	c3 := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 3}))
	defer c3.Close()
	require.Equal(t, int64(1), c2.Do(ctx, "DEBUG", "PROTOCOL", "true").Val())
	require.Equal(t, true, c3.Do(ctx, "DEBUG", "PROTOCOL", "true").Val())
	require.Equal(t, "1234567999999999999999999999999999999", c2.Do(ctx, "DEBUG", "PROTOCOL", "bignum").Val())
	require.Equal(t, "1234567999999999999999999999999999999", fmt.Sprint(c3.Do(ctx, "DEBUG", "PROTOCOL", "bignum").Val()))
	require.Equal(t, "Some real reply following the attribute", c3.Do(ctx, "DEBUG", "PROTOCOL", "attrib").Val())
	require.Equal(t, map[any]any{int64(0): false, int64(1): true, int64(2): false}, c3.Do(ctx, "DEBUG", "PROTOCOL", "map").Val())
	require.ErrorContains(t, c2.Do(ctx, "DEBUG", "PROTOCOL", "push").Err(), "RESP2 is not supported")
	require.ErrorContains(t, c2.Do(ctx, "DEBUG", "PROTOCOL", "nosuch").Err(), "Wrong protocol type name")

	for v, enc := range map[string]string{"12": "int", "-9223372036854775808": "int", "012": "embstr",
		"hello": "embstr", strings.Repeat("x", 45): "raw"} {
		require.NoError(t, c2.Set(ctx, "k", v, 0).Err())
		require.Equal(t, enc, c2.ObjectEncoding(ctx, "k").Val(), v)
	}
	require.Equal(t, int64(1), c2.ObjectRefCount(ctx, "k").Val())
	require.ErrorIs(t, c2.ObjectEncoding(ctx, "nosuch").Err(), redis.Nil)
	require.NoError(t, c2.Set(ctx, "k", strings.Repeat("x", 45), 0).Err())
	require.NoError(t, c2.Set(ctx, "k2", strings.Repeat("x", 45), 0).Err())
	d := c2.Do(ctx, "DEBUG", "DIGEST-VALUE", "k", "k2", "nosuch").Val().([]any)
	require.Equal(t, d[0], d[1])
	require.Equal(t, strings.Repeat("0", 40), d[2])
}

// TestServeStateRefusals: CONFIG SET maxmemory makes denyoom commands OOM
// (reads still run; an EXEC queued before aborts), a bad value is Redis's
// error, min-replicas-to-write NOREPLICAS, REPLICAOF READONLY, SAVE in
// MULTI aborts the EXEC.
func TestServeStateRefusals(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	admin := newClient(t, addr, nil)
	require.NoError(t, c.Set(ctx, "x", "1", 0).Err())
	require.ErrorContains(t, admin.ConfigSet(ctx, "maxmemory", "bla").Err(),
		"ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument couldn't be parsed into an integer")
	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "1kb").Err())
	require.Equal(t, map[string]string{"maxmemory": "1024"}, admin.ConfigGet(ctx, "maxmemory").Val())
	require.ErrorContains(t, c.Set(ctx, "x", "2", 0).Err(), "OOM command not allowed when used memory > 'maxmemory'.")
	require.Equal(t, "1", c.Get(ctx, "x").Val())
	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "0").Err())

	conn := newClient(t, addr, nil).Conn()
	defer conn.Close()
	require.NoError(t, conn.Do(ctx, "MULTI").Err())
	require.Equal(t, "QUEUED", conn.Do(ctx, "SET", "x", "3").Val())
	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "1").Err())
	require.ErrorContains(t, conn.Do(ctx, "EXEC").Err(), "EXECABORT Transaction discarded because of: OOM")
	require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "0").Err())

	require.NoError(t, admin.ConfigSet(ctx, "min-replicas-to-write", "1").Err())
	require.ErrorContains(t, c.Set(ctx, "x", "4", 0).Err(), "NOREPLICAS")
	require.NoError(t, admin.ConfigSet(ctx, "min-replicas-to-write", "0").Err())

	require.NoError(t, admin.Do(ctx, "REPLICAOF", "localhost", "9999").Err())
	require.ErrorContains(t, c.Set(ctx, "x", "5", 0).Err(), "READONLY")
	require.Contains(t, admin.Info(ctx, "replication").Val(), "role:slave")
	require.NoError(t, admin.Do(ctx, "REPLICAOF", "NO", "ONE").Err())
	require.NoError(t, c.Set(ctx, "x", "6", 0).Err())

	require.NoError(t, conn.Do(ctx, "MULTI").Err())
	require.Equal(t, "QUEUED", conn.Do(ctx, "SET", "x", "7").Val())
	require.ErrorContains(t, conn.Do(ctx, "SAVE").Err(), "Command not allowed inside a transaction")
	require.ErrorContains(t, conn.Do(ctx, "EXEC").Err(), "EXECABORT")
	require.Equal(t, "6", c.Get(ctx, "x").Val())
}

// TestServeLCS checks LCS against the examples of Redis's documentation.
func TestServeLCS(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.NoError(t, c.MSet(ctx, "key1", "ohmytext", "key2", "mynewtext").Err())
	require.Equal(t, "mytext", c.Do(ctx, "LCS", "key1", "key2").Val())
	require.Equal(t, int64(6), c.Do(ctx, "LCS", "key1", "key2", "LEN").Val())
	require.Equal(t, []any{"matches", []any{
		[]any{[]any{int64(4), int64(7)}, []any{int64(5), int64(8)}},
		[]any{[]any{int64(2), int64(3)}, []any{int64(0), int64(1)}},
	}, "len", int64(6)}, c.Do(ctx, "LCS", "key1", "key2", "IDX").Val())
	require.Equal(t, []any{"matches", []any{
		[]any{[]any{int64(4), int64(7)}, []any{int64(5), int64(8)}, int64(4)},
	}, "len", int64(6)}, c.Do(ctx, "LCS", "key1", "key2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN").Val())
	require.Equal(t, "", c.Do(ctx, "LCS", "key1", "nosuch").Val())
	require.ErrorContains(t, c.Do(ctx, "LCS", "key1", "key2", "LEN", "IDX").Err(), "please just use IDX")
}

// TestServeDumpRestore: a string's DUMP is Redis 7.0.15's, byte for byte
// (the payloads below are redis-server's), RESTORE takes Redis's
// integer-encoded strings, a typed value goes round, a damaged payload
// is refused, BUSYKEY without REPLACE, and the TTL is kept.
func TestServeDumpRestore(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.NoError(t, c.Set(ctx, "foo5", "bar", 0).Err())
	redisBar := "\x00\x03bar\n\x00\xe6\xbeI`\xeef\xfd\x17"
	require.Equal(t, redisBar, c.Dump(ctx, "foo5").Val())
	redisInt := "\x00\xc190\n\x00\x9d\x94\xea'\x93\xfc\b\xb9"
	require.NoError(t, c.Restore(ctx, "n", 0, redisInt).Err())
	require.Equal(t, "12345", c.Get(ctx, "n").Val())
	require.ErrorContains(t, c.Restore(ctx, "n", 0, redisInt).Err(), "BUSYKEY Target key name already exists.")
	require.NoError(t, c.RestoreReplace(ctx, "n", time.Minute, redisBar).Err())
	require.Equal(t, "bar", c.Get(ctx, "n").Val())
	require.InDelta(t, time.Minute.Seconds(), c.TTL(ctx, "n").Val().Seconds(), 5)
	bad := []byte(redisBar)
	bad[3] ^= 1
	require.ErrorContains(t, c.Restore(ctx, "b", 0, string(bad)).Err(), "ERR DUMP payload version or checksum are wrong")
	require.NoError(t, c.RPush(ctx, "l", "a", "b").Err())
	require.NoError(t, c.Restore(ctx, "l2", 0, c.Dump(ctx, "l").Val()).Err())
	require.Equal(t, []string{"a", "b"}, c.LRange(ctx, "l2", 0, -1).Val())
	require.ErrorIs(t, c.Dump(ctx, "nosuch").Err(), redis.Nil)
}

// TestServeSortDebugObject: SORT of a list, set and sorted set, numeric
// and ALPHA, LIMIT, DESC, STORE (an empty result deletes the
// destination); DEBUG OBJECT's at: changes with every write.
func TestServeSortDebugObject(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.NoError(t, c.RPush(ctx, "l", "3", "10", "2").Err())
	require.Equal(t, []string{"2", "3", "10"}, c.Sort(ctx, "l", &redis.Sort{}).Val())
	require.Equal(t, []string{"3", "2", "10"}, c.Sort(ctx, "l", &redis.Sort{Alpha: true, Order: "DESC"}).Val())
	require.Equal(t, []string{"3"}, c.Sort(ctx, "l", &redis.Sort{Offset: 1, Count: 1}).Val())
	require.NoError(t, c.SAdd(ctx, "s", "b", "a").Err())
	require.ErrorContains(t, c.Sort(ctx, "s", &redis.Sort{}).Err(), "ERR One or more scores can't be converted into double")
	require.Equal(t, int64(2), c.SortStore(ctx, "s", "dst", &redis.Sort{Alpha: true}).Val())
	require.Equal(t, []string{"a", "b"}, c.LRange(ctx, "dst", 0, -1).Val())
	require.Equal(t, int64(0), c.SortStore(ctx, "nosuch", "dst", &redis.Sort{}).Val())
	require.Equal(t, int64(0), c.Exists(ctx, "dst").Val())
	require.NoError(t, c.Set(ctx, "str", "x", 0).Err())
	require.ErrorContains(t, c.Sort(ctx, "str", &redis.Sort{}).Err(), "WRONGTYPE")

	require.NoError(t, c.Set(ctx, "foo", "20000", 0).Err())
	o1 := c.DebugObject(ctx, "foo").Val()
	require.Contains(t, o1, "encoding:int")
	require.NoError(t, c.Incr(ctx, "foo").Err())
	require.NotEqual(t, strings.Fields(o1)[1], strings.Fields(c.DebugObject(ctx, "foo").Val())[1])
}

// TestServeEmptyKey: the empty key and keys that begin with a zero byte
// are keys like any other (stored under the one-to-one mapping of
// keymap.go), in key order for KEYS and SCAN.
func TestServeEmptyKey(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	keys := []string{"", "\x00", "\x00\x00", "\x00a", "a"}
	for i, k := range keys {
		require.NoError(t, c.Set(ctx, k, fmt.Sprint(i), 0).Err(), "%q", k)
	}
	for i, k := range keys {
		require.Equal(t, fmt.Sprint(i), c.Get(ctx, k).Val(), "%q", k)
	}
	require.Equal(t, int64(5), c.DBSize(ctx).Val())
	require.Equal(t, keys, c.Keys(ctx, "*").Val())
	var scanned []string
	for cur := uint64(0); ; {
		ks, next, err := c.Scan(ctx, cur, "*", 2).Result()
		require.NoError(t, err)
		scanned = append(scanned, ks...)
		if cur = next; cur == 0 {
			break
		}
	}
	require.Equal(t, keys, scanned)
	require.NoError(t, c.Rename(ctx, "", "\x00b").Err())
	require.Equal(t, "0", c.Get(ctx, "\x00b").Val())
	require.Equal(t, int64(0), c.Exists(ctx, "").Val())
	require.Equal(t, int64(1), c.Incr(ctx, "").Val())
	require.Equal(t, int64(1), c.Del(ctx, "").Val())
}

// TestServeBitfield checks BITFIELD against the examples of Redis's
// documentation (its replies were also compared with redis-server 7.0.15
// over 500 random commands while writing it).
func TestServeBitfield(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.Equal(t, []int64{1, 0}, c.BitField(ctx, "mykey", "INCRBY", "i5", 100, 1, "GET", "u4", 0).Val())
	for _, want := range [][]int64{{1, 1}, {2, 2}, {3, 3}, {0, 3}} {
		require.Equal(t, want, c.BitField(ctx, "ov", "incrby", "u2", 100, 1, "OVERFLOW", "SAT", "incrby", "u2", 102, 1).Val())
	}
	r, err := c.Do(ctx, "BITFIELD", "ov", "OVERFLOW", "FAIL", "incrby", "u2", 102, 1).Slice()
	require.NoError(t, err)
	require.Equal(t, []any{nil}, r)
	require.Equal(t, []int64{0, -128, 127}, c.BitField(ctx, "s", "SET", "i8", "#0", 127, "INCRBY", "i8", "#0", 1, "OVERFLOW", "SAT", "INCRBY", "i8", "#0", 1000).Val())
	require.Equal(t, int64(1), c.StrLen(ctx, "s").Val())
	require.ErrorContains(t, c.BitField(ctx, "s", "GET", "u64", 0).Err(), "ERR Invalid bitfield type")
	require.ErrorContains(t, c.Do(ctx, "BITFIELD_RO", "s", "SET", "u8", 0, 1).Err(), "BITFIELD_RO only supports the GET subcommand")
	require.Equal(t, []any{int64(127)}, c.Do(ctx, "BITFIELD_RO", "s", "GET", "i8", 0).Val())
}
