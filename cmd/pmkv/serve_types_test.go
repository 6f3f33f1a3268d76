package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

const wrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

func TestServeLists(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.Equal(t, int64(3), c.LPush(ctx, "l", "a", "b", "c").Val())
	require.Equal(t, int64(5), c.RPush(ctx, "l", "d", "e").Val())
	require.Equal(t, []string{"c", "b", "a", "d", "e"}, c.LRange(ctx, "l", 0, -1).Val())
	require.Equal(t, []string{"a", "d"}, c.LRange(ctx, "l", 2, -2).Val())
	require.Empty(t, c.LRange(ctx, "l", 4, 2).Val())
	require.Empty(t, c.LRange(ctx, "none", 0, -1).Val())
	require.Equal(t, int64(5), c.LLen(ctx, "l").Val())
	require.Equal(t, "e", c.LIndex(ctx, "l", -1).Val())
	require.ErrorIs(t, c.LIndex(ctx, "l", 5).Err(), redis.Nil)
	require.NoError(t, c.LSet(ctx, "l", 1, "B").Err())
	require.ErrorContains(t, c.LSet(ctx, "l", 9, "x").Err(), "ERR index out of range")
	require.ErrorContains(t, c.LSet(ctx, "none", 0, "x").Err(), "ERR no such key")
	require.Equal(t, "c", c.LPop(ctx, "l").Val())
	require.Equal(t, "e", c.RPop(ctx, "l").Val())
	require.Equal(t, []string{"B", "a"}, c.LPopCount(ctx, "l", 2).Val())
	require.Equal(t, []string{"d"}, c.RPopCount(ctx, "l", 5).Val())
	require.Equal(t, int64(0), c.Exists(ctx, "l").Val(), "an emptied list is deleted")
	require.ErrorIs(t, c.LPop(ctx, "l").Err(), redis.Nil)
	require.Equal(t, int64(0), c.LPushX(ctx, "l", "x").Val())

	c.RPush(ctx, "r", "a", "b", "a", "c", "a")
	require.Equal(t, int64(2), c.LRem(ctx, "r", -2, "a").Val())
	require.Equal(t, []string{"a", "b", "c"}, c.LRange(ctx, "r", 0, -1).Val())
	require.Equal(t, int64(4), c.LInsertBefore(ctx, "r", "b", "x").Val())
	require.Equal(t, int64(-1), c.LInsertAfter(ctx, "r", "nope", "y").Val())
	require.Equal(t, int64(1), c.LPos(ctx, "r", "x", redis.LPosArgs{}).Val())
	require.Equal(t, []int64{1}, c.LPosCount(ctx, "r", "x", 0, redis.LPosArgs{}).Val())
	require.NoError(t, c.LTrim(ctx, "r", 1, -1).Err())
	require.Equal(t, []string{"x", "b", "c"}, c.LRange(ctx, "r", 0, -1).Val())
	require.Equal(t, "c", c.Do(ctx, "RPOPLPUSH", "r", "r2").Val())
	require.Equal(t, "x", c.LMove(ctx, "r", "r2", "LEFT", "RIGHT").Val())
	require.Equal(t, []string{"c", "x"}, c.LRange(ctx, "r2", 0, -1).Val())
	require.Equal(t, "c", c.LMove(ctx, "r2", "r2", "LEFT", "RIGHT").Val())
	require.Equal(t, []string{"x", "c"}, c.LRange(ctx, "r2", 0, -1).Val())
	key, vals, err := c.LMPop(ctx, "right", 5, "none", "r2").Result()
	require.NoError(t, err)
	require.Equal(t, "r2", key)
	require.Equal(t, []string{"c", "x"}, vals)

	// Types: WRONGTYPE both ways, and the commands on keys of every type.
	require.NoError(t, c.Set(ctx, "s", "v", 0).Err())
	require.EqualError(t, c.LPush(ctx, "s", "x").Err(), wrongType)
	c.RPush(ctx, "l", "1", "2")
	for _, err := range []error{c.Get(ctx, "l").Err(), c.Incr(ctx, "l").Err(), c.Append(ctx, "l", "x").Err(), c.SetRange(ctx, "l", 0, "x").Err(), c.SetBit(ctx, "l", 0, 1).Err(), c.StrLen(ctx, "l").Err()} {
		require.EqualError(t, err, wrongType)
	}
	require.Equal(t, []any{nil, "v"}, c.MGet(ctx, "l", "s").Val())
	require.Equal(t, "list", c.Type(ctx, "l").Val())
	require.Equal(t, int64(2), c.Exists(ctx, "l", "s").Val())
	require.True(t, c.Expire(ctx, "l", 100e9).Val())
	require.InDelta(t, 100, c.TTL(ctx, "l").Val().Seconds(), 2)
	require.NoError(t, c.Rename(ctx, "l", "l2").Err())
	require.Equal(t, []string{"1", "2"}, c.LRange(ctx, "l2", 0, -1).Val())
	require.InDelta(t, 100, c.TTL(ctx, "l2").Val().Seconds(), 2, "RENAME keeps the deadline")
	require.True(t, c.Persist(ctx, "l2").Val())
	require.True(t, c.Copy(ctx, "l2", "l3", 0, false).Val() == 1)
	require.NoError(t, c.Set(ctx, "l3", "now a string", 0).Err(), "SET replaces a list")
	require.Equal(t, "string", c.Type(ctx, "l3").Val())
	require.Equal(t, int64(1), c.Del(ctx, "l2").Val())
	require.Equal(t, "none", c.Type(ctx, "l2").Val())

	// A string that begins with the codec's tag byte stays a string.
	tagged := "\xff\x01\x01\x02ab"
	require.NoError(t, c.Set(ctx, "t", tagged, 0).Err())
	require.Equal(t, tagged, c.Get(ctx, "t").Val())
	require.Equal(t, "string", c.Type(ctx, "t").Val())
	require.Equal(t, int64(len(tagged)), c.StrLen(ctx, "t").Val())
	require.NoError(t, c.Rename(ctx, "t", "t2").Err())
	require.Equal(t, tagged, c.Get(ctx, "t2").Val())
}

