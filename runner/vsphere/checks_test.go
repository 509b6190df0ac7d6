package vsphere

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// toVmxnet3 replaces the VM's first network adapter with a VMXNET3 one
// (same key, backing and label), UPT support as enabled says, and sets its
// runtime state as the host would.
func toVmxnet3(t *testing.T, s *sim, vmName string, enabled bool, state *types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState) {
	s.edit(t, "VirtualMachine", vmName, func(obj mo.Entity) {
		vm := obj.(*simulator.VirtualMachine)
		for i, d := range vm.Config.Hardware.Device {
			card, ok := d.(types.BaseVirtualEthernetCard)
			if !ok {
				continue
			}
			v3 := &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: *card.GetVirtualEthernetCard()}, Uptv2Enabled: types.NewBool(enabled)}
			vm.Config.Hardware.Device[i] = v3
			vm.Runtime.Device = nil
			if state != nil {
				vm.Runtime.Device = []types.VirtualMachineDeviceRuntimeInfo{{Key: v3.Key, RuntimeState: state}}
			}
			return
		}
		t.Fatalf("%s has no network adapter", vmName)
	})
}

func TestCheckUPTv2(t *testing.T) {
	s := newSim(t)
	toVmxnet3(t, s, "DC0_H0_VM0", true, &types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState{Uptv2Active: types.NewBool(true)})
	toVmxnet3(t, s, "DC0_H0_VM1", true, &types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState{
		Uptv2Active: types.NewBool(false), Uptv2InactiveReasonVm: []string{"vmNptIncompatibleGuestDriver\x1b]52;c;evil\x07"}})
	toVmxnet3(t, s, "DC0_C0_RP0_VM0", false, nil)
	c := s.dial(t)
	tests := []struct {
		vm     string
		status Status
		detail []string
	}{
		{"DC0_H0_VM0", Pass, []string{"active"}},
		{"DC0_H0_VM1", Fail, []string{"not active", "vmNptIncompatibleGuestDriver"}},
		{"DC0_C0_RP0_VM0", Fail, []string{"UPT support off"}},
		{"DC0_C0_RP0_VM1", Fail, []string{"adapter type E1000, not VMXNET3"}}, // untouched: the simulator's E1000
		{"DC0_C0_RP0_VM1", Unknown, []string{"does not say whether it is active"}},
	}
	for i, tc := range tests {
		if i == 4 {
			// UPT on, no runtime state (powered off, or older vSphere).
			toVmxnet3(t, s, tc.vm, true, nil)
		}
		t.Run(tc.vm+" "+string(tc.status), func(t *testing.T) {
			rs, err := c.CheckUPTv2(context.Background(), tc.vm)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 {
				t.Fatalf("%d results: %v", len(rs), rs)
			}
			r := rs[0]
			if r.Check != CheckUPTv2 || r.Status != tc.status || !strings.HasPrefix(r.Subject, "VM "+tc.vm+", ") {
				t.Fatalf("%+v, want %s", r, tc.status)
			}
			for _, d := range tc.detail {
				if !strings.Contains(r.Detail, d) {
					t.Errorf("detail %q lacks %q", r.Detail, d)
				}
			}
			if strings.ContainsRune(r.Detail, 0x1b) || strings.ContainsRune(r.Detail, 0x07) {
				t.Errorf("vCenter's text reached the result unfiltered: %q", r.Detail)
			}
			if (r.Status != Pass) != (r.Hint != "") {
				t.Errorf("hint %q with status %s", r.Hint, r.Status)
			}
		})
	}
	if _, err := c.CheckUPTv2(context.Background(), "no-such-vm"); err == nil || !strings.Contains(err.Error(), `no VM named "no-such-vm"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckDPUs(t *testing.T) {
	s := newSim(t)
	s.edit(t, "HostSystem", "DC0_C0_H0", func(obj mo.Entity) {
		h := obj.(*simulator.HostSystem)
		// A copy: simulated hosts may share their network info.
		nw := *h.Config.Network
		nw.Pnic = append([]types.PhysicalNic(nil), nw.Pnic...)
		nw.Pnic[0].DpuId = "dpu-0000:3b:00.0"
		nw.Pnic[1].DpuId = "dpu-0000:3b:00.0"
		cfg := *h.Config
		cfg.Network = &nw
		h.Config = &cfg
		h.Runtime.HealthSystemRuntime = &types.HealthSystemRuntime{HardwareStatusInfo: &types.HostHardwareStatusInfo{
			DpuStatusInfo: []types.DpuStatusInfo{{DpuId: "dpu-0000:3b:00.0", HostHardwareElementInfo: types.HostHardwareElementInfo{Name: "BlueField-2",
				Status: &types.ElementDescription{Key: "Green"}}}},
		}}
	})
	c := s.dial(t)
	r, dpus, err := c.CheckDPUs(context.Background(), "DC0_C0_H0")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Pass || len(dpus) != 1 || dpus[0].ID != "dpu-0000:3b:00.0" || strings.Join(dpus[0].Vmnics, ",") != "vmnic0,vmnic1" || dpus[0].Health != "Green" {
		t.Fatalf("%+v %+v", r, dpus)
	}
	if !strings.Contains(r.Detail, "vmnic0, vmnic1") {
		t.Errorf("detail %q", r.Detail)
	}
	r, dpus, err = c.CheckDPUs(context.Background(), "DC0_C0_H1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Fail || len(dpus) != 0 || !strings.Contains(r.Hint, "DPU mode") || !strings.Contains(r.Hint, "INTERNAL_CPU_OFFLOAD_ENGINE") {
		t.Fatalf("host without DPU: %+v", r)
	}
}

func TestCheckNetworkOffload(t *testing.T) {
	s := newSim(t)
	c := s.dial(t)
	// The VPX model's VMs sit on DVS0's port group; DVS0 has no offload.
	rs, err := c.CheckNetworkOffload(context.Background(), "DC0_H0_VM0")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Status != Fail || !strings.Contains(rs[0].Detail, "DVS0 does not allow network offload") || !strings.Contains(rs[0].Hint, "Network Offloads compatibility") {
		t.Fatalf("%v", rs)
	}
	s.edit(t, "DistributedVirtualSwitch", "DVS0", func(obj mo.Entity) {
		dvs := obj.(*simulator.DistributedVirtualSwitch)
		dvs.Config.(*types.VMwareDVSConfigInfo).NetworkOffloadSpecId = "NVIDIA_BlueField"
	})
	rs, err = c.CheckNetworkOffload(context.Background(), "DC0_H0_VM0")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Status != Pass || !strings.Contains(rs[0].Detail, "NVIDIA_BlueField") {
		t.Fatalf("%v", rs)
	}
}

func TestChecksTurnErrorsIntoUnknown(t *testing.T) {
	s := newSim(t)
	c := s.dial(t)
	rs := c.Checks(context.Background(), []Target{{Host: "DC0_H0", VM: "DC0_H0_VM0"}, {Host: "DC0_H0", VM: "gone-vm"}})
	var got []string
	for _, r := range rs {
		got = append(got, r.Check+" "+r.Subject+" "+string(r.Status))
	}
	want := []string{
		"dpu ESXi DC0_H0 failed",
		"uptv2 VM DC0_H0_VM0, ethernet-0 failed",
		"network-offload VM DC0_H0_VM0, ethernet-0 failed",
		"uptv2 VM gone-vm unknown",
		"network-offload VM gone-vm unknown",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOtherAdaptersAreInfoWhenOnePasses(t *testing.T) {
	s := newSim(t)
	// DC0_H0_VM0: its E1000 stays (management), a VMXNET3 with UPT active
	// is added beside it.
	s.edit(t, "VirtualMachine", "DC0_H0_VM0", func(obj mo.Entity) {
		vm := obj.(*simulator.VirtualMachine)
		var card *types.VirtualEthernetCard
		for _, d := range vm.Config.Hardware.Device {
			if c, ok := d.(types.BaseVirtualEthernetCard); ok {
				card = c.GetVirtualEthernetCard()
			}
		}
		data := *card
		data.Key = card.Key + 1
		data.DeviceInfo = &types.Description{Label: "Network adapter 2", Summary: "data"}
		v3 := &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: data}, Uptv2Enabled: types.NewBool(true)}
		vm.Config.Hardware.Device = append(vm.Config.Hardware.Device, v3)
		vm.Runtime.Device = []types.VirtualMachineDeviceRuntimeInfo{{Key: v3.Key, RuntimeState: &types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState{Uptv2Active: types.NewBool(true)}}}
	})
	c := s.dial(t)
	rs, err := c.CheckUPTv2(context.Background(), "DC0_H0_VM0")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Subject+": "+string(r.Status))
	}
	want := "VM DC0_H0_VM0, ethernet-0: info\nVM DC0_H0_VM0, Network adapter 2: ok"
	if strings.Join(got, "\n") != want {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	if !strings.Contains(rs[0].Detail, "another adapter of this VM has UPT active") {
		t.Errorf("detail %q", rs[0].Detail)
	}
}

// TestCheckUPTv2Off: the default-mode VM's adapters: UPT active fails,
// every emulated adapter passes (UPT off, another type, UPT on but
// inactive, said so), an unknown runtime state is unknown.
func TestCheckUPTv2Off(t *testing.T) {
	s := newSim(t)
	toVmxnet3(t, s, "DC0_H0_VM0", true, &types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState{Uptv2Active: types.NewBool(true)})
	toVmxnet3(t, s, "DC0_H0_VM1", true, &types.VirtualMachineDeviceRuntimeInfoVirtualEthernetCardRuntimeState{
		Uptv2Active: types.NewBool(false), Uptv2InactiveReasonVm: []string{"vmNptInsufficientMemoryReservation"}})
	toVmxnet3(t, s, "DC0_C0_RP0_VM0", false, nil)
	c := s.dial(t)
	tests := []struct {
		vm     string
		status Status
		detail string
	}{
		{"DC0_H0_VM0", Fail, "UPT active"},
		{"DC0_H0_VM1", Pass, "vmNptInsufficientMemoryReservation"},
		{"DC0_C0_RP0_VM0", Pass, "UPT support off"},
		{"DC0_C0_RP0_VM1", Pass, "adapter type E1000"},
		{"DC0_C0_RP0_VM1", Unknown, "does not say whether it is active"},
	}
	for i, tc := range tests {
		if i == 4 {
			toVmxnet3(t, s, tc.vm, true, nil)
		}
		rs, err := c.CheckUPTv2Off(context.Background(), tc.vm)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Check != CheckUPTv2Off || rs[0].Status != tc.status || !strings.Contains(rs[0].Detail, tc.detail) {
			t.Errorf("%s: %+v, want %s with %q", tc.vm, rs, tc.status, tc.detail)
			continue
		}
		if (rs[0].Status == Fail || rs[0].Status == Unknown) != (rs[0].Hint != "") {
			t.Errorf("%s: hint %q with status %s", tc.vm, rs[0].Hint, rs[0].Status)
		}
	}

	// A VM without a network adapter fails, told to add any adapter (not
	// a VMXNET3 with UPT, as the accelerated VM's check says).
	s.edit(t, "VirtualMachine", "DC0_C0_RP0_VM0", func(obj mo.Entity) {
		vm := obj.(*simulator.VirtualMachine)
		var keep []types.BaseVirtualDevice
		for _, d := range vm.Config.Hardware.Device {
			if _, ok := d.(types.BaseVirtualEthernetCard); !ok {
				keep = append(keep, d)
			}
		}
		vm.Config.Hardware.Device, vm.Runtime.Device = keep, nil
	})
	rs, err := c.CheckUPTv2Off(context.Background(), "DC0_C0_RP0_VM0")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Status != Fail || rs[0].Detail != "the VM has no network adapter" ||
		!strings.Contains(rs[0].Hint, "add a network adapter") || strings.Contains(rs[0].Hint, "VMXNET3") {
		t.Errorf("no adapter: %+v", rs)
	}
}
