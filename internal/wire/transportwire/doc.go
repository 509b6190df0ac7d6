// Package transportwire is how dpulab writes and reads where a server
// listens or a client connects: a transport's Name (tcp, unix, rdma), an
// Endpoint (tcp://HOST:PORT, unix:///PATH, rdma://HOST:PORT, or a result's
// label), and the RDMA connection settings (RDMAOptions) the server's
// rdma-* keys and the bench's --rdma-* flags carry. server/transport
// declares its types as aliases of these and adds the registry of the
// transports a binary has; the load generator's configuration
// (benchwire.Config) and the engine name endpoints with these without
// linking any transport.
//
// A leaf: the standard library only (cmd/dpulab-agent's deps_test.go).
package transportwire