func TestServeHashes(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.Equal(t, int64(2), c.HSet(ctx, "h", "f1", "v1", "f2", "v2").Val())
	require.Equal(t, int64(1), c.HSet(ctx, "h", "f1", "V1", "f3", "3").Val())
	require.NoError(t, c.HMSet(ctx, "h", "f4", "4").Err())
	require.Equal(t, "V1", c.HGet(ctx, "h", "f1").Val())
	require.ErrorIs(t, c.HGet(ctx, "h", "nope").Err(), redis.Nil)
	require.Equal(t, []any{"V1", nil, "v2"}, c.HMGet(ctx, "h", "f1", "nope", "f2").Val())
	require.Equal(t, map[string]string{"f1": "V1", "f2": "v2", "f3": "3", "f4": "4"}, c.HGetAll(ctx, "h").Val())
	require.Equal(t, []string{"f1", "f2", "f3", "f4"}, c.HKeys(ctx, "h").Val())
	require.Equal(t, []string{"V1", "v2", "3", "4"}, c.HVals(ctx, "h").Val())
	require.Equal(t, int64(4), c.HLen(ctx, "h").Val())
	require.True(t, c.HExists(ctx, "h", "f2").Val())
	require.Equal(t, int64(2), c.HStrLen(ctx, "h", "f2").Val())
	require.False(t, c.HSetNX(ctx, "h", "f2", "x").Val())
	require.True(t, c.HSetNX(ctx, "h", "f5", "x").Val())
	require.Equal(t, int64(13), c.HIncrBy(ctx, "h", "f3", 10).Val())
	require.EqualError(t, c.HIncrBy(ctx, "h", "f1", 1).Err(), "ERR hash value is not an integer")
	require.Equal(t, 5.5, c.HIncrByFloat(ctx, "h", "f4", 1.5).Val())
	require.EqualError(t, c.HIncrByFloat(ctx, "h", "f1", 1).Err(), "ERR hash value is not a float")
	require.Equal(t, int64(2), c.HDel(ctx, "h", "f1", "f2", "nope").Val())
	require.Len(t, c.HRandField(ctx, "h", 10).Val(), 3)
	require.Len(t, c.HRandField(ctx, "h", -10).Val(), 10)
	require.Len(t, c.HRandFieldWithValues(ctx, "h", 2).Val(), 2)
	keys, cur, err := c.HScan(ctx, "h", 0, "f[34]", 10).Result()
	require.NoError(t, err)
	require.Equal(t, uint64(0), cur)
	require.Equal(t, []string{"f3", "13", "f4", "5.5"}, keys)
	require.Equal(t, "hash", c.Type(ctx, "h").Val())
	require.Positive(t, c.MemoryUsage(ctx, "h").Val())
	require.ErrorIs(t, c.MemoryUsage(ctx, "nokey").Err(), redis.Nil)
	require.EqualError(t, c.Get(ctx, "h").Err(), wrongType)
	require.EqualError(t, c.LPush(ctx, "h", "x").Err(), wrongType)
	c.Set(ctx, "s", "x", 0)
	require.EqualError(t, c.HSet(ctx, "s", "f", "v").Err(), wrongType)
	require.EqualError(t, c.HGet(ctx, "s", "f").Err(), wrongType)
	require.Equal(t, int64(3), c.HDel(ctx, "h", "f3", "f4", "f5").Val())
	require.Equal(t, int64(0), c.Exists(ctx, "h").Val(), "an emptied hash is deleted")
}

