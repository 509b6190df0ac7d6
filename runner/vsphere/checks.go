package vsphere

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/dpulab/dpulab/internal/termtext"
)

// Status is a check's verdict.
type Status string

const (
	// Pass: vSphere says the prerequisite holds.
	Pass Status = "ok"
	// Fail: vSphere says it does not; Hint says what to change.
	Fail Status = "failed"
	// Unknown: vSphere did not say (older API, a backing this package
	// cannot follow); Hint says what to look at in vCenter.
	Unknown Status = "unknown"
	// Info: not set up, but another adapter of the same VM passes (a VM
	// often has a management adapter beside its data path): shown, not a
	// failure.
	Info Status = "info"
)

// Check names, for results and for the engine to pick by.
const (
	CheckUPTv2          = "uptv2"
	CheckDPU            = "dpu"
	CheckNetworkOffload = "network-offload"
	// CheckUPTv2Off: no UPT on the default-mode VM's adapters.
	CheckUPTv2Off = "uptv2-off"
)

// Result is one check of one object. Text that came from vCenter (names,
// reasons) is filtered for the terminal.
type Result struct {
	Check   string `json:"check"`
	Subject string `json:"subject"` // "VM redis-dpu, Network adapter 1", "ESXi esx02"
	Status  Status `json:"status"`
	Detail  string `json:"detail"`
	Hint    string `json:"hint,omitempty"`
}

func (r Result) String() string {
	s := fmt.Sprintf("%s %s: %s: %s", r.Check, r.Subject, r.Status, r.Detail)
	if r.Hint != "" && (r.Status == Fail || r.Status == Unknown) {
		s += " (" + r.Hint + ")"
	}
	return s
}

// DPU is one DPU an ESXi host reports.
type DPU struct {
	// ID is vSphere's DPU identifier (PhysicalNic.dpuId,
	// DpuStatusInfo.dpuId).
	ID string `json:"id"`
	// Vmnics are the host's physical NICs backed by this DPU.
	Vmnics []string `json:"vmnics,omitempty"`
	// Health is the host's health status for it (green, yellow, red,
	// unknown), "" when the host reports none.
	Health string `json:"health,omitempty"`
}

const (
	hintUPTType = "UPT needs a VMXNET3 adapter: with the VM powered off, replace this adapter with a VMXNET3 one (Edit Settings > Add New Device > Network Adapter, type VMXNET3) on a port group of the offload-enabled distributed switch"
	hintUPTOn   = "with the VM powered off, tick Edit Settings > Network adapter > Use UPT Support; UPT also needs a VM hardware version that supports it (vmx-20, ESXi 8.0, or later), all guest memory reserved, and the adapter on a port group of a distributed switch with network offload enabled"
	hintUPTOff  = "default mode keeps the VM's adapter emulated by the host: with the VM powered off, untick Edit Settings > Network adapter > Use UPT Support on this VM (the accelerated VM is the one with UPT)"
	// hintNoAdapter is the default-mode VM's: any emulated adapter will
	// do, so it is not told to add a VMXNET3 with UPT.
	hintNoAdapter = "with the VM powered off, add a network adapter (Edit Settings > Add New Device > Network Adapter) on the port group the lab's traffic uses; leave Use UPT Support unticked, as default mode needs"
	hintDPU       = "a host reports a DPU only when ESXi runs on the DPU too (vSphere Distributed Services Engine, installed with ESXi 8.0 or later) and the BlueField is in DPU mode; a BlueField in NIC mode shows as an ordinary vmnic (check its mode with mlxconfig: INTERNAL_CPU_OFFLOAD_ENGINE must be ENABLED(0); changing it needs a power cycle)"
	hintOffload   = "network offload is a property of the distributed switch (version 8.0 or later), chosen when it is created (New Distributed Switch > Network Offloads compatibility: NVIDIA BlueField); its uplinks must be the DPU-backed vmnics and the host must be added to it, as an NSX transport node where NSX is used; move the VM's adapter to a port group on such a switch"
)

// uptState is what vCenter says of one network adapter's UPT.
type uptState int

const (
	uptNotVmxnet3 uptState = iota // another adapter type: always emulated
	uptOff                        // VMXNET3, UPT support off
	uptUnknown                    // UPT support on, runtime state not given
	uptActive                     // UPT support on and active
	uptInactive                   // UPT support on, not active (reasons)
)

