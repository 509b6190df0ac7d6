//go:build !linux

package server

// serveBusy: without the event loop every other client waits for the lock
// until the script ends; SCRIPT KILL cannot reach it (see script_busy_linux.go).
func (s *Server) serveBusy(running *Client) {}