func TestServeSets(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	require.Equal(t, int64(3), c.SAdd(ctx, "a", "1", "2", "3").Val())
	require.Equal(t, int64(1), c.SAdd(ctx, "a", "3", "4").Val())
	require.Equal(t, int64(2), c.SAdd(ctx, "b", "3", "5").Val())
	require.ElementsMatch(t, []string{"1", "2", "3", "4"}, c.SMembers(ctx, "a").Val())
	require.True(t, c.SIsMember(ctx, "a", "2").Val())
	require.Equal(t, []bool{true, false}, c.SMIsMember(ctx, "a", "1", "9").Val())
	require.Equal(t, int64(4), c.SCard(ctx, "a").Val())
	require.Equal(t, []string{"3"}, c.SInter(ctx, "a", "b").Val())
	require.ElementsMatch(t, []string{"1", "2", "3", "4", "5"}, c.SUnion(ctx, "a", "b").Val())
	require.ElementsMatch(t, []string{"1", "2", "4"}, c.SDiff(ctx, "a", "b").Val())
	require.Empty(t, c.SInter(ctx, "a", "none").Val())
	require.Equal(t, int64(3), c.SDiffStore(ctx, "d", "a", "b").Val())
	require.Equal(t, int64(1), c.SInterCard(ctx, 0, "a", "b").Val())
	require.Equal(t, int64(0), c.SInterStore(ctx, "d", "a", "none").Val())
	require.Equal(t, int64(0), c.Exists(ctx, "d").Val(), "an empty result deletes the destination")
	require.True(t, c.SMove(ctx, "a", "b", "1").Val())
	require.False(t, c.SMove(ctx, "a", "b", "1").Val())
	require.Equal(t, int64(1), c.SRem(ctx, "a", "2", "9").Val())
	require.Len(t, c.SRandMemberN(ctx, "b", -5).Val(), 5)
	require.Len(t, c.SRandMemberN(ctx, "b", 10).Val(), 3)
	pop := c.SPopN(ctx, "b", 2).Val()
	require.Len(t, pop, 2)
	require.Equal(t, int64(1), c.SCard(ctx, "b").Val())
	keys, cur, err := c.SScan(ctx, "a", 0, "*", 10).Result()
	require.NoError(t, err)
	require.Equal(t, uint64(0), cur)
	require.ElementsMatch(t, []string{"3", "4"}, keys)
	require.Equal(t, "set", c.Type(ctx, "a").Val())
	c.RPush(ctx, "l", "x")
	require.EqualError(t, c.SAdd(ctx, "l", "x").Err(), wrongType)
	require.EqualError(t, c.SInter(ctx, "a", "l").Err(), wrongType)
	require.EqualError(t, c.SMove(ctx, "a", "l", "3").Err(), wrongType)
	// SCAN TYPE picks the keys of one type.
	var all []string
	for _, typ := range []string{"set", "list", "string", "hash"} {
		keys, _, err := c.ScanType(ctx, 0, "*", 100, typ).Result()
		require.NoError(t, err)
		all = append(all, keys...)
		if typ == "list" {
			require.Equal(t, []string{"l"}, keys)
		}
	}
	require.ElementsMatch(t, []string{"a", "b", "l"}, all)
}