// adapterUPT is one network adapter of a VM and its UPT state.
type adapterUPT struct {
	subject string
	typ     string // adapter type, for uptNotVmxnet3
	state   uptState
	reasons []string
}

// uptAdapters reads each network adapter of the VM: its type, UPT support
// in its configuration (VirtualVmxnet3.uptv2Enabled) and whether UPT is
// active at runtime (VirtualEthernetCardRuntimeState.uptv2Active, with
// vSphere's reasons when not), and the VM's hardware version.
func (c *Client) uptAdapters(ctx context.Context, vmName string) ([]adapterUPT, string, error) {
	vm, err := c.vm(ctx, vmName)
	if err != nil {
		return nil, "", err
	}
	runtime := map[int32]*types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState{}
	for _, d := range vm.Runtime.Device {
		if st, ok := d.RuntimeState.(*types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState); ok {
			runtime[d.Key] = st
		}
	}
	hw := ""
	if vm.Config != nil {
		hw = termtext.Line(vm.Config.Version)
	}
	var out []adapterUPT
	for _, dev := range devices(vm) {
		card, ok := dev.(types.BaseVirtualEthernetCard)
		if !ok {
			continue
		}
		a := adapterUPT{subject: fmt.Sprintf("VM %s, %s", termtext.Line(vmName), deviceLabel(card.GetVirtualEthernetCard()))}
		v3, ok := dev.(*types.VirtualVmxnet3)
		switch {
		case !ok:
			a.state, a.typ = uptNotVmxnet3, adapterType(dev)
		case v3.Uptv2Enabled == nil || !*v3.Uptv2Enabled:
			a.state = uptOff
		default:
			st := runtime[v3.Key]
			switch {
			case st == nil || st.Uptv2Active == nil:
				a.state = uptUnknown
			case *st.Uptv2Active:
				a.state = uptActive
			default:
				a.state = uptInactive
				for _, r := range append(append([]string{}, st.Uptv2InactiveReasonVm...), st.Uptv2InactiveReasonOther...) {
					a.reasons = append(a.reasons, termtext.Line(r))
				}
			}
		}
		out = append(out, a)
	}
	return out, hw, nil
}

// why is vCenter's reasons for an inactive UPT, as a result says them.
func (a adapterUPT) why() string {
	if len(a.reasons) == 0 {
		return "vCenter gives no reason"
	}
	return "vCenter says: " + strings.Join(a.reasons, ", ")
}

const unknownUPT = "UPT support on; vCenter does not say whether it is active (VM powered off, or vSphere older than 8.0 Update 1)"

