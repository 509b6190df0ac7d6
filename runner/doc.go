// Package runner runs the commands of a lab somewhere: on this machine
// (local) or on a lab host over SSH. A Target hides which; the step engine
// only ever talks to Targets, and every value it puts into a command line goes
// through Quote first.
//
// # Where things go
//
//   - target.go: the Target interface and its plain-data types (Command,
//     Result, ProcSpec, Proc).
//   - ops.go: what is the same on every target, written once over a
//     target's simple func: sudo, detached processes (Start, Stop,
//     StopMarked), platform.
//   - local.go, ssh.go: the two targets. sessions.go: how many SSH sessions
//     are open at once. auth.go, hostkey.go, prompt.go: authentication,
//     known_hosts and the questions asked of a person.
//   - errors.go: ConnError and its causes, Hint, SudoError, HostKeyError.
//   - pool.go, inventory.go, ansible.go: hosts.yaml or an Ansible
//     inventory (INI, YAML, ansible-inventory --list JSON) into Hosts,
//     and Hosts into Targets. sshresolve.go: how a host is reached, as
//     OpenSSH would. proxy.go: the ProxyCommand transport.
//   - upload.go: UploadAgent, UploadSelf/UploadBinary and WriteFile.
//     agent.go: AgentFinder, the dpulab agent for a host's platform (next
//     to dpulab, built from source, or cached).
//
// # Host resolution
//
// A host is resolved as OpenSSH would: `ssh -G ALIAS` when the OpenSSH
// client is installed (its answer is the truth, Match blocks and all),
// run with -F for the config files the Pool was given and with the
// inventory's port and user as -p and -l, so Match user sees them. The
// inventory's Port, User, Identity, ProxyJump and known_hosts win over
// the config files. Without the client, kevinburke/ssh_config reads the
// files; Match blocks other than "all" and "host" are skipped with a
// warning naming file and line (Pool.Warnings). Used from the answer:
// HostName, User, Port, IdentityFile, IdentitiesOnly, IdentityAgent,
// CertificateFile, ProxyJump, ProxyCommand, UserKnownHostsFile,
// GlobalKnownHostsFile, HashKnownHosts, StrictHostKeyChecking.
//
// Host keys are checked against every known_hosts file (@cert-authority,
// @revoked and hashed entries included); a host certificate no CA vouches
// for is judged by its plain key, as OpenSSH does. Accepted keys go to the
// first user file, hashed when HashKnownHosts says so.
//
// # goph
//
// The product card's SSH library, github.com/melbahja/goph v1.5.2, is
// used where it fits: the auth chain is a goph.Auth, keys are parsed with
// goph.GetSignerForRawKey, each connection is a goph.Client described by
// its goph.Config (user, address, port, auth, timeout, host-key
// callback), and uploads and reads go through goph.Client.NewSftp. goph
// cannot make the connection itself: goph.NewConn/Dial call ssh.Dial on
// TCP, so they take no net.Conn (ProxyJump's direct-tcpip channel, a
// ProxyCommand's pipes), no context (cancelling a dial, lifting the
// deadline while a person answers a prompt), no HostKeyAlgorithms (asking
// for the key type known_hosts holds) and no AuthCallback (telling which
// methods the server offered). So the handshake is ssh.NewClientConn over
// our own net.Conn, with the ssh.ClientConfig clientConfig derives from
// the goph.Config. goph has no keepalives, no session limit, and its
// Cmd cannot end a remote process group: keepAlive, sessionSlots and
// killGroup do those.
//
// # SSH sessions
//
// An SSHTarget keeps a connection per host and opens a session per
// command. OpenSSH allows MaxSessions sessions per connection (10 by
// default) and refuses more ("open failed"); the limit is not announced, so
// the target learns it from the first refusal and then queues opens for a
// free slot. A refused open is retried, never reported, while any other
// session of ours is open; one refused while none is open is retried
// briefly, then reported (CauseSessionRefused). The sftp subsystem is a
// session: it holds a slot while open and gives it up when idle and
// another session waits. Keepalives are global requests and hold none.
// When every slot is taken, the target opens another connection to the
// host (up to four in all), using only what the first dial learnt (nobody
// is asked again), so that a few long commands (samplers, a bench) never
// hold every session a host allows.
// Concurrent operations that find no connection share one dial and its
// outcome, so a host key question is asked once per target, and a refused
// key is not asked about again.
//
// # Processes
//
// Start runs a command detached (setsid: its own process group), with a
// small shell as group leader whose command line names the log and pid
// files. A Proc is plain data, saved in a lab's progress; Stop ends its
// group later, checking the group is still the one started. Two things
// make sure no interrupt leaves a process nobody can find:
//
//   - A Start whose ctx ends while it waits for the pid stops what it
//     launched before returning (a claim directory decides, atomically,
//     whether the launcher or the cancel comes first).
//   - StopMarked ends every process group whose leader's command line
//     carries a marker path, such as the run's working directory holding
//     the log files: save the marker before the first Start, and call
//     StopMarked at cleanup and at the start of the next run.
//
// StopAll stops many the same way: one command per batch of up to 64
// sends SIGTERM to every group, SIGKILL after the grace to those left,
// then checks each group is gone; a group alive after SIGKILL is an error,
// never "stopped" (Stop and StopMarked check the same way).
//
// StartAll starts many processes on one target with a few commands (one
// session per batch of up to 16, four batches at once, within sshd's
// MaxSessions) instead of one session per process; each process is what
// Start makes of it (own group, same leader, own claim), and each batch's
// Procs are handed to a callback as soon as their pids are known, so a
// caller saves them before the next batch ends.
//
// # Errors
//
// A failure to reach a host, or a lost connection, is a *ConnError whose
// Cause says why (refused, unreachable, DNS, authentication with the
// methods tried and offered, identity file missing/unreadable/encrypted,
// host key unknown/changed/changed type, connection lost). Hint(err) gives
// what to do about it for any error that has one in its chain; the step
// engine shows it instead of a step's own hint. Errors name their host
// once.
//
// # Files
//
// Upload and WriteFile write through a temporary file in the destination's
// directory, renamed over the destination: a reader never sees half a
// file, a running binary is not disturbed, every error path removes the
// temporary, and one left by a killed dpulab goes away with its directory.
package runner
