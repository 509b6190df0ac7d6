package vsphere

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dpulab/dpulab/internal/termtext"
	"github.com/vmware/govmomi/vim25/mo"

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
		return types.ManagedObjectReference{}, c.notFound(ctx, v, kind, name)
	case 1:
		return exact[0], nil
	}
	return types.ManagedObjectReference{}, fmt.Errorf("vCenter %s has %d %ss named %q: rename one", c.addr, len(exact), kindWord(kind), name)
}

// notFound says what was looked up and what vCenter has of that kind,
// so that a typo in the inventory is seen at once.
func (c *Client) notFound(ctx context.Context, v *view.ContainerView, kind, name string) error {
	key := "vm:"
	if kind == "HostSystem" {
		key = "esxi:"
	}
	e := &Error{Problem: NotFound, Address: c.addr,
		Msg: fmt.Sprintf("vCenter %s has no %s named %q", c.addr, kindWord(kind), termtext.Line(name)),
		Fix: fmt.Sprintf("Set the inventory's %s to the name the vSphere Client shows for it", key)}
	if kind == "VirtualMachine" {
		e.Fix += " (vm: defaults to the host's name in the inventory)"
	}
	var all []mo.ManagedEntity
	if err := v.Retrieve(ctx, []string{kind}, []string{"name"}, &all); err != nil {
		return e
	}
	names := make([]string, 0, len(all))
	for _, m := range all {
		names = append(names, strconv.Quote(termtext.Line(m.Name)))
	}
	sort.Strings(names)
	switch {
	case len(names) == 0:
		e.Msg += fmt.Sprintf(", nor any other %s this user can see", kindWord(kind))
		e.Fix += "; if it exists, give the vCenter user read access to it"
	case len(names) > maxListed:
		e.Msg += fmt.Sprintf("; it has %d %ss: %s, …", len(names), kindWord(kind), strings.Join(names[:maxListed], ", "))
	default:
		e.Msg += fmt.Sprintf("; it has %s", strings.Join(names, ", "))
	}
	return e
}

// maxListed bounds the names a not-found error lists.
const maxListed = 12

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
