package server

import (
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/dpulab/dpulab/server/resp"
)

// Client-side caching (CLIENT TRACKING), as Redis 7.0's tracking.c does it.
//
// In the default mode the server remembers, per key name (whatever the
// database, as Redis), the ids of the tracking clients that read it with a
// read-only command; the first change to the key sends each of them one
// invalidation message and forgets the key. In BCAST mode a client
// subscribes to key prefixes instead and is told of every change to a key
// under them, with nothing remembered per key: the changed keys are
// collected per prefix and sent after the command, one message per prefix.
//
// A message is a RESP3 push (>2 invalidate [keys]) on the client's own
// connection, or, with REDIRECT, goes to the client it names: a push if
// that one speaks RESP3, else a pub/sub message on __redis__:invalidate if
// it is subscribed to something. A RESP2 client without redirection gets
// nothing. FLUSHDB and FLUSHALL send a null instead of the keys.
//
// Hooks: db.touch (every change to a key: writes, expiry, eviction) calls
// trackingState.invalidate while some client tracks (db.trk is set only
// then, so touch stays one more nil check); Client.call remembers the keys
// of read-only commands; runCommands calls before and after each command
// (the tracking table's bound, messages for the running client itself,
// which Redis sends after its reply, and the broadcast batches).

// trackingState is the server's tracking table, guarded by Server.mu.
type trackingState struct {
	srv     *Server
	clients int                           // clients with tracking on
	table   map[string]map[int64]struct{} // key → ids of clients that read it
	items   int                           // ids in table, all keys

	// prefixes are the BCAST subscriptions: prefix → its clients and the
	// keys changed under it since the last broadcast.
	prefixes map[string]*bcastState

	cur     *Client  // the client whose command runs (NOLOOP, pending)
	pending []string // invalidations for cur, sent after its reply; "\x00null" for a flush
	dirty   bool     // some prefix has keys to broadcast
	effort  int      // trackingLimitUsedSlots' timeout_counter
}

// bcastState is one BCAST prefix.
type bcastState struct {
	clients map[*Client]struct{}
	keys    map[string]*Client // changed key → the client that changed it (nil: none)
}

// clientTracking is one client's CLIENT TRACKING state (nil: off, never on).
type clientTracking struct {
	on, bcast, optin, optout, noloop bool
	caching                          bool // CLIENT CACHING given for the next command
	brokenRedir                      bool // the redirect client is gone ('R')
	redirect                         int64
	prefixes                         []string // BCAST prefixes, sorted
}

const nullInvalidation = "\x00null"

func (c *Client) tracking() bool { return c.trk != nil && c.trk.on }

// trackingOn makes the server's keyspaces report changes to t.
func (s *Server) trackingOn() *trackingState {
	t := &s.trk
	if t.srv == nil {
		t.srv = s
	}
	if t.table == nil {
		t.table = make(map[string]map[int64]struct{})
	}
	if t.prefixes == nil {
		t.prefixes = make(map[string]*bcastState)
	}
	for _, d := range s.dbs {
		d.trk = t
	}
	return t
}

// enableTracking is Redis's enableTracking: options replace the old ones,
// BCAST prefixes add to the client's.
func (c *Client) enableTracking(redirect int64, bcast, optin, optout, noloop bool, prefixes []string) {
	t := c.srv.trackingOn()
	if c.trk == nil {
		c.trk = &clientTracking{}
	}
	ct := c.trk
	if !ct.on {
		t.clients++
	}
	ct.on = true
	ct.brokenRedir, ct.bcast, ct.optin, ct.optout, ct.noloop = false, false, false, false, false
	ct.redirect = redirect
	if bcast {
		ct.bcast = true
		if len(prefixes) == 0 {
			prefixes = []string{""}
		}
		for _, p := range prefixes {
			bs := t.prefixes[p]
			if bs == nil {
				bs = &bcastState{clients: make(map[*Client]struct{}), keys: make(map[string]*Client)}
				t.prefixes[p] = bs
			}
			if _, ok := bs.clients[c]; !ok {
				bs.clients[c] = struct{}{}
				ct.prefixes = append(ct.prefixes, p)
			}
		}
		sort.Strings(ct.prefixes)
	}
	ct.optin, ct.optout, ct.noloop = optin, optout, noloop
}

