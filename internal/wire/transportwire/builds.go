package transportwire

import "fmt"

// Build is a dpulab binary (the controller or the agent) as far as its
// transports go: the platform it was built for and whether it was built
// with -tags nordma. Which binary runs a transport decides whether it can
// run: a controller on macOS or Windows runs a lab's RDMA through the
// Linux agents on its hosts, which have it.
type Build struct {
	// OS and Arch are Go's names (linux, arm64). An empty Arch is a Linux
	// host whose architecture is not known yet (not connected): both
	// architectures dpulab ships an agent for have the same transports.
	OS, Arch string
	// NoRDMA is a build made with -tags nordma.
	NoRDMA bool
}

// Lacks says why a binary of build b has no transport n, or "" when it
// has it (or n is not a transport dpulab knows: UnknownError's business).
// This is the rule server/transport's build tags implement (rdma_core.go,
// rdma_nordma.go, rdma_unsupported.go; its TestLacksAgreesWithThisBuild
// holds them together): tcp and unix everywhere; rdma on linux/amd64 and
// linux/arm64, unless built with -tags nordma. The reason says how the
// build was made ("built with -tags nordma ...", "built for darwin/arm64,
// and ..."), to follow "it was" or "it is"; what to do about it depends
// on who asks.
func (b Build) Lacks(n Name) string {
	if n != RDMA {
		return ""
	}
	if b.NoRDMA {
		return "built with -tags nordma (a static binary without the RDMA provider)"
	}
	if b.OS != "linux" || (b.Arch != "" && b.Arch != "amd64" && b.Arch != "arm64") {
		return fmt.Sprintf("built for %s, and dpulab's RDMA provider (rdma-core, loaded at run time) is linux/amd64 and linux/arm64 only", b.platform())
	}
	return ""
}

func (b Build) platform() string {
	if b.Arch == "" {
		return b.OS
	}
	return b.OS + "/" + b.Arch
}
