// Package netpath builds the emulated network paths of the offload
// comparison (issue 13) on a runner.Target: two network namespaces, a
// server's and a client's, joined three ways that mirror the whitepaper's
// three modes. Each is an emulation on one Linux kernel, not a DPU
// measurement: it reproduces the host-side work a DPU takes away (overlay
// encapsulation, a stateful distributed firewall), not PCIe, Arm cores or
// a hypervisor.
//
//   - Direct (full offload, UPTv2 stand-in): a plain veth pair.
//   - Firewall (partial offload): the same veth, with every packet of the
//     server's "vNIC" walking a stateful nftables chain of N rules that do
//     not match the benchmark traffic (connection tracking on).
//   - OverlayFirewall (the host does it all): the traffic encapsulated in
//     Geneve where the kernel has it, else VXLAN (Path.Encap says which and
//     Path.EncapNote why), plus the same firewall on the overlay device.
//
// Everything is made with `ip` and `nft` as shell commands (every value
// through runner.Quote), so the same code works on this machine and on a
// lab host over SSH. Every object is named Prefix + run id (namespaces,
// links, the nftables table), every address comes from 198.18.0.0/15 (RFC
// 2544's benchmarking range), and nothing is made in the target's own
// network namespace: the veth ends and the overlay devices are created
// inside the path's namespaces, and the firewall's table lives in the
// server's. Deleting the two namespaces therefore removes all of it.
//
// # Where things go
//
//   - netpath.go: Variant, Config, Path (plain data, JSON-able, so a lab's
//     progress can keep it and a later run can tear it down), Make,
//     Teardown, and how to run a command inside a namespace.
//   - firewall.go: the nftables ruleset and its counters.
//   - counters.go: Counters and `ip -s -j link` parsing.
//   - probe.go: Probe, what can be made here and, when not, why.
//   - sweep.go: Sweep and SweepAll, removing what a crashed run left.
//   - sh.go: running one command and collecting its output.
package netpath
