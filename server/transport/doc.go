// Package transport is the one place that knows which transports exist
// (issue 11's seam): how an endpoint is written, which transports this
// binary has, and how a listener or a connection of each is made.
//
// An Endpoint is a transport and an address: tcp://HOST:PORT,
// unix:///PATH, rdma://HOST:PORT. The server gets its listeners from
// Listen and the load generator its connections from Dial; neither
// switches over transport names. Available says whether this binary has a
// transport, as the server and the load generator check when they run; the
// engine asks it only for what runs on this machine. A lab host runs the
// agent built for its platform, whose transports transportwire.Build.Lacks
// says (runner.AgentFinder.AgentLacks): a controller on macOS or Windows
// runs RDMA through the Linux agents. ThisBuild is this binary in those
// terms, and TestLacksAgreesWithThisBuild holds the rule to the build tags.
// A transport a binary has but a host cannot use yet (RDMA without
// rdma-core or a device) fails Listen and Dial with ErrHostLacks.
//
// # Adding a transport
//
// One file (or package) implementing Transport, registering itself in an
// init function with Register, behind the build tag that brings in what it
// needs; and its name in known (transport.go) with the message a build
// without it gives. tcp.go and unix.go are the two built-in ones; rdma
// registers from its own file when built with the rdma or rdmasim tag.
//
// Connections of every transport are net.Conns. The server serves one that
// has a file descriptor (tcp, unix) on its event loop and one without (rdma)
// on a goroutine of its own; see server/doc.go.
package transport