// CheckUPTv2 reads each network adapter of the VM (uptAdapters): it
// passes where UPT is on and active. Other adapter types fail: UPT is
// vmxnet3's.
func (c *Client) CheckUPTv2(ctx context.Context, vmName string) ([]Result, error) {
	as, hw, err := c.uptAdapters(ctx, vmName)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, a := range as {
		r := Result{Check: CheckUPTv2, Subject: a.subject, Status: Fail, Hint: hintUPTOn}
		switch a.state {
		case uptNotVmxnet3:
			r.Detail, r.Hint = fmt.Sprintf("adapter type %s, not VMXNET3", a.typ), hintUPTType
		case uptOff:
			r.Detail = fmt.Sprintf("VMXNET3 with UPT support off (VM hardware %s)", orUnknown(hw))
		case uptUnknown:
			r.Status, r.Detail = Unknown, unknownUPT
			r.Hint = "power the VM on and look at Edit Settings > Network adapter > UPT status, or run this check again"
		case uptActive:
			r.Status, r.Detail, r.Hint = Pass, "UPT support on and active: the adapter's data path goes to the DPU, past the host's vSwitch", ""
		case uptInactive:
			r.Detail = "UPT support on but not active, the adapter runs emulated (" + a.why() + ")"
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		out = append(out, Result{Check: CheckUPTv2, Subject: "VM " + termtext.Line(vmName), Status: Fail,
			Detail: "the VM has no network adapter", Hint: hintUPTType})
	}
	return othersInfo(out, "another adapter of this VM has UPT active: the lab's traffic must go through that one"), nil
}

// CheckUPTv2Off is the default-mode VM's check (the whitepaper's DPU
// offload without UPT): no adapter of the VM may have UPT active, or the
// variant measures the accelerated mode. An emulated adapter passes (UPT
// support off, another type, or UPT on but inactive: emulated now, though
// it may become active once its reason is gone, which the result says).
func (c *Client) CheckUPTv2Off(ctx context.Context, vmName string) ([]Result, error) {
	as, _, err := c.uptAdapters(ctx, vmName)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, a := range as {
		r := Result{Check: CheckUPTv2Off, Subject: a.subject, Status: Pass}
		switch a.state {
		case uptNotVmxnet3:
			r.Detail = fmt.Sprintf("adapter type %s: emulated by the host, no UPT", a.typ)
		case uptOff:
			r.Detail = "VMXNET3 with UPT support off: emulated by the host, as default mode needs"
		case uptUnknown:
			r.Status, r.Detail, r.Hint = Unknown, unknownUPT, hintUPTOff
		case uptActive:
			r.Status, r.Hint = Fail, hintUPTOff
			r.Detail = "UPT active: this adapter's data path bypasses the host's emulation as in UPTv2 (accelerated) mode, so the default-mode variant would measure UPTv2"
		case uptInactive:
			r.Detail = "UPT support on but not active, so emulated now (" + a.why() + "); it becomes active once that is resolved: turn UPT support off to keep this VM in default mode"
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		out = append(out, Result{Check: CheckUPTv2Off, Subject: "VM " + termtext.Line(vmName), Status: Fail,
			Detail: "the VM has no network adapter", Hint: hintNoAdapter})
	}
	return out, nil
}

// othersInfo turns a VM's failed adapters into Info when one of its
// adapters passes: which adapter carries the lab's traffic is the lab's
// to say, and a management adapter without offload is normal.
func othersInfo(rs []Result, why string) []Result {
	pass := false
	for _, r := range rs {
		pass = pass || r.Status == Pass
	}
	if !pass {
		return rs
	}
	for i := range rs {
		if rs[i].Status == Fail {
			rs[i].Status = Info
			rs[i].Detail += "; " + why
		}
	}
	return rs
}

// CheckDPUs lists the DPUs an ESXi host reports: physical NICs backed by a
// DPU (PhysicalNic.dpuId) and the DPUs of its hardware health
// (HostHardwareStatusInfo.dpuStatusInfo). vSphere 8 has no DPU list in
// HostConfigInfo itself.
func (c *Client) CheckDPUs(ctx context.Context, hostName string) (Result, []DPU, error) {
	h, err := c.host(ctx, hostName)
	if err != nil {
		return Result{}, nil, err
	}
	byID := map[string]*DPU{}
	get := func(id string) *DPU {
		d := byID[id]
		if d == nil {
			d = &DPU{ID: termtext.Line(id)}
			byID[id] = d
		}
		return d
	}
	if h.Config != nil && h.Config.Network != nil {
		for _, p := range h.Config.Network.Pnic {
			if p.DpuId != "" {
				d := get(p.DpuId)
				d.Vmnics = append(d.Vmnics, termtext.Line(p.Device))
			}
		}
	}
	if hs := h.Runtime.HealthSystemRuntime; hs != nil && hs.HardwareStatusInfo != nil {
		for _, s := range hs.HardwareStatusInfo.DpuStatusInfo {
			d := get(s.DpuId)
			if s.Status != nil {
				d.Health = termtext.Line(s.Status.GetElementDescription().Key)
			}
		}
	}
	var dpus []DPU
	for _, d := range byID {
		sort.Strings(d.Vmnics)
		dpus = append(dpus, *d)
	}
	sort.Slice(dpus, func(i, j int) bool { return dpus[i].ID < dpus[j].ID })
	subject := "ESXi " + termtext.Line(hostName)
	if len(dpus) == 0 {
		var nics []string
		if h.Config != nil && h.Config.Network != nil {
			for _, p := range h.Config.Network.Pnic {
				nics = append(nics, termtext.Line(p.Device))
			}
		}
		sort.Strings(nics)
		seen := "it lists no physical NIC"
		if len(nics) > 0 {
			seen = fmt.Sprintf("none of its %d physical NICs (%s) is backed by a DPU", len(nics), strings.Join(nics, ", "))
		}
		return Result{Check: CheckDPU, Subject: subject, Status: Fail,
			Detail: "the host reports no DPU: " + seen + ", and its hardware health lists no DPU", Hint: hintDPU}, nil, nil
	}
	var parts []string
	bad := false
	for _, d := range dpus {
		s := d.ID
		if len(d.Vmnics) > 0 {
			s += " (" + strings.Join(d.Vmnics, ", ") + ")"
		}
		if d.Health != "" {
			s += " health " + d.Health
			bad = bad || strings.EqualFold(d.Health, "yellow") || strings.EqualFold(d.Health, "red")
		}
		parts = append(parts, s)
	}
	r := Result{Check: CheckDPU, Subject: subject, Status: Pass, Detail: fmt.Sprintf("%d DPU(s): %s", len(dpus), strings.Join(parts, "; "))}
	if bad {
		r.Status = Fail
		r.Hint = "the host reports a DPU whose health is not green: look at Monitor > Hardware Health > DPU in the vSphere Client"
	}
	return r, dpus, nil
}

// CheckNetworkOffload follows each network adapter of the VM to its
// distributed switch and reads whether network offload is enabled there:
// the switch's network offload specification (VMwareDVSConfigInfo.
// networkOffloadSpecId, "None" = not allowed) and, on the VM's host, the
// switch's proxy (HostProxySwitch.networkOffloadingEnabled).
func (c *Client) CheckNetworkOffload(ctx context.Context, vmName string) ([]Result, error) {
	vm, err := c.vm(ctx, vmName)
	if err != nil {
		return nil, err
	}
	var proxies []types.HostProxySwitch
	if vm.Runtime.Host != nil {
		var h mo.HostSystem
		if err := property.DefaultCollector(c.vim).RetrieveOne(ctx, *vm.Runtime.Host, []string{"config.network.proxySwitch"}, &h); err == nil && h.Config != nil && h.Config.Network != nil {
			proxies = h.Config.Network.ProxySwitch
		}
	}
	switches, err := c.switches(ctx)
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, dev := range devices(vm) {
		card, ok := dev.(types.BaseVirtualEthernetCard)
		if !ok {
			continue
		}
		ec := card.GetVirtualEthernetCard()
		subject := fmt.Sprintf("VM %s, %s", termtext.Line(vmName), deviceLabel(ec))
		b, ok := ec.Backing.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo)
		if !ok {
			out = append(out, Result{Check: CheckNetworkOffload, Subject: subject, Status: Fail,
				Detail: "the adapter is on a standard vSwitch port group, not a distributed switch", Hint: hintOffload})
			continue
		}
		sw, ok := switches[b.Port.SwitchUuid]
		if !ok {
			out = append(out, Result{Check: CheckNetworkOffload, Subject: subject, Status: Unknown,
				Detail: "the adapter's distributed switch is not visible to this user", Hint: "give the vCenter user read access to the network folder, or look at the switch in vCenter: Configure > Settings > Properties > Network Offloads compatibility"})
			continue
		}
		name := termtext.Line(sw.Name)
		cfg, _ := sw.Config.(*types.VMwareDVSConfigInfo)
		spec := ""
		if cfg != nil {
			spec = termtext.Line(cfg.NetworkOffloadSpecId)
		}
		hostOn := (*bool)(nil)
		for _, p := range proxies {
			if p.DvsUuid == b.Port.SwitchUuid {
				hostOn = p.NetworkOffloadingEnabled
			}
		}
		switch {
		case spec == "" || strings.EqualFold(spec, "None"):
			out = append(out, Result{Check: CheckNetworkOffload, Subject: subject, Status: Fail,
				Detail: fmt.Sprintf("distributed switch %s does not allow network offload (offload spec %s)", name, orNone(spec)), Hint: hintOffload})
		case hostOn != nil && !*hostOn:
			out = append(out, Result{Check: CheckNetworkOffload, Subject: subject, Status: Fail,
				Detail: fmt.Sprintf("distributed switch %s allows offload (%s) but it is off on the VM's host", name, spec),
				Hint:   "make the host's DPU-backed vmnics the switch's uplinks on that host (Configure > Networking > Virtual switches), then look again"})
		case hostOn == nil:
			out = append(out, Result{Check: CheckNetworkOffload, Subject: subject, Status: Pass,
				Detail: fmt.Sprintf("distributed switch %s allows network offload (%s); the VM's host does not say whether it is on there", name, spec)})
		default:
			out = append(out, Result{Check: CheckNetworkOffload, Subject: subject, Status: Pass,
				Detail: fmt.Sprintf("distributed switch %s has network offload enabled (%s), on the VM's host too", name, spec)})
		}
	}
	if len(out) == 0 {
		out = append(out, Result{Check: CheckNetworkOffload, Subject: "VM " + termtext.Line(vmName), Status: Fail, Detail: "the VM has no network adapter", Hint: hintOffload})
	}
	return othersInfo(out, "another adapter of this VM is on a switch with offload: the lab's traffic must go through that one"), nil
}

// Target is one lab VM and the ESXi host it runs on.
type Target struct {
	Host string // ESXi host name
	VM   string // VM name
}

// Checks runs every check for each target (DPUs once per host) and turns
// an error reading vCenter into an Unknown result, so that one missing VM
// does not hide the others' verdicts.
func (c *Client) Checks(ctx context.Context, targets []Target) []Result {
	var out []Result
	seen := map[string]bool{}
	for _, t := range targets {
		if t.Host != "" && !seen[t.Host] {
			seen[t.Host] = true
			r, _, err := c.CheckDPUs(ctx, t.Host)
			if err != nil {
				r = Result{Check: CheckDPU, Subject: "ESXi " + termtext.Line(t.Host), Status: Unknown, Detail: termtext.Line(err.Error()), Hint: hintOf(err, "check the inventory's esxi: name against the vSphere Client")}
			}
			out = append(out, r)
		}
		if t.VM == "" {
			continue
		}
		for _, f := range []struct {
			check string
			run   func(context.Context, string) ([]Result, error)
		}{{CheckUPTv2, c.CheckUPTv2}, {CheckNetworkOffload, c.CheckNetworkOffload}} {
			rs, err := f.run(ctx, t.VM)
			if err != nil {
				rs = []Result{{Check: f.check, Subject: "VM " + termtext.Line(t.VM), Status: Unknown, Detail: termtext.Line(err.Error()), Hint: hintOf(err, "check the inventory's vm: name (default: the host's name) against the vSphere Client")}}
			}
			out = append(out, rs...)
		}
	}
	return out
}

// hintOf is the fix an error carries (an *Error's), else def.
func hintOf(err error, def string) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		return h.Hint()
	}
	return def
}

