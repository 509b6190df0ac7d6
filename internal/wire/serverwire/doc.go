// Package serverwire is the part of the server's configuration that the
// controller needs without linking the server: the RDMA settings
// (rdma-port, rdma-rx-size, rdma-transport-mode, ...) with their defaults
// and their parser, which the step engine uses to give the load generator
// the queue sizes and mode the servers were deployed with, and the
// redis.conf value syntax they share with every other setting (ParseMemory,
// ParseBool). server.RDMAConfig is an alias of RDMAConfig and the server's
// rdma-* directives call Set and Get here: one parser, so a value means to
// the client what it means to the server.
//
// A leaf: the standard library only (cmd/dpulab-agent's deps_test.go).
package serverwire
