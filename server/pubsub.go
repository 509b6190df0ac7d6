package server

import (
	"sort"

	"github.com/dpulab/dpulab/server/resp"
)

// Pub/sub state, as Redis 7.0's pubsub.c: the server maps each channel
// (and each shard channel, and each pattern) to its subscribers; each
// client keeps what it subscribed to. Channels and patterns count together
// in the subscription counts SUBSCRIBE and PSUBSCRIBE reply; shard
// channels count on their own. A client with any subscription is in
// subscribed mode: in RESP2 it may then only send (P|S)SUBSCRIBE,
// (P|S)UNSUBSCRIBE, PING, QUIT and RESET (conn.go's exec), and its output
// is bounded by the pubsub class of client-output-buffer-limit.

// pubsubState is the server's side, guarded by Server.mu.
type pubsubState struct {
	channels map[string]*subscribers
	patterns map[string]*subscribers
	shard    map[string]*subscribers
}

// subscribers are the clients of one channel or pattern. A set: a channel
// with many subscribers loses each in O(1), and which subscriber gets a
// message first is nothing a client can observe.
type subscribers struct {
	clients map[*Client]struct{}
	pattern []byte // for patterns: the pattern, matched against channels
}

// clientSubs is a client's side. The values are a sequence number, so
// that an UNSUBSCRIBE without arguments goes through them in the order
// they were made (Redis goes in its hash table's order, which no client
// can rely on).
type clientSubs struct {
	channels map[string]uint64
	patterns map[string]uint64
	shard    map[string]uint64
	seq      uint64
}

// pubsubKind selects one of the three namespaces.
type pubsubKind int

const (
	kindChannel pubsubKind = iota
	kindPattern
	kindShard
)

// Message type names, as Redis's shared objects.
var (
	msgSubscribe = [...]string{kindChannel: "subscribe", kindPattern: "psubscribe", kindShard: "ssubscribe"}
	msgUnsub     = [...]string{kindChannel: "unsubscribe", kindPattern: "punsubscribe", kindShard: "sunsubscribe"}
)

// subscribed reports whether c has any subscription (Redis's
// CLIENT_PUBSUB flag: subscribed mode).
func (c *Client) subscribed() bool {
	p := c.pubsub
	return p != nil && len(p.channels)+len(p.patterns)+len(p.shard) > 0
}

// subCount is what (un)subscribe replies count: channels and patterns
// together, shard channels apart.
func (c *Client) subCount(k pubsubKind) int {
	p := c.pubsub
	if p == nil {
		return 0
	}
	if k == kindShard {
		return len(p.shard)
	}
	return len(p.channels) + len(p.patterns)
}

func (p *clientSubs) of(k pubsubKind) *map[string]uint64 {
	switch k {
	case kindPattern:
		return &p.patterns
	case kindShard:
		return &p.shard
	}
	return &p.channels
}

func (s *pubsubState) of(k pubsubKind) *map[string]*subscribers {
	switch k {
	case kindPattern:
		return &s.patterns
	case kindShard:
		return &s.shard
	}
	return &s.channels
}

// subscribe adds name to c's subscriptions of kind k (nothing if already
// there) and replies the confirmation.
func (c *Client) subscribe(k pubsubKind, name []byte) {
	if c.pubsub == nil {
		c.pubsub = &clientSubs{}
	}
	mine := c.pubsub.of(k)
	if _, ok := (*mine)[string(name)]; !ok {
		if *mine == nil {
			*mine = make(map[string]uint64)
		}
		key := string(name)
		c.pubsub.seq++
		(*mine)[key] = c.pubsub.seq
		all := c.srv.ps.of(k)
		if *all == nil {
			*all = make(map[string]*subscribers)
		}
		subs := (*all)[key]
		if subs == nil {
			subs = &subscribers{clients: make(map[*Client]struct{})}
			if k == kindPattern {
				subs.pattern = []byte(key)
			}
			(*all)[key] = subs
		}
		subs.clients[c] = struct{}{}
	}
	c.writePubsubHeader(3)
	c.writeBulkString(msgSubscribe[k])
	c.writeBulk(name)
	c.writeInt(int64(c.subCount(k)))
}

