package server

// DUMP and RESTORE move one value between servers in Redis 7.0's RDB
// serialization (rdb.go), so a value DUMPed by redis-server restores
// here and ours restores there. They are registered in cmd_keys.go with
// the other generic key commands; RESTORE-ASKING, what MIGRATE sends to
// a cluster node importing the slot, is RESTORE outside a cluster.

func init() { registerGroup(registerDumpCommands) }

func registerDumpCommands(t *commandTable) {
	t.add(&command{Name: "restore-asking", Fn: cmdRestore, Arity: -4, Flags: flagWrite | flagDenyOOM | flagAsking,
		FirstKey: 1, LastKey: 1, Group: "server",
		Summary: "An internal command for migrating keys in a cluster", Since: "3.0.0"})
}

const (
	errBusyKey       = "BUSYKEY Target key name already exists."
	errDumpPayload   = "ERR DUMP payload version or checksum are wrong"
	errBadTTL        = "ERR Invalid TTL value, must be >= 0"
	errBadIdleTime   = "ERR Invalid IDLETIME value, must be >= 0"
	errBadFreq       = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	lruClockMax      = lruMask // Redis's LRU_CLOCK_MAX
	restoreNoLRUInfo = -1
)

// cmdDump is DUMP key: the serialized value, or null.
func cmdDump(c *Client, args [][]byte) {
	e, ok := c.lookup(args[1])
	if !ok {
		c.writeNull()
		return
	}
	c.writeBulk(dumpPayload(e))
}

// cmdRestore is RESTORE key ttl serialized-value [REPLACE] [ABSTTL]
// [IDLETIME seconds] [FREQ frequency], checked in cluster.c's order:
// options, the key's existence, the TTL, the payload's trailer, then the
// payload itself.
func cmdRestore(c *Client, args [][]byte) {
	replace, absTTL := false, false
	idle, freq := int64(restoreNoLRUInfo), int64(restoreNoLRUInfo)
	for j := 4; j < len(args); j++ {
		more := len(args) - j - 1
		switch {
		case equalFold(args[j], "replace"):
			replace = true
		case equalFold(args[j], "absttl"):
			absTTL = true
		case equalFold(args[j], "idletime") && more >= 1 && freq == restoreNoLRUInfo:
			v, ok := parseInt(args[j+1])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			if v < 0 {
				c.writeError(errBadIdleTime)
				return
			}
			idle = v
			j++
		case equalFold(args[j], "freq") && more >= 1 && idle == restoreNoLRUInfo:
			v, ok := parseInt(args[j+1])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			if v < 0 || v > 255 {
				c.writeError(errBadFreq)
				return
			}
			freq = v
			j++
		default:
			c.writeError(errSyntax)
			return
		}
	}
	key := args[1]
	old, exists := c.db.get(key, c.now)
	if exists && !replace {
		c.writeError(errBusyKey)
		return
	}
	ttl, ok := parseInt(args[2])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	if ttl < 0 {
		c.writeError(errBadTTL)
		return
	}
	obj, ok := verifyDumpPayload(args[3])
	if !ok {
		c.writeError(errDumpPayload)
		return
	}
	k, str, o, err := loadPayload(obj, c.tuning())
	if err != nil {
		c.writeError(errBadData.Error())
		return
	}
	if exists {
		c.db.remove(string(key), old)
	}
	if ttl != 0 && !absTTL {
		ttl += c.now
	}
	if ttl != 0 && ttl <= c.now {
		// Already expired: nothing is created (the old value is gone).
		if exists {
			c.srv.stats.dirty++
		}
		c.writeOK()
		return
	}
	bits := c.srv.newClock
	switch {
	case c.srv.lfu && freq >= 0:
		bits = c.srv.lfuMinutes<<8 | uint32(freq)
	case !c.srv.lfu && idle >= 0:
		clock := int64(c.srv.lruClock)
		abs := clock - idle
		if idle > clock {
			// The clock wraps: as Redis, half-way into the future.
			abs = (clock + lruClockMax/2) % lruClockMax
		}
		bits = uint32(abs)
	}
	var e entry
	if k == kindString {
		e = stringEntry(str, bits)
	} else {
		e = objectEntry(&objBox{o: o, mem: o.memUsage()}, k, bits)
	}
	shared := c.db.put(key, e)
	if ttl != 0 {
		c.db.setExpire(key, shared, ttl)
	}
	c.srv.stats.dirty++
	c.writeOK()
}