func TestServeSortedSets(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	zs := func(kv ...any) []redis.Z {
		var out []redis.Z
		for i := 0; i < len(kv); i += 2 {
			out = append(out, redis.Z{Score: kv[i].(float64), Member: kv[i+1]})
		}
		return out
	}
	require.Equal(t, int64(3), c.ZAdd(ctx, "z", zs(1.0, "a", 2.0, "b", 3.0, "c")...).Val())
	require.Equal(t, int64(1), c.ZAddArgs(ctx, "z", redis.ZAddArgs{Ch: true, Members: zs(1.0, "a", 5.0, "b")}).Val())
	require.Equal(t, int64(0), c.ZAddNX(ctx, "z", zs(9.0, "a")...).Val())
	require.Equal(t, int64(0), c.ZAddXX(ctx, "z", zs(9.0, "new")...).Val())
	require.Equal(t, int64(0), c.ZAddArgs(ctx, "z", redis.ZAddArgs{GT: true, Ch: true, Members: zs(0.5, "a")}).Val())
	require.Equal(t, int64(1), c.ZAddArgs(ctx, "z", redis.ZAddArgs{LT: true, Ch: true, Members: zs(0.5, "a")}).Val())
	require.Equal(t, 2.5, c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{Members: zs(2.0, "a")}).Val())
	require.ErrorIs(t, c.ZAddArgsIncr(ctx, "z", redis.ZAddArgs{NX: true, Members: zs(2.0, "a")}).Err(), redis.Nil)
	require.Equal(t, 1.5, c.ZIncrBy(ctx, "z", -1, "a").Val())
	require.EqualError(t, c.Do(ctx, "ZADD", "z", "NX", "XX", "1", "x").Err(), "ERR XX and NX options at the same time are not compatible")
	require.EqualError(t, c.Do(ctx, "ZADD", "z", "nan", "x").Err(), "ERR value is not a valid float")
	require.EqualError(t, c.Do(ctx, "ZADD", "z", "NX", "1").Err(), "ERR syntax error")
	// z: a=1.5 c=3 b=5
	require.Equal(t, "1.5", c.Do(ctx, "ZSCORE", "z", "a").Val())
	require.Equal(t, []float64{5, 0}, c.ZMScore(ctx, "z", "b", "none").Val())
	require.Equal(t, int64(3), c.ZCard(ctx, "z").Val())
	require.Equal(t, int64(1), c.ZRank(ctx, "z", "c").Val())
	require.Equal(t, int64(0), c.ZRevRank(ctx, "z", "b").Val())
	require.Equal(t, []string{"a", "c", "b"}, c.ZRange(ctx, "z", 0, -1).Val())
	require.Equal(t, []any{"b", "c"}, c.Do(ctx, "ZREVRANGE", "z", 0, 1).Val())
	require.Equal(t, zs(3.0, "c", 5.0, "b"), c.ZRangeWithScores(ctx, "z", -2, -1).Val())
	require.Equal(t, []any{"c"}, c.Do(ctx, "ZRANGEBYSCORE", "z", "(1.5", "4").Val())
	require.Equal(t, []any{"b", "c"}, c.Do(ctx, "ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", 0, 2).Val())
	require.Equal(t, []string{"c", "a"}, c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: "4", Stop: "-inf", ByScore: true, Rev: true}).Val())
	require.Equal(t, []string{"c"}, c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "z", Start: "-inf", Stop: "+inf", ByScore: true, Offset: 1, Count: 1}).Val())
	require.Equal(t, int64(2), c.ZCount(ctx, "z", "2", "+inf").Val())
	require.EqualError(t, c.ZCount(ctx, "z", "x", "1").Err(), "ERR min or max is not a float")
	c.ZAdd(ctx, "lex", zs(0.0, "a", 0.0, "b", 0.0, "c", 0.0, "d")...)
	require.Equal(t, []any{"b", "c"}, c.Do(ctx, "ZRANGEBYLEX", "lex", "(a", "[c").Val())
	require.Equal(t, []any{"d", "c"}, c.Do(ctx, "ZREVRANGEBYLEX", "lex", "+", "[c").Val())
	require.Equal(t, int64(4), c.ZLexCount(ctx, "lex", "-", "+").Val())
	require.EqualError(t, c.ZLexCount(ctx, "lex", "a", "+").Err(), "ERR min or max not valid string range item")
	require.Equal(t, int64(2), c.ZRangeStore(ctx, "dst", redis.ZRangeArgs{Key: "lex", Start: "1", Stop: "2"}).Val())
	require.Equal(t, []string{"b", "c"}, c.ZRange(ctx, "dst", 0, -1).Val())
	require.Equal(t, int64(2), c.ZRemRangeByLex(ctx, "lex", "[b", "[c").Val())
	require.Equal(t, int64(1), c.ZRemRangeByRank(ctx, "lex", -1, -1).Val())
	require.Equal(t, int64(1), c.ZRemRangeByScore(ctx, "lex", "-inf", "inf").Val())
	require.Equal(t, int64(0), c.Exists(ctx, "lex").Val())
	require.Equal(t, zs(1.5, "a"), c.ZPopMin(ctx, "z").Val())
	require.Equal(t, zs(5.0, "b", 3.0, "c"), c.ZPopMax(ctx, "z", 5).Val())
	require.Equal(t, int64(0), c.Exists(ctx, "z").Val())
	c.ZAdd(ctx, "z", zs(1.0, "x", 2.0, "y")...)
	require.Len(t, c.ZRandMember(ctx, "z", -4).Val(), 4)
	require.Len(t, c.ZRandMemberWithScores(ctx, "z", 5).Val(), 2)
	key, got, err := c.ZMPop(ctx, "max", 1, "none", "z").Result()
	require.NoError(t, err)
	require.Equal(t, "z", key)
	require.Equal(t, zs(2.0, "y"), got)
	require.Equal(t, int64(1), c.ZRem(ctx, "z", "x", "none").Val())
	c.ZAdd(ctx, "z", zs(1.0, "a", 2.0, "b")...)
	keys, cur, err := c.ZScan(ctx, "z", 0, "*", 10).Result()
	require.NoError(t, err)
	require.Equal(t, uint64(0), cur)
	require.Equal(t, []string{"a", "1", "b", "2"}, keys)
	require.Equal(t, "zset", c.Type(ctx, "z").Val())
	require.EqualError(t, c.Do(ctx, "ZADD", "dst", "abc", "m").Err(), "ERR value is not a valid float")
	c.Set(ctx, "s", "x", 0)
	require.EqualError(t, c.ZAdd(ctx, "s", zs(1.0, "a")...).Err(), wrongType)
	require.EqualError(t, c.ZRange(ctx, "s", 0, -1).Err(), wrongType)
	// RESP3: scores are doubles, WITHSCORES pairs.
	c3 := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 3}))
	defer c3.Close()
	require.Equal(t, 1.0, c3.ZScore(ctx, "z", "a").Val())
	require.Equal(t, zs(1.0, "a", 2.0, "b"), c3.ZRangeWithScores(ctx, "z", 0, -1).Val())
	require.Equal(t, zs(1.0, "a"), c3.ZPopMin(ctx, "z", 1).Val())
}