// disableTracking is Redis's disableTracking. The client's ids stay in
// the table until their keys change (they are skipped then).
func (c *Client) disableTracking() {
	ct := c.trk
	if ct == nil || !ct.on {
		return
	}
	t := &c.srv.trk
	for _, p := range ct.prefixes {
		if bs := t.prefixes[p]; bs != nil {
			delete(bs.clients, c)
			if len(bs.clients) == 0 {
				delete(t.prefixes, p)
			}
		}
	}
	c.trk = nil
	t.clients--
	if t.clients == 0 && t.items == 0 && len(t.prefixes) == 0 {
		for _, d := range c.srv.dbs {
			d.trk = nil
		}
	}
}

// rememberKeys is Redis's trackingRememberKeys, after a read-only command.
func (c *Client) rememberKeys(cmd *command, args [][]byte) {
	ct := c.trk
	if ct.bcast || ct.optin && !ct.caching || ct.optout && ct.caching {
		return
	}
	t := &c.srv.trk
	for _, p := range commandKeyPositions(cmd, args) {
		k := args[p]
		ids := t.table[string(k)]
		if ids == nil {
			ids = make(map[int64]struct{}, 1)
			t.table[string(k)] = ids
		}
		if _, ok := ids[c.id]; !ok {
			ids[c.id] = struct{}{}
			t.items++
		}
	}
}

// commandKeyPositions returns the positions of cmd's keys in args (as
// COMMAND GETKEYS finds them).
func commandKeyPositions(cmd *command, args [][]byte) []int {
	if _, movable := movableKeySpecs[cmd.Name]; movable {
		pos, _, ok := keysAndSpecs(cmd, args)
		if !ok {
			return nil
		}
		return pos
	}
	if cmd.FirstKey == 0 {
		return nil
	}
	last := cmd.LastKey
	if last < 0 {
		last = len(args) + last
	}
	step := max(cmd.Step, 1)
	var pos []int
	for i := cmd.FirstKey; i <= last && i < len(args); i += step {
		pos = append(pos, i)
	}
	return pos
}

// invalidate is Redis's trackingInvalidateKey for a change to key.
func (t *trackingState) invalidate(key string) {
	if len(t.prefixes) > 0 {
		for p, bs := range t.prefixes {
			if strings.HasPrefix(key, p) {
				if _, ok := bs.keys[key]; !ok || bs.keys[key] != t.cur {
					bs.keys[strings.Clone(key)] = t.cur
				}
				t.dirty = true
			}
		}
	}
	ids, ok := t.table[key]
	if !ok {
		return
	}
	s := t.srv
	for id := range ids {
		target := s.clientByID(id)
		if target == nil || !target.tracking() || target.trk.bcast {
			continue
		}
		if target.trk.noloop && target == t.cur {
			continue
		}
		if target == t.cur {
			// After the reply to the running command.
			t.pending = append(t.pending, strings.Clone(key))
			continue
		}
		t.send(target, [][]byte{[]byte(key)}, false)
	}
	t.items -= len(ids)
	delete(t.table, key)
}

// flushed is Redis's trackingInvalidateKeysOnFlush: every tracking client
// is told with a null, and the table is emptied.
func (s *Server) trackingFlushed() {
	t := &s.trk
	if t.srv == nil {
		return // tracking never used
	}
	if t.clients > 0 {
		// Not clientList: it sorts, and only the tracking ones matter.
		var list []*Client
		s.clientsMu.Lock()
		for _, c := range s.clients {
			if c.tracking() {
				list = append(list, c)
			}
		}
		s.clientsMu.Unlock()
		sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
		for _, c := range list {
			if c == t.cur {
				t.pending = append(t.pending, nullInvalidation)
				continue
			}
			t.send(c, nil, true)
		}
	}
	t.table = make(map[string]map[int64]struct{})
	t.items = 0
}

