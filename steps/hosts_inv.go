package steps

import (
	"context"
	"errors"

	"github.com/dpulab/dpulab/runner"
)

// Inventory is the runner's inventory of lab hosts. Until runner.Inventory
// lands this is a placeholder and every role is this machine.
type Inventory struct{}

func (h *hostPool) checkRoles() error { return nil }

func (h *hostPool) invHosts(roles []string) ([]hostRef, error) {
	return nil, errors.New("inventories are not supported yet")
}

func (h *hostPool) invTarget(ctx context.Context, name string) (runner.Target, error) {
	return nil, errors.New("inventories are not supported yet")
}

func (h *hostPool) hostInfos() []HostInfo {
	return []HostInfo{{Name: runner.LocalName, Address: runner.LocalName, Roles: h.lab.RoleNames()}}
}

// hostBinary returns the path of dpulab on a host, uploading it to lab
// hosts.
func (e *Engine) hostBinary(ctx context.Context, h hostRef, t runner.Target) (string, error) {
	if h.Name == runner.LocalName || e.hosts.inv == nil {
		return e.binaryPath()
	}
	return "", errors.New("uploading dpulab to lab hosts is not supported yet")
}
