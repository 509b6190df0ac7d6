package server

import (
	"math"
	"strings"
)

// Consumer groups (Redis 7.0 t_stream.c): XGROUP, XREADGROUP, XACK,
// XPENDING, XCLAIM, XAUTOCLAIM and XINFO. Argument checks, their order
// and the replies follow Redis; XREADGROUP BLOCK waits through the same
// blockOn as XREAD BLOCK.

func init() { registerGroup(registerStreamGroupCommands) }

func registerStreamGroupCommands(t *commandTable) {
	const g = "stream"
	w, r := flagWrite, flagReadonly
	t.add(
		&command{Name: "xgroup", Arity: -2, Group: g, Summary: "A container for consumer groups commands", Since: "5.0.0",
			Subcommands: []*command{
				{Name: "xgroup|create", Fn: cmdXGroup, Arity: -5, Flags: w | flagDenyOOM, FirstKey: 2, LastKey: 2, Group: g, Summary: "Create a consumer group.", Since: "5.0.0"},
				{Name: "xgroup|setid", Fn: cmdXGroup, Arity: -5, Flags: w, FirstKey: 2, LastKey: 2, Group: g, Summary: "Set a consumer group to an arbitrary last delivered ID value.", Since: "5.0.0"},
				{Name: "xgroup|destroy", Fn: cmdXGroup, Arity: 4, Flags: w, FirstKey: 2, LastKey: 2, Group: g, Summary: "Destroy a consumer group.", Since: "5.0.0"},
				{Name: "xgroup|createconsumer", Fn: cmdXGroup, Arity: 5, Flags: w | flagDenyOOM, FirstKey: 2, LastKey: 2, Group: g, Summary: "Create a consumer in a consumer group.", Since: "6.2.0"},
				{Name: "xgroup|delconsumer", Fn: cmdXGroup, Arity: 5, Flags: w, FirstKey: 2, LastKey: 2, Group: g, Summary: "Delete a consumer from a consumer group.", Since: "5.0.0"},
				{Name: "xgroup|help", Fn: cmdXGroupHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Show helpful text about the different subcommands", Since: "5.0.0"},
			}},
		&command{Name: "xreadgroup", Fn: cmdXReadGroup, Arity: -7, Flags: w, Group: g, Summary: "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", Since: "5.0.0"},
		&command{Name: "xack", Fn: cmdXAck, Arity: -4, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", Since: "5.0.0"},
		&command{Name: "xpending", Fn: cmdXPending, Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Group: g, Summary: "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", Since: "5.0.0"},
		&command{Name: "xclaim", Fn: cmdXClaim, Arity: -6, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", Since: "5.0.0"},
		&command{Name: "xautoclaim", Fn: cmdXAutoClaim, Arity: -6, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: g, Summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", Since: "6.2.0"},
		&command{Name: "xinfo", Arity: -2, Group: g, Summary: "A container for stream introspection commands", Since: "5.0.0",
			Subcommands: []*command{
				{Name: "xinfo|stream", Fn: cmdXInfoStream, Arity: -3, Flags: r, FirstKey: 2, LastKey: 2, Group: g, Summary: "Get information about a stream", Since: "5.0.0"},
				{Name: "xinfo|groups", Fn: cmdXInfoGroups, Arity: 3, Flags: r, FirstKey: 2, LastKey: 2, Group: g, Summary: "List the consumer groups of a stream", Since: "5.0.0"},
				{Name: "xinfo|consumers", Fn: cmdXInfoConsumers, Arity: 4, Flags: r, FirstKey: 2, LastKey: 2, Group: g, Summary: "List the consumers in a consumer group", Since: "5.0.0"},
				{Name: "xinfo|help", Fn: cmdXInfoHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Show helpful text about the different subcommands", Since: "5.0.0"},
			}},
	)
}

// writeStreamID replies an ID as a bulk string.
func (c *Client) writeStreamID(id StreamID) {
	var buf [48]byte
	c.writeBulk(appendStreamID(buf[:0], id))
}

// writeStreamEntry replies [id, [field, value...]].
func (c *Client) writeStreamEntry(e StreamEntry) {
	c.writeArray(2)
	c.writeStreamID(e.ID)
	c.writeArray(e.numFields())
	e.eachField(c.writeBulk)
}

// entry returns the entry with this ID.
func (s *Stream) entry(id StreamID) (StreamEntry, bool) {
	es := s.Range(id, id, 1, false)
	if len(es) == 0 {
		return StreamEntry{}, false
	}
	return es[0], true
}

func noGroupError(key, group []byte) string {
	return "NOGROUP No such key '" + string(key) + "' or consumer group '" + string(group) + "'"
}

func cmdXGroup(c *Client, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	create, setid := sub == "create", sub == "setid"
	mkstream := false
	entriesRead := int64(invalidEntriesRead)
	for i := 5; i < len(args); {
		switch {
		case create && equalFold(args[i], "mkstream"):
			mkstream = true
			i++
		case (create || setid) && equalFold(args[i], "entriesread") && i+1 < len(args):
			n, ok := parseInt(args[i+1])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			if n < 0 && n != invalidEntriesRead {
				c.writeError("ERR value for ENTRIESREAD must be positive or -1")
				return
			}
			entriesRead = n
			i += 2
		default:
			c.writeError("ERR unknown subcommand or wrong number of arguments for '" + truncate(args[1], 128) + "'. Try XGROUP HELP.")
			return
		}
	}
	key, name := args[2], args[3]
	s, found, err := getObject[*Stream](c, key, kindStream)
	if err != nil {
		c.writeErr(err)
		return
	}
	var g *streamGroup
	if !mkstream {
		if !found {
			c.writeError("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
			return
		}
		if g = s.group(name); g == nil && (setid || sub == "createconsumer" || sub == "delconsumer") {
			c.writeError("NOGROUP No such consumer group '" + string(name) + "' for key name '" + string(key) + "'")
			return
		}
	}
	switch {
	case create && len(args) <= 8:
		var id StreamID
		if string(args[4]) == "$" {
			if found {
				id = s.LastID()
			}
		} else {
			var ok bool
			if id, _, ok = parseStreamID(string(args[4]), 0, true, false); !ok {
				c.writeError(errInvalidStreamID)
				return
			}
		}
		if !found {
			if s, err = getOrCreateObject(c, key, kindStream, newStream); err != nil {
				c.writeErr(err)
				return
			}
		}
		if !s.createGroup(name, id, entriesRead) {
			c.writeError("BUSYGROUP Consumer Group name already exists")
			return
		}
		c.signalModified(key)
		c.writeOK()
	case setid && (len(args) == 5 || len(args) == 7):
		var id StreamID
		if string(args[4]) == "$" {
			id = s.LastID()
		} else {
			var ok bool
			if id, _, ok = parseStreamID(string(args[4]), 0, false, false); !ok {
				c.writeError(errInvalidStreamID)
				return
			}
		}
		g.lastID, g.entriesRead = id, entriesRead
		c.signalModified(key)
		c.writeOK()
	case sub == "destroy":
		if s.destroyGroup(name) {
			c.signalModified(key)
			c.writeInt(1)
		} else {
			c.writeInt(0)
		}
	case sub == "createconsumer":
		if _, created := g.consumer(args[4], true, false, c.now); created {
			c.signalModified(key)
			c.writeInt(1)
		} else {
			c.writeInt(0)
		}
	case sub == "delconsumer":
		n := g.deleteConsumer(args[4])
		c.signalModified(key)
		c.writeInt(int64(n))
	default:
		c.writeError("ERR unknown subcommand or wrong number of arguments for '" + truncate(args[1], 128) + "'. Try XGROUP HELP.")
	}
}

func cmdXGroupHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.",
		"HELP",
		"    Print this help.",
	})
}

func cmdXReadGroup(c *Client, args [][]byte) {
	a, ok := parseXReadArgs(c, args, true)
	if !ok {
		return
	}
	deadline, block, count, noack, group, consumer, streamsArg := a.deadline, a.block, a.count, a.noack, a.group, a.consumer, a.streams
	if group == nil {
		c.writeError("ERR Missing GROUP option for XREADGROUP")
		return
	}
	n := (len(args) - streamsArg) / 2
	keys := args[streamsArg : streamsArg+n]
	ids := make([]StreamID, n)
	for i, arg := range args[streamsArg+n:] {
		s, found, err := getObject[*Stream](c, keys[i], kindStream)
		if err != nil {
			c.writeErr(err)
			return
		}
		if !found || s.group(group) == nil {
			c.writeError("NOGROUP No such key '" + string(keys[i]) + "' or consumer group '" + string(group) + "' in XREADGROUP with GROUP option")
			return
		}
		switch string(arg) {
		case "$":
			c.writeError("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
			return
		case ">":
			ids[i] = maxStreamID
			continue
		}
		id, _, ok := parseStreamID(string(arg), 0, true, false)
		if !ok {
			c.writeError(errInvalidStreamID)
			return
		}
		ids[i] = id
	}
	// Served at once: the consumer's history for an explicit ID, new
	// entries for ">" when the stream has some past the group's last.
	type serving struct {
		i       int
		history bool
	}
	var ready []serving
	for i, key := range keys {
		s, _, _ := getObject[*Stream](c, key, kindStream)
		if ids[i] != maxStreamID {
			ready = append(ready, serving{i, true})
		} else if s.Len() > 0 && s.group(group).lastID.Less(s.lastValidID()) {
			ready = append(ready, serving{i, false})
		}
	}
	if len(ready) > 0 {
		if c.resp == 3 {
			c.writeMap(len(ready))
		} else {
			c.writeArray(len(ready))
		}
		for _, r := range ready {
			s, _, _ := getObject[*Stream](c, keys[r.i], kindStream)
			g := s.group(group)
			cons, _ := g.consumer(consumer, true, true, c.now)
			if c.resp == 2 {
				c.writeArray(2)
			}
			c.writeBulk(keys[r.i])
			if r.history {
				writeConsumerHistory(c, s, cons, ids[r.i], count)
			} else {
				writeGroupNew(c, s, g, cons, count, noack)
			}
			c.signalModified(keys[r.i])
		}
		return
	}
	if !block {
		c.writeNullArray()
		return
	}
	if count == 0 {
		count = xreadBlockedCount
	}
	groupName, consName := string(group), string(consumer)
	serve := func(w *Client, key string) bool {
		s, found, err := getObject[*Stream](w, []byte(key), kindStream)
		if err != nil || !found {
			return false
		}
		g := s.group([]byte(groupName))
		if g == nil || s.Len() == 0 || !g.lastID.Less(s.lastValidID()) {
			return false
		}
		cons, _ := g.consumer([]byte(consName), true, true, w.now)
		if w.resp == 2 {
			w.writeArray(1)
			w.writeArray(2)
		} else {
			w.writeMap(1)
		}
		w.writeBulkString(key)
		writeGroupNew(w, s, g, cons, count, noack)
		w.signalModified([]byte(key))
		return true
	}
	blockOn(c, keys, deadline, serve, nullArrayReply)
}

// writeGroupNew delivers up to count (0: all) entries past the group's
// last-delivered ID to cons, recording them as pending unless noack.
func writeGroupNew(c *Client, s *Stream, g *streamGroup, cons *streamConsumer, count int64, noack bool) {
	limit := -1
	if count > 0 {
		limit = int(min(count, math.MaxInt32))
	}
	var entries []StreamEntry
	if start, ok := g.lastID.next(); ok {
		entries = s.Range(start, maxStreamID, limit, false)
	}
	c.writeArray(len(entries))
	for _, e := range entries {
		s.advance(g, e.ID)
		c.writeStreamEntry(e)
		if !noack {
			g.deliver(e.ID, cons, c.now)
		}
	}
}

// writeConsumerHistory replies cons's pending entries from after (its
// ID excluded), counting a new delivery of each; an entry deleted since
// comes as its ID with a null in place of its fields.
func writeConsumerHistory(c *Client, s *Stream, cons *streamConsumer, after StreamID, count int64) {
	start, ok := after.next()
	var pend []*pendingEntry
	if ok {
		i, _ := cons.pending.find(start)
		pend = cons.pending[i:]
	}
	if count > 0 && int64(len(pend)) > count {
		pend = pend[:count]
	}
	c.writeArray(len(pend))
	for _, p := range pend {
		e, found := s.entry(p.id)
		if !found {
			c.writeArray(2)
			c.writeStreamID(p.id)
			c.writeNullArray()
			continue
		}
		p.deliveryTime = c.now
		p.deliveryCount++
		c.writeStreamEntry(e)
	}
}

// streamAndGroup looks up a stream and one of its groups for XACK-like
// commands: found is false when either is missing.
func streamAndGroup(c *Client, key, group []byte) (s *Stream, g *streamGroup, found bool, err error) {
	s, found, err = getObject[*Stream](c, key, kindStream)
	if err != nil || !found {
		return nil, nil, false, err
	}
	g = s.group(group)
	return s, g, g != nil, nil
}

func cmdXAck(c *Client, args [][]byte) {
	_, g, found, err := streamAndGroup(c, args[1], args[2])
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	// All IDs are checked before any is acknowledged.
	ids := make([]StreamID, len(args)-3)
	for i, a := range args[3:] {
		id, _, ok := parseStreamID(string(a), 0, true, false)
		if !ok {
			c.writeError(errInvalidStreamID)
			return
		}
		ids[i] = id
	}
	var n int64
	for _, id := range ids {
		if g.ack(id) {
			n++
		}
	}
	if n > 0 {
		c.signalModified(args[1])
	}
	c.writeInt(n)
}

// parseIntervalBound parses XPENDING's and XAUTOCLAIM's start or end: an
// ID, "-"/"+", or "(" for an exclusive one, turned inclusive.
func parseIntervalBound(c *Client, b []byte, missingSeq uint64, isEnd bool) (StreamID, bool) {
	id, ex, ok := parseIntervalID(b, missingSeq)
	if !ok {
		c.writeError(errInvalidStreamID)
		return id, false
	}
	if !ex {
		return id, true
	}
	if isEnd {
		if id == (StreamID{}) {
			c.writeError("ERR invalid end ID for the interval")
			return id, false
		}
		if id.Seq > 0 {
			id.Seq--
		} else {
			id.Ms, id.Seq = id.Ms-1, math.MaxUint64
		}
		return id, true
	}
	next, ok := id.next()
	if !ok {
		c.writeError("ERR invalid start ID for the interval")
		return id, false
	}
	return next, true
}

func cmdXPending(c *Client, args [][]byte) {
	justInfo := len(args) == 3
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		c.writeError(errSyntax)
		return
	}
	var start, end StreamID
	var count, minIdle int64
	var consumerName []byte
	if len(args) >= 6 {
		si := 3
		if equalFold(args[3], "idle") {
			n, ok := parseInt(args[4])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			minIdle = n
			if len(args) < 8 {
				c.writeError(errSyntax)
				return
			}
			si += 2
		}
		n, ok := parseInt(args[si+2])
		if !ok {
			c.writeError(errNotInt)
			return
		}
		count = max(n, 0)
		if start, ok = parseIntervalBound(c, args[si], 0, false); !ok {
			return
		}
		if end, ok = parseIntervalBound(c, args[si+1], math.MaxUint64, true); !ok {
			return
		}
		if si+3 < len(args) {
			consumerName = args[si+3]
		}
	}
	_, g, found, err := streamAndGroup(c, args[1], args[2])
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeError(noGroupError(args[1], args[2]))
		return
	}
	if justInfo {
		c.writeArray(4)
		c.writeInt(int64(len(g.pending)))
		if len(g.pending) == 0 {
			c.writeNull()
			c.writeNull()
			c.writeNullArray()
			return
		}
		c.writeStreamID(g.pending[0].id)
		c.writeStreamID(g.pending[len(g.pending)-1].id)
		var with []*streamConsumer
		for _, name := range g.consumerNames() {
			if cons := g.consumers[name]; len(cons.pending) > 0 {
				with = append(with, cons)
			}
		}
		c.writeArray(len(with))
		for _, cons := range with {
			c.writeArray(2)
			c.writeBulkString(cons.name)
			c.writeBulkString(itoa(int64(len(cons.pending))))
		}
		return
	}
	list := g.pending
	if consumerName != nil {
		cons := g.consumers[string(consumerName)]
		if cons == nil {
			c.writeArray(0)
			return
		}
		list = cons.pending
	}
	i, _ := list.find(start)
	var out []*pendingEntry
	for ; count > 0 && i < len(list) && !end.Less(list[i].id); i++ {
		p := list[i]
		if minIdle != 0 && c.now-p.deliveryTime < minIdle {
			continue
		}
		out = append(out, p)
		count--
	}
	c.writeArray(len(out))
	for _, p := range out {
		c.writeArray(4)
		c.writeStreamID(p.id)
		c.writeBulkString(p.consumer.name)
		c.writeInt(max(c.now-p.deliveryTime, 0))
		c.writeInt(p.deliveryCount)
	}
}

func cmdXClaim(c *Client, args [][]byte) {
	s, g, found, err := streamAndGroup(c, args[1], args[2])
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeError(noGroupError(args[1], args[2]))
		return
	}
	minIdle, ok := parseInt(args[4])
	if !ok {
		c.writeError("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	for ; j < len(args); j++ {
		if _, _, ok := parseStreamID(string(args[j]), 0, true, false); !ok {
			break
		}
	}
	lastIDArg := j - 1
	now := c.now
	var lastID StreamID
	var force, justID bool
	retryCount, deliveryTime := int64(-1), int64(-1)
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := args[j]
		var n int64
		switch {
		case equalFold(opt, "force"):
			force = true
		case equalFold(opt, "justid"):
			justID = true
		case equalFold(opt, "idle") && more > 0:
			j++
			if n, ok = parseInt(args[j]); !ok {
				c.writeError("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			deliveryTime = now - n
		case equalFold(opt, "time") && more > 0:
			j++
			if n, ok = parseInt(args[j]); !ok {
				c.writeError("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			deliveryTime = n
		case equalFold(opt, "retrycount") && more > 0:
			j++
			if retryCount, ok = parseInt(args[j]); !ok {
				c.writeError("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
		case equalFold(opt, "lastid") && more > 0:
			j++
			if lastID, _, ok = parseStreamID(string(args[j]), 0, true, false); !ok {
				c.writeError(errInvalidStreamID)
				return
			}
		default:
			c.writeError("ERR Unrecognized XCLAIM option '" + string(opt) + "'")
			return
		}
	}
	if g.lastID.Less(lastID) {
		g.lastID = lastID
	}
	// A bogus delivery time (in the future, or negative) means now, as in
	// Redis: clients compute it from their own clocks.
	if deliveryTime < 0 || deliveryTime > now {
		deliveryTime = now
	}
	var cons *streamConsumer
	type claimed struct {
		id    StreamID
		entry StreamEntry
	}
	var out []claimed
	for k := 5; k <= lastIDArg; k++ {
		id, _, _ := parseStreamID(string(args[k]), 0, true, false)
		i, pending := g.pending.find(id)
		e, exists := s.entry(id)
		if !exists {
			// A pending entry deleted from the stream is dropped.
			if pending {
				g.ack(id)
			}
			continue
		}
		var p *pendingEntry
		if pending {
			p = g.pending[i]
		} else if force {
			p = &pendingEntry{id: id, deliveryTime: now, deliveryCount: 1}
			g.pending.insert(p)
		} else {
			continue
		}
		if p.consumer != nil && minIdle != 0 && now-p.deliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons, _ = g.consumer(args[3], true, true, now)
		}
		p.deliveryTime = deliveryTime
		if retryCount >= 0 {
			p.deliveryCount = retryCount
		} else if !justID {
			p.deliveryCount++
		}
		if p.consumer != cons {
			if p.consumer != nil {
				p.consumer.pending.remove(id)
			}
			p.consumer = cons
			cons.pending.insert(p)
		}
		out = append(out, claimed{id, e})
	}
	c.signalModified(args[1])
	c.writeArray(len(out))
	for _, cl := range out {
		if justID {
			c.writeStreamID(cl.id)
		} else {
			c.writeStreamEntry(cl.entry)
		}
	}
}

func cmdXAutoClaim(c *Client, args [][]byte) {
	minIdle, ok := parseInt(args[4])
	if !ok {
		c.writeError("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := parseIntervalBound(c, args[5], 0, false)
	if !ok {
		return
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(args); j++ {
		switch {
		case equalFold(args[j], "count") && j < len(args)-1:
			if count, ok = rangeLong(c, args[j+1], 1, math.MaxInt64/16, "ERR COUNT must be > 0"); !ok {
				return
			}
			j++
		case equalFold(args[j], "justid"):
			justID = true
		default:
			c.writeError(errSyntax)
			return
		}
	}
	s, g, found, err := streamAndGroup(c, args[1], args[2])
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeError(noGroupError(args[1], args[2]))
		return
	}
	now := c.now
	attempts := count * 10
	var cons *streamConsumer
	var claimed []StreamEntry
	var claimedIDs, deleted []StreamID
	i, _ := g.pending.find(start)
	for ; attempts > 0 && count > 0 && i < len(g.pending); attempts-- {
		p := g.pending[i]
		e, exists := s.entry(p.id)
		if !exists {
			deleted = append(deleted, p.id)
			g.ack(p.id) // i now points at the next one
			count--
			continue
		}
		i++
		if minIdle != 0 && now-p.deliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons, _ = g.consumer(args[3], true, true, now)
		}
		p.deliveryTime = now
		if !justID {
			p.deliveryCount++
		}
		if p.consumer != cons {
			if p.consumer != nil {
				p.consumer.pending.remove(p.id)
			}
			p.consumer = cons
			cons.pending.insert(p)
		}
		claimed = append(claimed, e)
		claimedIDs = append(claimedIDs, p.id)
		count--
	}
	// The cursor is the next pending entry not looked at (0-0: none).
	var cursor StreamID
	if i < len(g.pending) {
		cursor = g.pending[i].id
	}
	c.signalModified(args[1])
	c.writeArray(3)
	c.writeStreamID(cursor)
	c.writeArray(len(claimed))
	for k, e := range claimed {
		if justID {
			c.writeStreamID(claimedIDs[k])
		} else {
			c.writeStreamEntry(e)
		}
	}
	c.writeArray(len(deleted))
	for _, id := range deleted {
		c.writeStreamID(id)
	}
}

// xinfoStream looks up XINFO's key: a missing one is an error.
func xinfoStream(c *Client, key []byte) (*Stream, bool) {
	s, found, err := getObject[*Stream](c, key, kindStream)
	if err != nil {
		c.writeErr(err)
		return nil, false
	}
	if !found {
		c.writeError(errNoSuchKey)
		return nil, false
	}
	return s, true
}

// cmdXInfoStream is XINFO STREAM [FULL [COUNT n]]. radix-tree-keys is the
// number of nodes, as in Redis; Redis's radix-tree-nodes counts its tree's
// inner nodes, which ours does not have: the node count stands in.
func cmdXInfoStream(c *Client, args [][]byte) {
	full := false
	count := int64(10)
	if len(args) > 3 {
		if !equalFold(args[3], "full") || len(args) != 4 && (len(args) != 6 || !equalFold(args[4], "count")) {
			c.writeError("ERR unknown subcommand or wrong number of arguments for '" + truncate(args[1], 128) + "'. Try XINFO HELP.")
			return
		}
		full = true
		if len(args) == 6 {
			n, ok := parseInt(args[5])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			count = max(n, 0)
		}
	}
	s, ok := xinfoStream(c, args[2])
	if !ok {
		return
	}
	if full {
		c.writeMap(9)
	} else {
		c.writeMap(10)
	}
	c.writeBulkString("length")
	c.writeInt(int64(s.Len()))
	c.writeBulkString("radix-tree-keys")
	c.writeInt(int64(len(s.nodes)))
	c.writeBulkString("radix-tree-nodes")
	c.writeInt(int64(len(s.nodes)))
	c.writeBulkString("last-generated-id")
	c.writeStreamID(s.LastID())
	c.writeBulkString("max-deleted-entry-id")
	c.writeStreamID(s.maxDeleted)
	c.writeBulkString("entries-added")
	c.writeInt(int64(s.added))
	c.writeBulkString("recorded-first-entry-id")
	c.writeStreamID(s.firstLiveID())
	if full {
		writeXInfoFull(c, s, count)
		return
	}
	c.writeBulkString("groups")
	c.writeInt(int64(len(s.groups)))
	for _, first := range []bool{true, false} {
		if first {
			c.writeBulkString("first-entry")
		} else {
			c.writeBulkString("last-entry")
		}
		if s.Len() == 0 {
			c.writeNull()
			continue
		}
		i := 0
		if !first {
			i = s.Len() - 1
		}
		node, j := s.at(i)
		c.writeStreamEntry(node.entry(j))
	}
}

// writeXInfoFull is the rest of XINFO STREAM FULL: up to count (0: all)
// entries, and each group with its pending entries and consumers.
func writeXInfoFull(c *Client, s *Stream, count int64) {
	limit := -1
	if count > 0 {
		limit = int(min(count, math.MaxInt32))
	}
	capped := func(n int) int {
		if count > 0 && int64(n) > count {
			return int(count)
		}
		return n
	}
	c.writeBulkString("entries")
	entries := s.Range(StreamID{}, maxStreamID, limit, false)
	c.writeArray(len(entries))
	for _, e := range entries {
		c.writeStreamEntry(e)
	}
	c.writeBulkString("groups")
	c.writeArray(len(s.groups))
	for _, g := range s.groups {
		c.writeMap(7)
		c.writeBulkString("name")
		c.writeBulkString(g.name)
		c.writeBulkString("last-delivered-id")
		c.writeStreamID(g.lastID)
		c.writeBulkString("entries-read")
		if g.entriesRead != invalidEntriesRead {
			c.writeInt(g.entriesRead)
		} else {
			c.writeNull()
		}
		c.writeBulkString("lag")
		if lag, ok := s.lag(g); ok {
			c.writeInt(lag)
		} else {
			c.writeNull()
		}
		c.writeBulkString("pel-count")
		c.writeInt(int64(len(g.pending)))
		c.writeBulkString("pending")
		n := capped(len(g.pending))
		c.writeArray(n)
		for _, p := range g.pending[:n] {
			c.writeArray(4)
			c.writeStreamID(p.id)
			c.writeBulkString(p.consumer.name)
			c.writeInt(p.deliveryTime)
			c.writeInt(p.deliveryCount)
		}
		c.writeBulkString("consumers")
		names := g.consumerNames()
		c.writeArray(len(names))
		for _, name := range names {
			cons := g.consumers[name]
			c.writeMap(4)
			c.writeBulkString("name")
			c.writeBulkString(name)
			c.writeBulkString("seen-time")
			c.writeInt(cons.seenTime)
			c.writeBulkString("pel-count")
			c.writeInt(int64(len(cons.pending)))
			c.writeBulkString("pending")
			n := capped(len(cons.pending))
			c.writeArray(n)
			for _, p := range cons.pending[:n] {
				c.writeArray(3)
				c.writeStreamID(p.id)
				c.writeInt(p.deliveryTime)
				c.writeInt(p.deliveryCount)
			}
		}
	}
}

func cmdXInfoGroups(c *Client, args [][]byte) {
	s, ok := xinfoStream(c, args[2])
	if !ok {
		return
	}
	c.writeArray(len(s.groups))
	for _, g := range s.groups {
		c.writeMap(6)
		c.writeBulkString("name")
		c.writeBulkString(g.name)
		c.writeBulkString("consumers")
		c.writeInt(int64(len(g.consumers)))
		c.writeBulkString("pending")
		c.writeInt(int64(len(g.pending)))
		c.writeBulkString("last-delivered-id")
		c.writeStreamID(g.lastID)
		c.writeBulkString("entries-read")
		if g.entriesRead != invalidEntriesRead {
			c.writeInt(g.entriesRead)
		} else {
			c.writeNull()
		}
		c.writeBulkString("lag")
		if lag, ok := s.lag(g); ok {
			c.writeInt(lag)
		} else {
			c.writeNull()
		}
	}
}

func cmdXInfoConsumers(c *Client, args [][]byte) {
	s, ok := xinfoStream(c, args[2])
	if !ok {
		return
	}
	g := s.group(args[3])
	if g == nil {
		c.writeError("NOGROUP No such consumer group '" + string(args[3]) + "' for key name '" + string(args[2]) + "'")
		return
	}
	names := g.consumerNames()
	c.writeArray(len(names))
	for _, name := range names {
		cons := g.consumers[name]
		c.writeMap(3)
		c.writeBulkString("name")
		c.writeBulkString(name)
		c.writeBulkString("pending")
		c.writeInt(int64(len(cons.pending)))
		c.writeBulkString("idle")
		c.writeInt(max(c.now-cons.seenTime, 0))
	}
}

func cmdXInfoHelp(c *Client, args [][]byte) {
	c.writeHelp([]string{
		"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
		"HELP",
		"    Print this help.",
	})
}
