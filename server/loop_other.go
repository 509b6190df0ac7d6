//go:build !linux

package server

import "net"

// eventLoop is Linux-only (loop_linux.go); elsewhere every connection gets
// a goroutine of its own.
type eventLoop struct{}

func newEventLoop(*Server) (*eventLoop, error) { return nil, nil }

func detachFD(net.Conn) (int, bool) { return -1, false }

func (*eventLoop) run()          {}
func (*eventLoop) release()      {}
func (*eventLoop) stop()         {}
func (*eventLoop) adopt(*Client) {}
func (*eventLoop) kill(*Client)  {}

func (*eventLoop) queueOut(*Client)    {}
func (*eventLoop) notifyAsync(*Client) {}