func (c *Client) vm(ctx context.Context, name string) (*mo.VirtualMachine, error) {
	ref, err := c.find(ctx, "VirtualMachine", name)
	if err != nil {
		return nil, err
	}
	var vm mo.VirtualMachine
	if err := property.DefaultCollector(c.vim).RetrieveOne(ctx, ref, []string{"name", "config", "runtime"}, &vm); err != nil {
		return nil, fmt.Errorf("vCenter %s: read VM %q: %w", c.addr, name, err)
	}
	return &vm, nil
}

func (c *Client) host(ctx context.Context, name string) (*mo.HostSystem, error) {
	ref, err := c.find(ctx, "HostSystem", name)
	if err != nil {
		return nil, err
	}
	var h mo.HostSystem
	if err := property.DefaultCollector(c.vim).RetrieveOne(ctx, ref, []string{"name", "config.network", "runtime"}, &h); err != nil {
		return nil, fmt.Errorf("vCenter %s: read ESXi host %q: %w", c.addr, name, err)
	}
	return &h, nil
}

// switches maps distributed switch UUIDs to the switches.
func (c *Client) switches(ctx context.Context) (map[string]mo.DistributedVirtualSwitch, error) {
	m := view.NewManager(c.vim)
	v, err := m.CreateContainerView(ctx, c.vim.ServiceContent.RootFolder, []string{"DistributedVirtualSwitch"}, true)
	if err != nil {
		return nil, fmt.Errorf("vCenter %s: list distributed switches: %w", c.addr, err)
	}
	defer v.Destroy(context.WithoutCancel(ctx))
	var sws []mo.DistributedVirtualSwitch
	if err := v.Retrieve(ctx, []string{"DistributedVirtualSwitch"}, []string{"name", "uuid", "config"}, &sws); err != nil {
		return nil, fmt.Errorf("vCenter %s: read distributed switches: %w", c.addr, err)
	}
	out := map[string]mo.DistributedVirtualSwitch{}
	for _, s := range sws {
		out[s.Uuid] = s
	}
	return out, nil
}

func devices(vm *mo.VirtualMachine) []types.BaseVirtualDevice {
	if vm.Config == nil {
		return nil
	}
	return vm.Config.Hardware.Device
}

func deviceLabel(ec *types.VirtualEthernetCard) string {
	if ec.DeviceInfo != nil {
		if d := ec.DeviceInfo.GetDescription(); d != nil && d.Label != "" {
			return termtext.Line(d.Label)
		}
	}
	return fmt.Sprintf("adapter %d", ec.Key)
}

func adapterType(dev types.BaseVirtualDevice) string {
	t := fmt.Sprintf("%T", dev)
	return strings.TrimPrefix(t, "*types.Virtual")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}
