package server

// What a replication-aware client asks a master that has no replicas
// (dpulab's server never has any): WAIT and ROLE, as Redis 7.0 answers
// them on a master without replicas. INFO replication is in cmd_server.go.

func init() { registerGroup(registerReplicationCommands) }

func registerReplicationCommands(t *commandTable) {
	t.add(
		&command{Name: "wait", Fn: cmdWait, Arity: 3, Flags: flagNoScript, Group: "generic", Summary: "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", Since: "3.0.0"},
		&command{Name: "role", Fn: cmdRole, Arity: 1, Flags: flagNoScript | flagLoading | flagStale | flagFast, Group: "server", Summary: "Returns the replication role.", Since: "2.8.12"},
	)
}

// cmdWait is WAIT numreplicas timeout: no replica ever acknowledges, so
// asking for none replies 0 at once and asking for more waits out the
// timeout (0: for good, until CLIENT UNBLOCK) and then replies 0, as
// Redis does; inside EXEC it replies 0 at once.
func cmdWait(c *Client, args [][]byte) {
	n, ok := parseInt(args[1])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	deadline, ok := parseBlockTimeout(c, args[2], false)
	if !ok {
		return
	}
	if n <= 0 || c.denyBlocking {
		c.writeInt(0)
		return
	}
	blockOn(c, nil, deadline, func(w *Client, key string) bool { return false }, func(w *Client) { w.writeInt(0) })
}

// cmdRole: a master at replication offset 0 with no replicas.
func cmdRole(c *Client, args [][]byte) {
	c.writeArray(3)
	c.writeBulkString("master")
	c.writeInt(0)
	c.writeArray(0)
}