// send is Redis's sendTrackingMessage: keys (or a null) to c or its
// redirect client.
func (t *trackingState) send(c *Client, keys [][]byte, null bool) {
	s := t.srv
	to := c
	redirected := false
	if c.trk.redirect != 0 {
		r := s.clientByID(c.trk.redirect)
		if r == nil {
			c.trk.brokenRedir = true
			if c.resp > 2 {
				msg := resp.AppendPush(nil, 2)
				msg = resp.AppendBulkString(msg, "tracking-redir-broken")
				msg = resp.AppendInt(msg, c.trk.redirect)
				s.deliver(t.cur, c, msg)
			}
			return
		}
		to, redirected = r, true
	}
	var msg []byte
	switch {
	case to.resp > 2:
		msg = resp.AppendPush(msg, 2)
		msg = resp.AppendBulkString(msg, "invalidate")
	case redirected && to.subscribed():
		msg = resp.AppendArray(msg, 3)
		msg = resp.AppendBulkString(msg, "message")
		msg = resp.AppendBulkString(msg, "__redis__:invalidate")
	default:
		return // RESP2 without redirection: nothing can carry it
	}
	if null {
		// Redis sends the null of the tracking client's protocol.
		if c.resp > 2 {
			msg = resp.AppendNull(msg)
		} else {
			msg = resp.AppendNullBulk(msg)
		}
	} else {
		msg = resp.AppendArray(msg, len(keys))
		for _, k := range keys {
			msg = resp.AppendBulk(msg, k)
		}
	}
	s.deliver(t.cur, to, msg)
}

// clientByID returns the connected client with id, or nil.
func (s *Server) clientByID(id int64) *Client {
	s.clientsMu.Lock()
	c := s.clients[id]
	s.clientsMu.Unlock()
	if c != nil && (c.gone.Load() || c.killed.Load()) {
		return nil
	}
	return c
}

// trackingBefore runs before each command while tracking is in use: it
// marks c as the running client and keeps the table within
// tracking-table-max-keys (Redis's trackingLimitUsedSlots).
func (s *Server) trackingBefore(c *Client) {
	t := &s.trk
	t.cur = c
	if t.items == 0 {
		return
	}
	max := int(s.cfg.paramInt("tracking-table-max-keys"))
	if max == 0 || len(t.table) <= max {
		t.effort = 0
		return
	}
	effort := 100 * (t.effort + 1)
	for ; effort > 0 && len(t.table) > max; effort-- {
		// Go's map order starts at a random place: a random walk.
		skip := rand.IntN(min(len(t.table), 16))
		var victim string
		for k := range t.table {
			victim = k
			if skip--; skip < 0 {
				break
			}
		}
		t.invalidate(victim)
	}
	if len(t.table) > max {
		t.effort++
	} else {
		t.effort = 0
	}
}

// trackingAfter runs after each command while tracking is in use: the
// invalidations for the client itself, then the broadcasts, and the end of
// a CLIENT CACHING's one command.
func (s *Server) trackingAfter(c *Client, id int) {
	t := &s.trk
	if len(t.pending) > 0 {
		if c.tracking() {
			for _, k := range t.pending {
				if k == nullInvalidation {
					t.send(c, nil, true)
				} else {
					t.send(c, [][]byte{[]byte(k)}, false)
				}
			}
		}
		t.pending = t.pending[:0]
	}
	if t.dirty {
		t.broadcast()
	}
	if c.trk != nil && c.trk.caching && c.multi == nil && (id < 0 || !strings.HasPrefix(s.cmds.all[id].Name, "client|")) {
		c.trk.caching = false
	}
	t.cur = nil
}

// broadcast is Redis's trackingBroadcastInvalidationMessages: per prefix,
// one message with its changed keys (sorted, as Redis's radix tree) to
// each of its clients, less the keys a NOLOOP client changed itself.
func (t *trackingState) broadcast() {
	t.dirty = false
	names := make([]string, 0, len(t.prefixes))
	for p, bs := range t.prefixes {
		if len(bs.keys) > 0 {
			names = append(names, p)
		}
	}
	sort.Strings(names) // Redis walks its prefix tree in order
	for _, p := range names {
		bs := t.prefixes[p]
		keys := make([]string, 0, len(bs.keys))
		for k := range bs.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for c := range bs.clients {
			var list [][]byte
			for _, k := range keys {
				if c.trk.noloop && bs.keys[k] == c {
					continue
				}
				list = append(list, []byte(k))
			}
			if len(list) > 0 {
				t.send(c, list, false)
			}
		}
		clear(bs.keys)
	}
}

// trackingFlags appends CLIENT LIST's tracking flags (t, R, B).
func (c *Client) trackingFlags(b []byte) []byte {
	if !c.tracking() {
		return b
	}
	b = append(b, 't')
	if c.trk.brokenRedir {
		b = append(b, 'R')
	}
	if c.trk.bcast {
		b = append(b, 'B')
	}
	return b
}

