package server

import (
	"math"
	"strconv"
	"time"
)

// Stream commands (t_stream.c): XADD, XLEN, XRANGE and XREVRANGE, with
// Redis 7.0's replies and errors, enough for redis-benchmark's
// "XADD key * field value" and for looking at what it wrote.

func init() { registerGroup(registerStreamCommands) }

func registerStreamCommands(t *commandTable) {
	const w, r = flagWrite, flagReadonly
	t.add(
		&command{Name: "xadd", Fn: cmdXAdd, Arity: -5, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "stream", Summary: "Appends a new message to a stream. Creates the key if it doesn't exist.", Since: "5.0.0"},
		&command{Name: "xlen", Fn: cmdXLen, Arity: 2, Flags: r | flagFast, FirstKey: 1, LastKey: 1, Group: "stream", Summary: "Return the number of messages in a stream.", Since: "5.0.0"},
		&command{Name: "xrange", Fn: cmdXRange, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: "stream", Summary: "Returns the messages from a stream within a range of IDs.", Since: "5.0.0"},
		&command{Name: "xsetid", Fn: cmdXSetID, Arity: -3, Flags: w | flagDenyOOM | flagFast, FirstKey: 1, LastKey: 1, Group: "stream", Summary: "An internal command for replicating stream values", Since: "5.0.0"},
		&command{Name: "xdel", Fn: cmdXDel, Arity: -3, Flags: w | flagFast, FirstKey: 1, LastKey: 1, Group: "stream", Summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", Since: "5.0.0"},
		&command{Name: "xtrim", Fn: cmdXTrim, Arity: -4, Flags: w, FirstKey: 1, LastKey: 1, Group: "stream", Summary: "Trims the stream to (approximately if '~' is passed) a certain size", Since: "5.0.0"},
		&command{Name: "xrevrange", Fn: cmdXRevRange, Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Group: "stream", Summary: "Returns the messages from a stream within a range of IDs in reverse order.", Since: "5.0.0"},
	)
}

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

func newStream() *Stream { return &Stream{} }

// xaddArgs is what streamParseAddOrTrimArgsOrReply extracts.
type xaddArgs struct {
	trim       StreamTrim
	trimming   bool
	id         StreamID
	idGiven    bool
	seqGiven   bool
	noMkStream bool
}

// parseXAddArgs parses XADD's options up to the ID and returns the ID's
// argument index, or -1 after replying an error.
func parseXAddArgs(c *Client, args [][]byte, a *xaddArgs) int {
	return parseAddOrTrimArgs(c, args, a, true)
}

// parseAddOrTrimArgs is Redis's streamParseAddOrTrimArgsOrReply: XADD's
// options (xadd) or XTRIM's, which take no ID and no NOMKSTREAM.
func parseAddOrTrimArgs(c *Client, args [][]byte, a *xaddArgs, xadd bool) int {
	limitGiven := false
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			return a.finish(c, i, limitGiven, xadd)
		case equalFold(opt, "maxlen") && more > 0, equalFold(opt, "minid") && more > 0:
			byMinID := equalFold(opt, "minid")
			if a.trimming {
				c.writeError("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return -1
			}
			a.trim.Approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				a.trim.Approx = next[0] == '~'
				i++
			}
			if byMinID {
				id, _, ok := parseStreamID(string(args[i+1]), 0, true, false)
				if !ok {
					c.writeError(errInvalidStreamID)
					return -1
				}
				a.trim.ByMinID, a.trim.MinID = true, id
			} else {
				n, ok := parseInt(args[i+1])
				if !ok {
					c.writeError(errNotInt)
					return -1
				}
				if n < 0 {
					c.writeError("ERR The MAXLEN argument must be >= 0.")
					return -1
				}
				a.trim.MaxLen = n
			}
			a.trimming = true
			i++
		case equalFold(opt, "limit") && more > 0:
			n, ok := parseInt(args[i+1])
			if !ok {
				c.writeError(errNotInt)
				return -1
			}
			if n < 0 {
				c.writeError("ERR The LIMIT argument must be >= 0.")
				return -1
			}
			a.trim.Limit = n
			limitGiven = true
			i++
		case xadd && equalFold(opt, "nomkstream"):
			a.noMkStream = true
		case !xadd:
			c.writeError(errSyntax)
			return -1
		default:
			id, seqGiven, ok := parseStreamID(string(opt), 0, true, true)
			if !ok {
				c.writeError(errInvalidStreamID)
				return -1
			}
			a.id, a.seqGiven, a.idGiven = id, seqGiven, true
			return a.finish(c, i, limitGiven, xadd)
		}
	}
	return a.finish(c, i, limitGiven, xadd)
}

