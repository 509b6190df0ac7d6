//go:build !unix

package server

import "net"

// fitDescriptors keeps maxclients as configured where there is no
// RLIMIT_NOFILE to fit it to (see fdlimit_unix.go).
func (s *Server) fitDescriptors(maxClients int) (int, error) { return maxClients, nil }

// isOutOfFDs is false where accept cannot fail for lack of descriptors.
func isOutOfFDs(error) bool { return false }

func clientWaiting(net.Listener, bool) (waiting, ok bool) { return false, false }