// A collection is one kv value: one that would outgrow -maxvalue is
// refused with Redis's kind of error and left as it was.
func TestServeTypesValueLimit(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"), "-maxvalue", "4096")
	ctx := context.Background()
	c := newClient(t, addr, nil)
	big := strings.Repeat("x", 1000)
	n := int64(0)
	for ; n < 10; n++ {
		if err := c.RPush(ctx, "l", big).Err(); err != nil {
			require.ErrorContains(t, err, "over the store's limit of 4096 (the store's -maxvalue)")
			break
		}
	}
	require.Equal(t, int64(4), n, "4 elements of 1000 bytes fit in 4096, 5 do not")
	require.Equal(t, n, c.LLen(ctx, "l").Val())
	require.ErrorContains(t, c.HSet(ctx, "h", "f", strings.Repeat("y", 5000)).Err(), "over the store's limit")
	require.Equal(t, int64(0), c.Exists(ctx, "h").Val())
}

func TestServeSort(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	c.RPush(ctx, "l", "3", "10", "1", "2")
	require.Equal(t, []string{"1", "2", "3", "10"}, c.Sort(ctx, "l", &redis.Sort{}).Val())
	require.Equal(t, []string{"3", "2", "10", "1"}, c.Sort(ctx, "l", &redis.Sort{Alpha: true, Order: "DESC"}).Val())
	require.Equal(t, []string{"2", "3"}, c.Sort(ctx, "l", &redis.Sort{Offset: 1, Count: 2}).Val())
	c.MSet(ctx, "w_3", "1", "w_10", "2", "w_1", "3", "w_2", "4", "o_1", "one")
	c.HSet(ctx, "h_2", "f", "two")
	require.Equal(t, []string{"3", "10", "1", "2"}, c.Sort(ctx, "l", &redis.Sort{By: "w_*"}).Val())
	require.Equal(t, []any{"one", nil, nil, nil}, c.SortInterfaces(ctx, "l", &redis.Sort{Get: []string{"o_*"}}).Val())
	require.Equal(t, []any{"1", nil, "2", "two"}, c.SortInterfaces(ctx, "l", &redis.Sort{Get: []string{"#", "h_*->f"}, Count: 2}).Val())
	require.Equal(t, []string{"3", "10", "1", "2"}, c.Sort(ctx, "l", &redis.Sort{By: "nosort"}).Val())
	require.Equal(t, int64(4), c.SortStore(ctx, "l", "dst", &redis.Sort{Order: "DESC"}).Val())
	require.Equal(t, []string{"10", "3", "2", "1"}, c.LRange(ctx, "dst", 0, -1).Val())
	require.Equal(t, int64(0), c.SortStore(ctx, "none", "dst", &redis.Sort{}).Val())
	require.Equal(t, int64(0), c.Exists(ctx, "dst").Val(), "an empty result deletes the destination")
	c.SAdd(ctx, "s", "b", "a")
	require.EqualError(t, c.Sort(ctx, "s", &redis.Sort{}).Err(), "ERR One or more scores can't be converted into double")
	require.Equal(t, []string{"a", "b"}, c.Sort(ctx, "s", &redis.Sort{Alpha: true}).Val())
	require.EqualError(t, c.Sort(ctx, "o_1", &redis.Sort{}).Err(), wrongType)
}

