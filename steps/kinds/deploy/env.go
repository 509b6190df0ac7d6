// Package deploy is the deploy kind's machinery that works through a
// narrow environment rather than the engine: how deploy reaches a started
// server instance (Ping, from the host's own side) and how it waits for its
// instances to answer (Await), as long as each one's start progresses.
//
// The engine (package steps) still resolves a deploy step, starts its
// instances and records them in the run's saved progress (which cleanup
// and resume read); it calls this package through Env, which its kindEnv
// implements. What moves here next is said in steps/doc.go.
package deploy

import (
	"github.com/dpulab/dpulab/steps/kind"
)

// Env is what deploy asks of the engine beside kind.Env.
type Env interface {
	kind.Env
	// Agent is the path of dpulab (the host's agent) on h, where the
	// engine uploads it before the step's work there.
	Agent(h kind.Host) string
	// Password is the servers' password under the run's variables (""
	// for none). A command gets it on stdin, never in its argv.
	Password() string
}

// Instance is one server instance of a deployment, as the run's saved
// progress records it and the bench reads it.
type Instance struct {
	Host string `json:"host"`
	// Address is what a client on the client role dials: host:port.
	Address string `json:"address"`
	Port    int    `json:"port"`
	// Socket is the Unix socket path, when the instance listens on one.
	Socket string `json:"socket,omitempty"`
	// Bind is what the server binds (deploy's bind), and HostAddress the
	// host's inventory address: together they tell "bound to loopback"
	// from "the inventory's address is loopback" when a client elsewhere
	// cannot reach it.
	Bind        string `json:"bind,omitempty"`
	HostAddress string `json:"host_address,omitempty"`
	// NetNS is the network namespace the instance runs in (an emulated
	// path); it is reached from inside that path only.
	NetNS string `json:"netns,omitempty"`
}
