package vsphere

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/types"
)

// find returns the managed object of kind ("HostSystem", "VirtualMachine")
// called name. Names are unique per kind in the labs this serves; two
// objects of one name are an error rather than a guess.
func (c *Client) find(ctx context.Context, kind, name string) (types.ManagedObjectReference, error) {
	m := view.NewManager(c.vim)
	v, err := m.CreateContainerView(ctx, c.vim.ServiceContent.RootFolder, []string{kind}, true)
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("vCenter %s: list %s: %w", c.addr, kind, err)
	}
	defer v.Destroy(context.WithoutCancel(ctx))
	refs, err := v.Find(ctx, []string{kind}, property.Match{"name": name})
	if err != nil {
		return types.ManagedObjectReference{}, fmt.Errorf("vCenter %s: find %s %q: %w", c.addr, kindWord(kind), name, err)
	}
	// property.Match treats the name as a glob: keep exact matches only.
	var exact []types.ManagedObjectReference
	for _, r := range refs {
		if n, err := c.name(ctx, r); err == nil && n == name {
			exact = append(exact, r)
		}
	}
	switch len(exact) {
	case 0:
		return types.ManagedObjectReference{}, fmt.Errorf("vCenter %s has no %s named %q: use the name the vSphere Client shows (inventory: esxi: / vm:)", c.addr, kindWord(kind), name)
	case 1:
		return exact[0], nil
	}
	return types.ManagedObjectReference{}, fmt.Errorf("vCenter %s has %d %ss named %q: rename one", c.addr, len(exact), kindWord(kind), name)
}

func kindWord(kind string) string {
	switch kind {
	case "HostSystem":
		return "ESXi host"
	case "VirtualMachine":
		return "VM"
	}
	return kind
}

// name reads one object's name.
func (c *Client) name(ctx context.Context, ref types.ManagedObjectReference) (string, error) {
	var oc []types.ObjectContent
	if err := property.DefaultCollector(c.vim).Retrieve(ctx, []types.ManagedObjectReference{ref}, []string{"name"}, &oc); err != nil {
		return "", err
	}
	for _, o := range oc {
		for _, p := range o.PropSet {
			if s, ok := p.Val.(string); ok && p.Name == "name" {
				return s, nil
			}
		}
	}
	return "", fmt.Errorf("%s has no name", ref)
}