func TestServeSortedSetOps(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	c := newClient(t, addr, nil)
	c.ZAdd(ctx, "a", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"})
	c.ZAdd(ctx, "b", redis.Z{Score: 10, Member: "y"}, redis.Z{Score: 20, Member: "z"})
	c.SAdd(ctx, "s", "y", "w")
	require.Equal(t, []redis.Z{{Score: 1, Member: "x"}, {Score: 22, Member: "y"}, {Score: 40, Member: "z"}},
		c.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"a", "b"}, Weights: []float64{1, 2}, Aggregate: "sum"}).Val())
	require.Equal(t, []redis.Z{{Score: 10, Member: "y"}}, c.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"a", "b"}, Aggregate: "MAX"}).Val())
	require.Equal(t, []string{"x"}, c.ZDiff(ctx, "a", "b").Val())
	require.Equal(t, int64(1), c.ZInterCard(ctx, 0, "a", "s").Val())
	require.Equal(t, int64(4), c.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"a", "b", "s"}}).Val())
	require.Equal(t, 13.0, c.ZScore(ctx, "u", "y").Val(), "a set's member scores 1")
	require.Equal(t, int64(1), c.ZInterStore(ctx, "i", &redis.ZStore{Keys: []string{"a", "s"}}).Val())
	require.Equal(t, int64(0), c.ZDiffStore(ctx, "i", "a", "a").Val())
	require.Equal(t, int64(0), c.Exists(ctx, "i").Val())
	require.EqualError(t, c.Do(ctx, "ZUNION", "0", "a").Err(), "ERR at least 1 input key is needed for 'zunion' command")
	c.Set(ctx, "str", "v", 0)
	require.EqualError(t, c.ZUnion(ctx, redis.ZStore{Keys: []string{"a", "str"}}).Err(), wrongType)
}