// trackingRedir is CLIENT LIST's redir field and CLIENT GETREDIR.
func (c *Client) trackingRedir() int64 {
	if !c.tracking() {
		return -1
	}
	return c.trk.redirect
}

// ---- commands ----

func cmdClientTracking(c *Client, args [][]byte) {
	var redir int64
	var bcast, optin, optout, noloop bool
	var prefixes []string
	for j := 3; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case equalFold(args[j], "redirect") && more > 0:
			j++
			if redir != 0 {
				c.writeError("ERR A client can only redirect to a single other client")
				return
			}
			v, ok := parseInt(args[j])
			if !ok {
				c.writeError(errNotInt)
				return
			}
			redir = v
			if c.srv.clientByID(redir) == nil {
				c.writeError("ERR The client ID you want redirect to does not exist")
				return
			}
		case equalFold(args[j], "bcast"):
			bcast = true
		case equalFold(args[j], "optin"):
			optin = true
		case equalFold(args[j], "optout"):
			optout = true
		case equalFold(args[j], "noloop"):
			noloop = true
		case equalFold(args[j], "prefix") && more > 0:
			j++
			prefixes = append(prefixes, string(args[j]))
		default:
			c.writeError(errSyntax)
			return
		}
	}
	switch {
	case equalFold(args[2], "on"):
		ct := c.trk
		switch {
		case !bcast && len(prefixes) > 0:
			c.writeError("ERR PREFIX option requires BCAST mode to be enabled")
		case c.tracking() && ct.bcast != bcast:
			c.writeError("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
		case bcast && (optin || optout):
			c.writeError("ERR OPTIN and OPTOUT are not compatible with BCAST")
		case optin && optout:
			c.writeError("ERR You can't specify both OPTIN mode and OPTOUT mode")
		case c.tracking() && (optin && ct.optout || optout && ct.optin):
			c.writeError("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
		default:
			if bcast && !c.checkPrefixes(prefixes) {
				return
			}
			c.enableTracking(redir, bcast, optin, optout, noloop, prefixes)
			c.writeOK()
		}
	case equalFold(args[2], "off"):
		c.disableTracking()
		c.writeOK()
	default:
		c.writeError(errSyntax)
	}
}

// checkPrefixes is Redis's checkPrefixCollisionsOrReply: no new prefix
// may be a prefix of an existing one or of another new one, or the other
// way round.
func (c *Client) checkPrefixes(prefixes []string) bool {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range prefixes {
		if c.trk != nil {
			for _, old := range c.trk.prefixes {
				if overlap(old, p) {
					c.writeError("ERR Prefix '" + p + "' overlaps with an existing prefix '" + old + "'. Prefixes for a single client must not overlap.")
					return false
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				c.writeError("ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap.")
				return false
			}
		}
	}
	return true
}

func cmdClientTrackingInfo(c *Client, args [][]byte) {
	c.writeMap(3)
	c.writeBulkString("flags")
	flags := []string{"off"}
	if ct := c.trk; c.tracking() {
		flags[0] = "on"
		if ct.bcast {
			flags = append(flags, "bcast")
		}
		if ct.optin {
			flags = append(flags, "optin")
			if ct.caching {
				flags = append(flags, "caching-yes")
			}
		}
		if ct.optout {
			flags = append(flags, "optout")
			if ct.caching {
				flags = append(flags, "caching-no")
			}
		}
		if ct.noloop {
			flags = append(flags, "noloop")
		}
		if ct.brokenRedir {
			flags = append(flags, "broken_redirect")
		}
	}
	c.writeSet(len(flags))
	for _, f := range flags {
		c.writeBulkString(f)
	}
	c.writeBulkString("redirect")
	c.writeInt(c.trackingRedir())
	c.writeBulkString("prefixes")
	if c.trk == nil {
		c.writeArray(0)
		return
	}
	c.writeArray(len(c.trk.prefixes))
	for _, p := range c.trk.prefixes {
		c.writeBulkString(p)
	}
}

func cmdClientGetRedir(c *Client, args [][]byte) { c.writeInt(c.trackingRedir()) }

func cmdClientCaching(c *Client, args [][]byte) {
	if !c.tracking() {
		c.writeError("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case equalFold(args[2], "yes"):
		if !c.trk.optin {
			c.writeError("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case equalFold(args[2], "no"):
		if !c.trk.optout {
			c.writeError("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.writeError(errSyntax)
		return
	}
	c.trk.caching = true
	c.writeOK()
}
