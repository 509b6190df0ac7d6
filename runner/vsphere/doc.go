// Package vsphere reads what the hypervisor knows about a lab that runs on
// vSphere, through VMware's Go SDK (github.com/vmware/govmomi): the ESXi
// hosts' real-time performance counters while a bench runs, and the
// prerequisites of DPU offload. On vSphere the work a DPU takes over (the
// vSwitch, the Geneve overlay, the NSX distributed firewall) runs in the
// hypervisor, which a guest's /proc/stat cannot see: these are the figures
// that show it, labelled "host (ESXi)" (Source).
//
// # Connecting
//
// Dial takes a Config (FromInventory builds one from the inventory's
// vcenter section). The certificate is pinned as an SSH host key is: a
// SHA-256 thumbprint in the inventory (vcenter.thumbprint), else the
// known-thumbprints file (DefaultKnownThumbprints, under the user's state
// directory, written atomically). A server not known yet is refused with
// its thumbprint and what to do (*ThumbprintError, Unknown), unless
// AcceptNew (--accept-new-host-keys) or Approved (the person accepted the
// thumbprint they were shown) says to save it; a changed thumbprint is
// always refused, with both thumbprints, the pinning line and what it may
// mean. Whether the certificate also verifies against the system's CAs is
// reported (CAVerified) but does not decide: vCenter's own VMCA issues
// most vCenter certificates. The password is asked for (Config.Password)
// only after the certificate is trusted, is sent only in the login, and
// never appears in an error.
//
// # Failures and where figures come from
//
// Every failure to use vCenter is one of a few kinds, each with its own
// message and fix, so that none reads as a missing DPU: a refused
// certificate (*ThumbprintError: both thumbprints, where vCenter shows its
// own, how to pin it; never a way round it), and *Error of a Problem:
// Unreachable (the address, the port and what was tried, not a Go network
// error), NotVSphere, LoginRefused, NoPassword (which variable to export:
// DefaultPasswordEnv unless vcenter.password_env names another) and
// NotFound (the ESXi host or VM looked up, and the names vCenter has).
// Both carry Hint(), which the engine shows instead of the step's hint.
//
// Client.Origin says what the server is: its url, product and version as
// it reports them, and Simulated for govmomi's simulator (it sets the
// option vcsim.server.url, which no real vCenter has), whose figures are
// labelled SIMULATED wherever they go.
//
// # How the engine calls it
//
// The engine does this in steps/vsphere.go (session, sampler) and
// steps/vsphere_check.go (check steps with vsphere:), per run:
//
//  1. With inv.VCenter set, before the first step that needs it:
//     cfg := vsphere.FromInventory(inv.VCenter, askSecret);
//     cfg.AcceptNew = acceptNewHostKeys (and, with --state-dir,
//     cfg.KnownThumbprints = filepath.Join(stateDir,
//     vsphere.KnownThumbprintsName)); c, err := vsphere.Dial(ctx, cfg).
//     On a *ThumbprintError with Unknown(), the TUI may show Got and ask,
//     then Dial again with cfg.Approved = Got; headless, the error stops
//     the run as an unknown SSH host key does. Close(ctx) when the run
//     ends, on every path (it logs out; a keep-alive holds the session
//     open in between).
//  2. Checks: c.Checks(ctx, targets), one Target{Host: h.ESXi, VM:
//     h.VMName()} per inventory host with ESXi set, gives one Result per
//     DPU host, per VM adapter for UPTv2 and for network offload; show
//     each with its Status and, when Fail or Unknown, its Hint. Fail
//     stops a real run; a rehearsal shows them as notes. Info marks a
//     VM's other adapters (management) when one of its adapters passes.
//  3. Bench: run a Sampler{Client: c, Hosts: distinct ESXi hosts of the
//     server roles, VMs: their VM names, Since: the bench's start, Note:
//     a once-per-message notice} in a goroutine. vSphere's real-time
//     interval is 20 s and a sample is published after its interval ends,
//     so keep it running until points reach the bench's end or for two
//     intervals more, then cancel its context (Run returns nil). Points
//     arrive per second (each 20 s value held over its seconds, Interval
//     saying so) and merge by T into the run's per-second series beside
//     the guests' samples, under Source.
//  4. Dry run: Plan(url, targets, hosts, vms) lists every vSphere query
//     above, per object, without connecting.
//
// Tests run against govmomi's simulator package (an in-process vCenter):
// the simulator is the only vCenter these tests see, so every figure they
// produce is the simulator's made-up data, never a measurement.
package vsphere
