//go:build !linux

package steps

import (
	"context"
	"net"
)

// dialInNetns is Linux's alone: elsewhere deploy pings by command.
func dialInNetns(context.Context, string, string) (net.Conn, error) { return nil, errNoNetnsDial }
