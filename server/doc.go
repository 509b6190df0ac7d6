// Package server is dpulab's bundled Redis-compatible server: what `dpulab
// server` runs on every lab host, and what the RDMA transport plugs into.
//
// # Using it as a library
//
//	cfg := server.DefaultConfig()          // Redis's defaults: 127.0.0.1 and ::1, port 6379
//	cfg.Port = 7000
//	if err := cfg.LoadFile("redis.conf"); err != nil { ... } // optional
//	if err := cfg.Validate(); err != nil { ... }
//	srv, err := server.New(cfg)
//	err = srv.ListenAndServe(ctx)          // until ctx is done, Shutdown, or SHUTDOWN
//
// StartLocal starts an instance on a free loopback port for tests and for
// other packages' tests (the load generator's).
//
// # How it runs
//
// On Linux one event loop per instance serves every TCP and Unix socket
// client, as Redis's ae loop does (loop_linux.go): a goroutine locked to its
// thread waits in epoll_wait for all clients, reads once from each ready
// one into its buffer, then parses every complete command of all of them
// (arguments are sub-slices of the buffer, see resp.ParseCommand) and runs
// them while holding Server.mu once, then writes each client's replies with
// one write. A client whose replies do not fit the socket waits for
// EPOLLOUT and is not read meanwhile. Accepting, the maxclients and
// protected-mode checks stay on Go's listeners (conn.go's handle), which
// hand the socket's descriptor to the loop. Elsewhere, and for connections
// without a descriptor (net.Pipe in tests, later RDMA), a goroutine per
// connection runs the same batch (conn.go's serve and process; both paths
// share runCommands). DPULAB_SERVER_LOOP=goroutine forces the goroutine
// path, for A/B measurements. Commands therefore run with the lock held and
// never lock anything themselves; they must not block. To close another
// client use Client.closeConn, which works on both paths.
//
// # Output for another client: pub/sub and blocked clients
//
// A PUBLISH writes to its subscribers, a push answers the clients a
// BLPOP blocked, a timer answers one that timed out. Server.deliver (in
// client.go) appends such output straight to the receiver's out buffer
// when the caller runs on the goroutine that owns that buffer (the
// receiver itself, or any client of the same event loop: the loop runs
// all its clients' commands on its one goroutine, then flushes every
// client written to, eventLoop.outq). Otherwise (a goroutine-path client,
// a timer) it appends to the receiver's async buffer under Server.mu and
// wakes its owner: the loop through its eventfd (eventLoop.notifyAsync),
// a goroutine-path client by a read deadline in the past that interrupts
// its Read. runCommands moves async into out before it runs anything, so
// a client sees everything in the order it happened under the lock. The
// hot path pays a flag and a length check per command. client-output-
// buffer-limit's classes bound what waits for a client (pubsub_limits.go).
//
// Blocked clients (blocking.go) wait on their keys in arrival order; a
// blocked client's further input stays in its buffer. db.touch marks a
// key with waiters ready, and after each command (after EXEC as a whole)
// Server.serveReady offers the ready keys to their waiters, running the
// command's serve function as the blocked client through a scratch
// client (Server.replyWriter) and delivering the reply as above; the
// client's remaining commands run next. Inside EXEC nothing blocks.
// CLIENT PAUSE holds commands back the same way (client_pause.go): the
// dispatcher rewinds the client to the start of the command it postpones,
// the client waits as a blocked one, and the pause's end runs it again.
//
// CLIENT TRACKING (tracking.go) uses the same path: db.touch reports
// every change to a key while some client tracks (writes, lazy and active
// expiry, eviction; FLUSHDB/FLUSHALL send a null), and the invalidation
// goes to the tracking client or its REDIRECT target through deliver; one
// for the running client itself waits until after its reply, and BCAST
// batches are sent after each command (and after active expiry).
// CLIENT REPLY OFF/SKIP (cmd_client_reply.go) cuts what a command wrote
// from the client's out after it ran; delivered output is not a reply and
// still arrives, as in Redis.
//
// INFO commandstats is charged per batch (one clock read per batch, not
// per command); the slow log times a command on its own only when it can
// be slow (slowlog.go). LATENCY HISTOGRAM (latency.go) takes its samples
// from the same per-batch timing.
//
// # Scripts
//
// EVAL and FCALL run Lua 5.1 (gopher-lua, script.go) on the goroutine of
// the command, with Server.mu held like any command: a script is atomic
// because nothing else runs meanwhile. redis.call runs a command as the
// scripts' scratch client (scriptEngine.w, with the caller's database and
// protocol as set by redis.setresp) through the dispatcher's checks and
// the command's Fn, directly, without locking, then parses the RESP it
// wrote into Lua values. Every few thousand VM instructions the VM's
// context (scriptCtx) checks the clock: past busy-reply-threshold
// (lua-time-limit) the event loop's other clients are read and answered
// from inside the script (serveBusy, at most once a millisecond): BUSY to
// all but SCRIPT KILL, FUNCTION KILL, FUNCTION STATS and SHUTDOWN NOSAVE,
// which run. A killed script raises an error at its next instruction.
// Clients on the goroutine path wait for the lock until the script ends.
//
// # What a client can make the server hold
//
// A client's read buffer grows with what has arrived (it doubles when
// full), never with what a length line announced; while a bulk of known
// length arrives it stops at that argument's end plus one read's room
// (resp.Needed), and a big argument stored by a SET-like command becomes
// the value itself instead of being copied (Client.takeArg; the client
// then moves to a fresh buffer, see settle). A buffer grown for a big
// command is dropped after it, and every buffer when the client leaves
// (Client.release), on both paths; with TuneGC managing the collector, a
// dropped buffer of 16 MB or more is collected and returned to the OS at
// once (returnMemory) rather than at the next collection, which an idle
// server may not run for minutes. CLIENT LIST shows the sizes (qbuf,
// qbuf-free, omem for replies not yet written, tot-mem). Until a client has
// given the password (requirepass), Redis's limits apply: at most 10
// arguments of at most 16384 bytes, refused on the length line with
// Redis's protocol errors (resp.Limits.Unauthenticated).
//
// As Redis does at start, New fits maxclients to RLIMIT_NOFILE (raising
// the soft limit toward the hard one first, and logging Redis's warnings
// when it must reduce it; fdlimit_unix.go), and CONFIG SET maxclients
// refuses what the limit cannot hold. Clients past maxclients get "ERR
// max number of clients reached". If accept still fails for lack of
// descriptors (other instances in the process, other files), a spare
// descriptor lets the waiting client get that error instead of hanging
// in the backlog (Server.shed), and the accept loop waits rather than
// spins. Instances in one process each fit themselves to the whole limit.
//
// # Stopping
//
// SIGTERM (the context Serve runs under), SHUTDOWN and Shutdown close the
// listeners and clients; Serve then waits for the event loop and the
// connection goroutines at most shutdownGrace (shutdown.go): a command
// running meanwhile holds Server.mu and cannot be interrupted, so, as
// Redis may exit mid-command on a shutdown signal, Serve does the normal
// cleanup (pid file, Unix socket, log) and returns without it. Work a
// client can ask for is bounded so that no command runs forever: glob
// patterns (glob.go) are matched in O(pattern x string) with Redis's
// nesting limit.
//
// # When a command panics
//
// No panic should be reachable from the network: commands validate every
// argument and check integers for overflow before using them, and
// FuzzCommands (fuzz_test.go) runs the whole table with hostile arguments.
// As defence in depth, exec recovers a panic of the command it runs
// (contain.go): the partial reply is dropped, the client gets "ERR
// internal error in NAME" and is closed, the stack is logged once per
// command name a minute, INFO errorstats counts errorstat_INTERNAL, and
// every other client carries on. The recover runs inside exec, so
// Server.mu stays held and the connection path releases it as usual; the
// client's per-command state (cur, multi, denyBlocking) is reset and the
// memory of the keys it touched is recounted. A Go runtime fatal error
// (stack exhaustion, concurrent map writes) cannot be recovered, which is
// one more reason recursion is bounded (glob.go).
//
// What a recovered panic can leave behind is a write half done. Commands
// that change several things in sequence can: MSET/MSETNX (keys set one
// by one), LMOVE/RPOPLPUSH/BLMOVE and SMOVE (removed from the source
// before added to the destination), RENAME/COPY/MOVE, the *STORE
// commands (destination replaced after the result is computed), BITFIELD
// with several SET/INCRBY, EXEC (the commands before the panicking one
// have run, as they would in Redis if it crashed after them), and serving
// a blocked client (the element is popped before the reply is
// delivered). Containment does not undo them; it keeps the server alive
// and the keyspace consistent per key (each container is valid after
// every single change). What keeps a key whole is the rule every command
// follows: parse and validate all arguments, and compute what can fail,
// before the first change (Redis's own order: ZADD parses every score,
// BITFIELD every operation, SET every option before touching the key),
// so a panic in parsing, the likely kind, changes nothing.
//
// # Adding a command group
//
// A group lives in cmd_<group>.go (tests in cmd_<group>_test.go) and
// registers its commands from init:
//
//	func init() { registerGroup(registerListCommands) }
//
//	func registerListCommands(t *commandTable) {
//		t.add(
//			&command{Name: "lpush", Fn: cmdLPush, Arity: -3, Flags: flagWrite | flagDenyOOM | flagFast,
//				FirstKey: 1, LastKey: 1, Group: "list", Summary: "Prepend elements to a list", Since: "1.0.0"},
//			...
//		)
//	}
//
// Arity follows Redis (N = exactly N arguments counting the name, -N = at
// least N); the dispatcher checks it, and authentication and maxmemory, before
// calling Fn, and replies Redis's errors. Flags: flagWrite for commands that
// change data, flagReadonly for readers, flagDenyOOM for those that can grow
// memory (refused with OOM at maxmemory under noeviction), flagFast for O(1)
// or O(log N) ones. A command with subcommands (CLIENT, CONFIG) sets
// Subcommands to commands named "parent|sub" and no Fn. COMMAND INFO
// derives ACL categories from Group and Flags; a command with keys also
// needs Redis's key-spec flags in command_info.go's keySpecFlags (and its
// tips in commandTips), which TestKeySpecsCoverKeys checks.
//
// A command function is func(c *Client, args [][]byte). args[0] is the name;
// the arguments alias the read buffer and are only valid during the call:
// copy what you store (setString copies, or takes over a big argument the
// client gives up; containers must copy elements).
//
// # Replying
//
// Write exactly one reply per command with the Client's methods, which pick
// the RESP2 or RESP3 form by the connection's protocol (HELLO):
// writeOK, writeSimple, writeError (text starting with its code, e.g.
// "ERR syntax error"; shared texts: errWrongType, errNotInt, errNotFloat,
// errSyntax ...), writeErr(err), writeInt, writeBulk, writeBulkString,
// writeNull (missing value: $-1 / _), writeNullArray (*-1 / _), writeArray(n),
// writeMap(n) (n pairs: %n in RESP3, *2n in RESP2 — e.g. HGETALL),
// writeSet(n) (~n / *n — e.g. SMEMBERS), writeDouble (,d / bulk — e.g.
// ZSCORE), writeBool (#t / :1), writeVerbatim, writeArityError(name).
// Parse numbers as Redis does (util.go's parseInt, type_numbers.go's
// parseRedisInt, parseRedisDouble, parseLongDouble) and reply errNotInt /
// errNotFloat on failure.
//
// # Transactions and WATCH
//
// Inside MULTI the dispatcher (conn.go's exec) queues commands with a copy
// of their arguments and EXEC runs them through Client.call (cmd_multi.go).
// WATCH relies on db.touch being called for every change to a key: db.put,
// db.remove and db.setExpire call it, and so does getObject for a write
// command; code that changes d.keys or d.expires directly must call
// c.db.touch(key) itself.
//
// # Values
//
// A key holds a kind (kindString, kindList, kindHash, kindSet, kindZSet,
// kindStream). Strings are stored compactly by the keyspace (getString,
// setString). Every other kind is a Go value implementing object
// (memUsage() int, O(1)), defined in type_<kind>.go:
//
//	l, found, err := getObject[*listValue](c, key, kindList) // err = WRONGTYPE
//	l, err := getOrCreateObject(c, key, kindList, newListValue)
//	c.deleteKey(key)    // when a command empties a container
//	c.signalModified(key) // once per changed key, for INFO's dirty counter
//
// Values returned by getObject are modified in place; after a write
// command (flagWrite) the keyspace calls memUsage again to keep the memory
// total (maxmemory, INFO) current, so nothing else is needed. Never keep a
// value beyond the command. Expired keys are invisible to getObject and
// getString (lazy expiry) and removed in the background (active expiry).
//
// Two groups live inside other kinds, in Redis's own formats so that values
// and replies match redis-server's bit for bit: a GEO set is a sorted set
// whose scores are 52-bit geohashes (geo.go ports geohash.c and
// geohash_helper.c, with glibc's rounding of the trigonometry;
// cmd_geo.go), and a HyperLogLog is a string in Redis's HYLL sparse or
// dense encoding (hll.go, cmd_hll.go), edited in place like SETBIT's
// strings and stored anew when it grows or turns dense.
package server
