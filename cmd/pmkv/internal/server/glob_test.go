package server

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"a*", "abc", true}, {"a*", "bac", false},
		{"*c", "abc", true}, {"a?c", "abc", true}, {"a?c", "ac", false},
		{"f[34]", "f3", true}, {"f[34]", "f5", false}, {"f[^34]", "f5", true}, {"f[^34]", "f4", false},
		{"[a-c]x", "bx", true}, {"[c-a]x", "bx", true}, {"[a-c]x", "dx", false},
		{`a\*b`, "a*b", true}, {`a\*b`, "axb", false}, {`[\]]`, "]", true},
		{"*a*b", "xaxxb", true}, {"*a*b", "xaxxbc", false}, {"foo*", "foobar", true},
		{"*1*", "1", true}, {"*1*", "a", false}, {"a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"h*llo", "hello", true}, {"h*llo", "hllo", true}, {"h[ae]llo", "hallo", true}, {"h[ae]llo", "hillo", false},
	} {
		require.Equal(t, c.want, globMatch(c.p, c.s), "%q ~ %q", c.p, c.s)
	}
}
