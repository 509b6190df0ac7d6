package server

import "math"

// XREAD [COUNT n] [BLOCK ms] STREAMS key... id... (t_stream.c's
// xreadCommand without GROUP): entries with IDs greater than each given
// one ("$": the stream's last ID when the command runs), from every
// stream that has some; with none, a null reply, or with BLOCK the
// client waits until one of the streams gets an entry past its ID.
// XREADGROUP is the consumer-group engineer's; its BLOCK would reuse
// blockOn the same way.

func init() { registerGroup(registerXReadCommand) }

func registerXReadCommand(t *commandTable) {
	t.add(&command{Name: "xread", Fn: cmdXRead, Arity: -4, Flags: flagReadonly | flagBlocking, Group: "stream",
		Summary: "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", Since: "5.0.0"})
}

// xreadBlockedCount is the COUNT a blocked XREAD without one gets, so a
// too-low ID does not make the server answer with a whole stream
// (Redis's XREAD_BLOCKED_DEFAULT_COUNT).
const xreadBlockedCount = 1000

// xreadArgs are the options XREAD and XREADGROUP share (t_stream.c
// parses both in one loop): BLOCK, COUNT, STREAMS, and for XREADGROUP
// GROUP and NOACK.
type xreadArgs struct {
	deadline        int64
	block           bool
	count           int64
	noack           bool
	group, consumer []byte
	// streams is the index of the first key; the keys and the IDs after
	// them are balanced.
	streams int
}

// parseXReadArgs reads the options; it has written the error when ok is
// false. group says whether GROUP and NOACK are allowed (XREADGROUP).
func parseXReadArgs(c *Client, args [][]byte, group bool) (a xreadArgs, ok bool) {
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case equalFold(args[i], "block") && more > 0:
			i++
			d, ok := parseBlockTimeout(c, args[i], false)
			if !ok {
				return a, false
			}
			a.deadline, a.block = d, true
		case equalFold(args[i], "count") && more > 0:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				c.writeError(errNotInt)
				return a, false
			}
			a.count = max(n, 0)
		case equalFold(args[i], "streams") && more > 0:
			a.streams = i + 1
			i = len(args)
		case equalFold(args[i], "group") && more >= 2:
			if !group {
				c.writeError("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return a, false
			}
			a.group, a.consumer = args[i+1], args[i+2]
			i += 2
		case equalFold(args[i], "noack"):
			if !group {
				c.writeError("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return a, false
			}
			a.noack = true
		default:
			c.writeError(errSyntax)
			return a, false
		}
	}
	if a.streams == 0 {
		c.writeError(errSyntax)
		return a, false
	}
	if (len(args)-a.streams)%2 != 0 {
		c.writeError("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
		return a, false
	}
	return a, true
}

func cmdXRead(c *Client, args [][]byte) {
	a, ok := parseXReadArgs(c, args, false)
	if !ok {
		return
	}
	deadline, block, count, streamsArg := a.deadline, a.block, a.count, a.streams
	n := len(args) - streamsArg
	n /= 2
	keys := args[streamsArg : streamsArg+n]
	ids := make([]StreamID, n)
	for i, arg := range args[streamsArg+n:] {
		s, found, err := getObject[*Stream](c, keys[i], kindStream)
		if err != nil {
			c.writeErr(err)
			return
		}
		switch string(arg) {
		case "$":
			if found {
				ids[i] = s.LastID()
			}
			continue
		case ">":
			c.writeError("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
			return
		}
		id, _, ok := parseStreamID(string(arg), 0, true, false)
		if !ok {
			c.writeError(errInvalidStreamID)
			return
		}
		ids[i] = id
	}
	// Served at once: one [key, entries] per stream with something new
	// (a map of them in RESP3).
	var ready []int
	for i, key := range keys {
		s, found, _ := getObject[*Stream](c, key, kindStream)
		if found && s.Len() > 0 && ids[i].Less(s.lastValidID()) {
			ready = append(ready, i)
		}
	}
	if len(ready) > 0 {
		if c.resp == 3 {
			c.writeMap(len(ready))
		} else {
			c.writeArray(len(ready))
		}
		for _, i := range ready {
			s, _, _ := getObject[*Stream](c, keys[i], kindStream)
			if c.resp == 2 {
				c.writeArray(2)
			}
			c.writeBulk(keys[i])
			writeStreamAfter(c, s, ids[i], count)
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
	after := make(map[string]StreamID, n)
	for i, k := range keys {
		if _, dup := after[string(k)]; !dup {
			after[string(k)] = ids[i]
		}
	}
	serve := func(w *Client, key string) bool {
		s, found, err := getObject[*Stream](w, []byte(key), kindStream)
		if err != nil || !found || !after[key].Less(s.LastID()) {
			return false
		}
		if w.resp == 2 {
			w.writeArray(1)
			w.writeArray(2)
		} else {
			w.writeMap(1)
		}
		w.writeBulkString(key)
		writeStreamAfter(w, s, after[key], count)
		return true
	}
	blockOn(c, keys, deadline, serve, nullArrayReply)
}

// writeStreamAfter replies up to count (0: all) entries of s with IDs
// greater than id, as XRANGE's entries.
func writeStreamAfter(c *Client, s *Stream, id StreamID, count int64) {
	start, ok := id.next()
	limit := -1 // Range's "all"
	if count > 0 {
		limit = int(min(count, math.MaxInt32))
	}
	var entries []StreamEntry
	if ok {
		entries = s.Range(start, StreamID{math.MaxUint64, math.MaxUint64}, limit, false)
	}
	c.writeArray(len(entries))
	for _, e := range entries {
		c.writeArray(2)
		var idBuf [48]byte
		c.writeBulk(appendStreamID(idBuf[:0], e.ID))
		c.writeArray(e.numFields())
		e.eachField(c.writeBulk)
	}
}

// next is the smallest ID greater than id; ok is false for the largest.
func (id StreamID) next() (StreamID, bool) {
	switch {
	case id.Seq < math.MaxUint64:
		return StreamID{id.Ms, id.Seq + 1}, true
	case id.Ms < math.MaxUint64:
		return StreamID{id.Ms + 1, 0}, true
	}
	return StreamID{}, false
}

// lastValidID is the ID of the stream's last entry (Redis's
// streamLastValidID), which after XDEL of the newest entries can be lower
// than LastID.
func (s *Stream) lastValidID() StreamID {
	if s.Len() == 0 {
		return StreamID{}
	}
	return s.idAt(s.Len() - 1)
}