// unsubscribe removes name from c's subscriptions of kind k; notify writes
// the confirmation (RESET and a closing client do not). It reports whether
// c was subscribed.
func (c *Client) unsubscribe(k pubsubKind, name string, notify bool) bool {
	was := false
	if c.pubsub != nil {
		mine := c.pubsub.of(k)
		if _, ok := (*mine)[name]; ok {
			was = true
			delete(*mine, name)
			all := c.srv.ps.of(k)
			if subs := (*all)[name]; subs != nil {
				delete(subs.clients, c)
				if len(subs.clients) == 0 {
					// No empty entries: PUBSUB CHANNELS lists only
					// channels someone listens to.
					delete(*all, name)
				}
			}
		}
	}
	if notify {
		c.writePubsubHeader(3)
		c.writeBulkString(msgUnsub[k])
		c.writeBulkString(name)
		c.writeInt(int64(c.subCount(k)))
	}
	return was
}

// unsubscribeAll removes every subscription of kind k, in the order they
// were made. With notify and none to remove, it still replies once, with
// a null name, as Redis does.
func (c *Client) unsubscribeAll(k pubsubKind, notify bool) {
	var names []string
	if c.pubsub != nil {
		mine := *c.pubsub.of(k)
		names = make([]string, 0, len(mine))
		for n := range mine {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return mine[names[i]] < mine[names[j]] })
	}
	for _, n := range names {
		c.unsubscribe(k, n, notify)
	}
	if notify && len(names) == 0 {
		c.writePubsubHeader(3)
		c.writeBulkString(msgUnsub[k])
		c.writeNull()
		c.writeInt(int64(c.subCount(k)))
	}
}

// resetPubSub drops every subscription without replies (RESET, and a
// client that leaves).
func (c *Client) resetPubSub() {
	if c.pubsub == nil {
		return
	}
	for _, k := range []pubsubKind{kindChannel, kindPattern, kindShard} {
		c.unsubscribeAll(k, false)
	}
}

// writePubsubHeader starts a pub/sub message: a push in RESP3, an array
// in RESP2.
func (c *Client) writePubsubHeader(n int) {
	if c.resp == 3 {
		c.out = resp.AppendPush(c.out, n)
	} else {
		c.out = resp.AppendArray(c.out, n)
	}
}

// publishMessage delivers message to channel's subscribers (and, unless shard, to
// the clients whose patterns match it) and returns how many deliveries it
// made, as PUBLISH replies. Each message is encoded once per protocol.
func (c *Client) publishMessage(channel, message []byte, shard bool) int64 {
	s := c.srv
	var enc [2][]byte // RESP2, RESP3
	encode := func(proto int, kind string, pattern []byte) []byte {
		b := enc[proto-2][:0]
		n := 3
		if pattern != nil {
			n = 4
		}
		if proto == 3 {
			b = resp.AppendPush(b, n)
		} else {
			b = resp.AppendArray(b, n)
		}
		b = resp.AppendBulkString(b, kind)
		if pattern != nil {
			b = resp.AppendBulk(b, pattern)
		}
		b = resp.AppendBulk(b, channel)
		b = resp.AppendBulk(b, message)
		enc[proto-2] = b
		return b
	}
	var receivers int64
	send := func(subs map[*Client]struct{}, kind string, pattern []byte) {
		var have [2]bool
		// deliver never changes subscriptions (a subscriber closed for
		// its output limit leaves when its connection is released), so
		// the set is not modified while it is walked.
		for to := range subs {
			p := to.resp - 2
			if !have[p] {
				encode(to.resp, kind, pattern)
				have[p] = true
			}
			s.deliver(c, to, enc[p])
			receivers++
		}
	}
	if shard {
		if subs := s.ps.shard[string(channel)]; subs != nil {
			send(subs.clients, "smessage", nil)
		}
		return receivers
	}
	if subs := s.ps.channels[string(channel)]; subs != nil {
		send(subs.clients, "message", nil)
	}
	for _, subs := range s.ps.patterns {
		if globMatch(subs.pattern, channel, false) {
			send(subs.clients, "pmessage", subs.pattern)
		}
	}
	return receivers
}
