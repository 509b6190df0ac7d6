// Package deploy is the deploy kind's work, through narrow environments
// rather than the engine: a step resolved into a Plan (Resolve: the
// instances per host, their ports, settings and server program), the
// commands and files it shows (Commands, Files), and its run (Run): stop
// the group's earlier servers, refuse a busy port, write each instance's
// redis.conf, start the instances, and wait until each answers PING as
// long as its start progresses (Await, on the Env's clock).
//
// Env is kind.Env plus the host's dpulab agent and the servers' password;
// Runner adds what only the engine can do, because it keeps the run's
// saved progress (which cleanup and resume read) and its prompts. The
// engine's kindEnv implements both. The engine still registers the kind
// (steps/kind_deploy.go, which puts a compare variant's deployment on its
// emulated network path) and stops what deploy started, at cleanup.
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
