package server

import (
	"strings"
	"testing"
)

// typesConn is a raw RESP connection to a fresh in-process server for the
// data-type command tests; replies are rendered as in the diff tests
// (renderReply): `:3`, `$"v"`, `$nil`, `*2[$"a" $"b"]`, `-"ERR ..."`.
type typesConn struct {
	t *testing.T
	c *diffConn
}

func newTypesConn(t *testing.T, proto int) *typesConn {
	t.Helper()
	network, addr := startDiffOurs(t)
	tc := &typesConn{t: t, c: dialDiff(t, network, addr)}
	if proto == 3 {
		tc.do("HELLO", "3")
	}
	return tc
}

// do runs a command and returns its rendered reply.
func (tc *typesConn) do(args ...string) string {
	tc.t.Helper()
	r, err := tc.c.do(args, renderReply)
	if err != nil {
		tc.t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return r
}

// expect runs a command and fails unless the rendered reply is want.
func (tc *typesConn) expect(want string, args ...string) {
	tc.t.Helper()
	if got := tc.do(args...); got != want {
		tc.t.Errorf("%s = %s, want %s", strings.Join(args, " "), got, want)
	}
}

// replyCase is one command and its expected rendered reply.
type replyCase struct {
	cmd  []string
	want string
}

// runCases runs cases in order on one connection, as a table.
func (tc *typesConn) runCases(cases []replyCase) {
	tc.t.Helper()
	for _, rc := range cases {
		tc.expect(rc.want, rc.cmd...)
	}
}

func cmd(args ...string) []string { return args }