// Concurrent clients on one list, hash, set and sorted set: every
// read-modify-write holds the key's lock, so none is lost.
func TestServeTypesConcurrent(t *testing.T) {
	kvReady(t)
	addr := startServe(t, filepath.Join(t.TempDir(), "s"))
	ctx := context.Background()
	const clients, ops = 4, 100
	var wg sync.WaitGroup
	for g := range clients {
		wg.Go(func() {
			c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2}))
			defer c.Close()
			for i := range ops {
				m := fmt.Sprintf("%d.%d", g, i)
				for _, err := range []error{c.RPush(ctx, "l", m).Err(), c.HIncrBy(ctx, "h", "n", 1).Err(),
					c.SAdd(ctx, "s", m).Err(), c.ZIncrBy(ctx, "z", 1, "m").Err()} {
					if err != nil {
						t.Error(err) // not FailNow: this is not the test's goroutine
						return
					}
				}
			}
		})
	}
	wg.Wait()
	c := newClient(t, addr, nil)
	require.Equal(t, int64(clients*ops), c.LLen(ctx, "l").Val())
	require.Equal(t, fmt.Sprint(clients*ops), c.HGet(ctx, "h", "n").Val())
	require.Equal(t, int64(clients*ops), c.SCard(ctx, "s").Val())
	require.Equal(t, float64(clients*ops), c.ZScore(ctx, "z", "m").Val())
	// Each client's pushes are in its own order within the list.
	last := map[string]int{}
	for _, m := range c.LRange(ctx, "l", 0, -1).Val() {
		var g, i int
		_, err := fmt.Sscanf(m, "%d.%d", &g, &i)
		require.NoError(t, err)
		if prev, ok := last[fmt.Sprint(g)]; ok {
			require.Equal(t, prev+1, i)
		}
		last[fmt.Sprint(g)] = i
	}
}