func (a *xaddArgs) finish(c *Client, i int, limitGiven, xadd bool) int {
	if a.trim.Limit != 0 && !a.trimming {
		c.writeError("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return -1
	}
	if !xadd && !a.trimming {
		c.writeError("ERR syntax error, XTRIM must be called with a trimming strategy")
		return -1
	}
	if limitGiven && !a.trim.Approx {
		c.writeError("ERR syntax error, LIMIT cannot be used without the special ~ option")
		return -1
	}
	if !limitGiven {
		if a.trim.Approx {
			a.trim.Limit = 100 * streamNodeMaxEntries
		} else {
			a.trim.Limit = 0
		}
	}
	return i
}

func cmdXAdd(c *Client, args [][]byte) {
	var a xaddArgs
	idPos := parseXAddArgs(c, args, &a)
	if idPos < 0 {
		return
	}
	fieldPos := idPos + 1
	if n := len(args) - fieldPos; n < 2 || n%2 == 1 {
		c.writeArityError("xadd")
		return
	}
	if a.idGiven && a.seqGiven && a.id == (StreamID{}) {
		c.writeError("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	s, found, err := getObject[*Stream](c, args[1], kindStream)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found && a.noMkStream {
		c.writeNull()
		return
	}
	last := StreamID{}
	if found {
		last = s.LastID()
	}
	if last == (StreamID{math.MaxUint64, math.MaxUint64}) {
		c.writeError("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	var id StreamID
	switch {
	case !a.idGiven:
		// Redis's streamNextID: the current time, or the last ID plus one
		// when the clock has not moved past it.
		if ms := uint64(time.Now().UnixMilli()); ms > last.Ms {
			id = StreamID{ms, 0}
		} else if last.Seq == math.MaxUint64 {
			id = StreamID{last.Ms + 1, 0}
		} else {
			id = StreamID{last.Ms, last.Seq + 1}
		}
	case a.seqGiven:
		id = a.id
	default:
		id = a.id
		if last.Ms == a.id.Ms {
			if last.Seq == math.MaxUint64 {
				id = last // fails the check below, as in Redis
			} else {
				id = StreamID{last.Ms, last.Seq + 1}
			}
		}
	}
	if !last.Less(id) {
		c.writeError("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		return
	}
	if !found {
		s, _ = getOrCreateObject(c, args[1], kindStream, newStream)
	}
	s.AddArgs(id, args[fieldPos:])
	var idBuf [48]byte
	c.writeBulk(appendStreamID(idBuf[:0], id))
	if a.trimming {
		s.Trim(a.trim)
	}
	c.signalModified(args[1])
}

// appendStreamID appends "ms-seq" to b.
func appendStreamID(b []byte, id StreamID) []byte {
	b = strconv.AppendUint(b, id.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, id.Seq, 10)
}

func cmdXLen(c *Client, args [][]byte) {
	s, found, err := getObject[*Stream](c, args[1], kindStream)
	switch {
	case err != nil:
		c.writeErr(err)
	case !found:
		c.writeInt(0)
	default:
		c.writeInt(int64(s.Len()))
	}
}

func cmdXRange(c *Client, args [][]byte)    { xrangeGeneric(c, args, false) }
func cmdXRevRange(c *Client, args [][]byte) { xrangeGeneric(c, args, true) }

// parseIntervalID parses an XRANGE bound; "(" makes it exclusive (and then
// "-" and "+" are not allowed).
func parseIntervalID(b []byte, missingSeq uint64) (id StreamID, exclusive bool, ok bool) {
	if len(b) > 1 && b[0] == '(' {
		id, _, ok = parseStreamID(string(b[1:]), missingSeq, true, false)
		return id, true, ok
	}
	id, _, ok = parseStreamID(string(b), missingSeq, false, false)
	return id, false, ok
}

func xrangeGeneric(c *Client, args [][]byte, rev bool) {
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, startEx, ok := parseIntervalID(startArg, 0)
	if !ok {
		c.writeError(errInvalidStreamID)
		return
	}
	if startEx {
		if start.Seq == math.MaxUint64 {
			if start.Ms == math.MaxUint64 {
				c.writeError("ERR invalid start ID for the interval")
				return
			}
			start = StreamID{start.Ms + 1, 0}
		} else {
			start.Seq++
		}
	}
	end, endEx, ok := parseIntervalID(endArg, math.MaxUint64)
	if !ok {
		c.writeError(errInvalidStreamID)
		return
	}
	if endEx {
		if end.Seq == 0 {
			if end.Ms == 0 {
				c.writeError("ERR invalid end ID for the interval")
				return
			}
			end = StreamID{end.Ms - 1, math.MaxUint64}
		} else {
			end.Seq--
		}
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if equalFold(args[j], "count") && len(args)-j-1 >= 1 {
			n, ok := parseInt(args[j+1])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			count = max(n, 0)
			j++
			continue
		}
		c.writeError(errSyntax)
		return
	}
	s, found, err := getObject[*Stream](c, args[1], kindStream)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeArray(0)
		return
	}
	if count == 0 {
		c.writeNullArray()
		return
	}
	entries := s.Range(start, end, int(min(count, math.MaxInt32)), rev)
	c.writeArray(len(entries))
	for _, e := range entries {
		c.writeArray(2)
		var idBuf [48]byte
		c.writeBulk(appendStreamID(idBuf[:0], e.ID))
		c.writeArray(e.numFields())
		e.eachField(c.writeBulk)
	}
}

func cmdXTrim(c *Client, args [][]byte) {
	var a xaddArgs
	if parseAddOrTrimArgs(c, args, &a, false) < 0 {
		return
	}
	s, found, err := getObject[*Stream](c, args[1], kindStream)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	// An emptied stream stays: streams are not deleted when empty.
	n := s.Trim(a.trim)
	if n > 0 {
		c.signalModified(args[1])
	}
	c.writeInt(n)
}

func cmdXDel(c *Client, args [][]byte) {
	s, found, err := getObject[*Stream](c, args[1], kindStream)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeInt(0)
		return
	}
	// Every ID is checked before any is deleted, as in Redis.
	ids := make([]StreamID, len(args)-2)
	for i, a := range args[2:] {
		id, _, ok := parseStreamID(string(a), 0, true, false)
		if !ok {
			c.writeError(errInvalidStreamID)
			return
		}
		ids[i] = id
	}
	var n int64
	for _, id := range ids {
		if s.Delete(id) {
			n++
			if s.maxDeleted.Less(id) {
				s.maxDeleted = id
			}
		}
	}
	if n > 0 {
		c.signalModified(args[1])
	}
	c.writeInt(n)
}

// cmdXSetID is XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id], as
// Redis 7.0's xsetidCommand: the options are checked before the key, and
// the last ID may not go below the top live entry (7.0.15 does not hold
// it to the stream's own greatest deleted ID; later versions do).
func cmdXSetID(c *Client, args [][]byte) {
	id, _, ok := parseStreamID(string(args[2]), 0, true, false)
	if !ok {
		c.writeError(errInvalidStreamID)
		return
	}
	added := int64(-1)
	var maxDel StreamID
	for i := 3; i < len(args); i += 2 {
		more := i+1 < len(args)
		switch {
		case more && equalFold(args[i], "entriesadded"):
			n, ok := parseInt(args[i+1])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			if n < 0 {
				c.writeError("ERR entries_added must be positive")
				return
			}
			added = n
		case more && equalFold(args[i], "maxdeletedid"):
			d, _, ok := parseStreamID(string(args[i+1]), 0, true, false)
			if !ok {
				c.writeError(errInvalidStreamID)
				return
			}
			if id.Less(d) {
				c.writeError("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDel = d
		default:
			c.writeError(errSyntax)
			return
		}
	}
	s, found, err := getObject[*Stream](c, args[1], kindStream)
	if err != nil {
		c.writeErr(err)
		return
	}
	if !found {
		c.writeError(errNoSuchKey)
		return
	}
	if s.length > 0 {
		if top := s.Range(StreamID{}, StreamID{math.MaxUint64, math.MaxUint64}, 1, true); len(top) == 1 && id.Less(top[0].ID) {
			c.writeError("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if added != -1 && int64(s.length) > added {
			c.writeError("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.lastID = id
	if added != -1 {
		s.added = uint64(added)
	}
	if maxDel != (StreamID{}) {
		s.maxDeleted = maxDel
	}
	c.signalModified(args[1])
	c.writeOK()
}
