package server

// Pub/sub commands (pubsub.c): SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE,
// PUNSUBSCRIBE, PUBLISH, their sharded forms (SSUBSCRIBE, SUNSUBSCRIBE,
// SPUBLISH, which outside a cluster are one more namespace) and PUBSUB.
// The state and the delivery are in pubsub.go.

func init() {
	registerGroup(registerPubSubCommands)
	// The sharded commands name channels where keys go (for cluster
	// routing): Redis's key specs flag them not_key.
	for _, name := range []string{"ssubscribe", "sunsubscribe", "spublish"} {
		keySpecFlags[name] = "not_key"
	}
}

func registerPubSubCommands(t *commandTable) {
	const g = "pubsub"
	sub := flagPubSub | flagNoScript | flagLoading | flagStale
	pub := flagPubSub | flagLoading | flagStale | flagFast
	t.add(
		&command{Name: "subscribe", Fn: cmdSubscribe, Arity: -2, Flags: sub, Group: g, Summary: "Listens for messages published to channels.", Since: "2.0.0"},
		&command{Name: "unsubscribe", Fn: cmdUnsubscribe, Arity: -1, Flags: sub, Group: g, Summary: "Stops listening to messages posted to channels.", Since: "2.0.0"},
		&command{Name: "psubscribe", Fn: cmdPSubscribe, Arity: -2, Flags: sub, Group: g, Summary: "Listens for messages published to channels that match one or more patterns.", Since: "2.0.0"},
		&command{Name: "punsubscribe", Fn: cmdPUnsubscribe, Arity: -1, Flags: sub, Group: g, Summary: "Stops listening to messages published to channels that match one or more patterns.", Since: "2.0.0"},
		&command{Name: "publish", Fn: cmdPublish, Arity: 3, Flags: pub, Group: g, Summary: "Posts a message to a channel.", Since: "2.0.0"},
		&command{Name: "ssubscribe", Fn: cmdSSubscribe, Arity: -2, Flags: sub, FirstKey: 1, LastKey: -1, Group: g, Summary: "Listens for messages published to shard channels.", Since: "7.0.0"},
		&command{Name: "sunsubscribe", Fn: cmdSUnsubscribe, Arity: -1, Flags: sub, FirstKey: 1, LastKey: -1, Group: g, Summary: "Stops listening to messages posted to shard channels.", Since: "7.0.0"},
		&command{Name: "spublish", Fn: cmdSPublish, Arity: 3, Flags: pub, FirstKey: 1, LastKey: 1, Group: g, Summary: "Post a message to a shard channel", Since: "7.0.0"},
		&command{Name: "pubsub", Arity: -2, Group: g, Summary: "A container for Pub/Sub commands.", Since: "2.8.0",
			Subcommands: []*command{
				{Name: "pubsub|channels", Fn: cmdPubSubChannels, Arity: -2, Flags: flagPubSub | flagLoading | flagStale, Group: g, Summary: "Returns the active channels.", Since: "2.8.0"},
				{Name: "pubsub|numpat", Fn: cmdPubSubNumPat, Arity: 2, Flags: flagPubSub | flagLoading | flagStale, Group: g, Summary: "Returns a count of unique pattern subscriptions.", Since: "2.8.0"},
				{Name: "pubsub|numsub", Fn: cmdPubSubNumSub, Arity: -2, Flags: flagPubSub | flagLoading | flagStale, Group: g, Summary: "Returns a count of subscribers to channels.", Since: "2.8.0"},
				{Name: "pubsub|shardchannels", Fn: cmdPubSubShardChannels, Arity: -2, Flags: flagPubSub | flagLoading | flagStale, Group: g, Summary: "Returns the active shard channels.", Since: "7.0.0"},
				{Name: "pubsub|shardnumsub", Fn: cmdPubSubShardNumSub, Arity: -2, Flags: flagPubSub | flagLoading | flagStale, Group: g, Summary: "Returns the count of subscribers of shard channels.", Since: "7.0.0"},
				{Name: "pubsub|help", Fn: cmdPubSubHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Returns helpful text about the different subcommands.", Since: "6.2.0"},
			}},
	)
}

func cmdSubscribe(c *Client, args [][]byte)  { subscribeGeneric(c, args, kindChannel) }
func cmdPSubscribe(c *Client, args [][]byte) { subscribeGeneric(c, args, kindPattern) }
func cmdSSubscribe(c *Client, args [][]byte) { subscribeGeneric(c, args, kindShard) }

func subscribeGeneric(c *Client, args [][]byte, k pubsubKind) {
	// Inside EXEC a client must get one reply per command; Redis lets
	// SUBSCRIBE and PSUBSCRIBE through there for backward compatibility,
	// not SSUBSCRIBE.
	if c.denyBlocking && k == kindShard {
		c.writeError("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	for _, name := range args[1:] {
		c.subscribe(k, name)
	}
}

func cmdUnsubscribe(c *Client, args [][]byte)  { unsubscribeGeneric(c, args, kindChannel) }
func cmdPUnsubscribe(c *Client, args [][]byte) { unsubscribeGeneric(c, args, kindPattern) }
func cmdSUnsubscribe(c *Client, args [][]byte) { unsubscribeGeneric(c, args, kindShard) }

func unsubscribeGeneric(c *Client, args [][]byte, k pubsubKind) {
	if len(args) == 1 {
		c.unsubscribeAll(k, true)
		return
	}
	for _, name := range args[1:] {
		c.unsubscribe(k, string(name), true)
	}
}

func cmdPublish(c *Client, args [][]byte)  { c.writeInt(c.publishMessage(args[1], args[2], false)) }
func cmdSPublish(c *Client, args [][]byte) { c.writeInt(c.publishMessage(args[1], args[2], true)) }

func cmdPubSubChannels(c *Client, args [][]byte)      { channelList(c, args, c.srv.ps.channels) }
func cmdPubSubShardChannels(c *Client, args [][]byte) { channelList(c, args, c.srv.ps.shard) }

// channelList replies the channels of m matching the optional pattern.
func channelList(c *Client, args [][]byte, m map[string]*subscribers) {
	if len(args) > 3 {
		// Redis checks this argument count itself, with the generic
		// message naming the subcommand as sent.
		c.writeError("ERR unknown subcommand or wrong number of arguments for '" + truncate(args[1], 128) + "'. Try PUBSUB HELP.")
		return
	}
	var names []string
	for name := range m {
		if len(args) == 2 || globMatch(args[2], []byte(name), false) {
			names = append(names, name)
		}
	}
	c.writeArray(len(names))
	for _, n := range names {
		c.writeBulkString(n)
	}
}

func cmdPubSubNumSub(c *Client, args [][]byte)      { numSub(c, args, c.srv.ps.channels) }
func cmdPubSubShardNumSub(c *Client, args [][]byte) { numSub(c, args, c.srv.ps.shard) }

// numSub replies each named channel with its number of subscribers, in a
// flat array (in RESP3 too, as Redis).
func numSub(c *Client, args [][]byte, m map[string]*subscribers) {
	c.writeArray(2 * (len(args) - 2))
	for _, name := range args[2:] {
		c.writeBulk(name)
		n := 0
		if subs := m[string(name)]; subs != nil {
			n = len(subs.clients)
		}
		c.writeInt(int64(n))
	}
}

func cmdPubSubNumPat(c *Client, args [][]byte) { c.writeInt(int64(len(c.srv.ps.patterns))) }

var pubsubHelp = []string{
	"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CHANNELS [<pattern>]",
	"    Return the currently active channels matching a <pattern> (default: '*').",
	"NUMPAT",
	"    Return number of subscriptions to patterns.",
	"NUMSUB [<channel> ...]",
	"    Return the number of subscribers for the specified channels, excluding",
	"    pattern subscriptions(default: no channels).",
	"SHARDCHANNELS [<pattern>]",
	"    Return the currently active shard level channels matching a <pattern> (default: '*').",
	"SHARDNUMSUB [<shardchannel> ...]",
	"    Return the number of subscribers for the specified shard level channel(s)",
	"HELP",
	"    Prints this help.",
}

func cmdPubSubHelp(c *Client, args [][]byte) { c.writeHelp(pubsubHelp) }

// pingSubscribed is PING in RESP2 subscribed mode, where replies must
// look like messages: ["pong", message or ""].
func pingSubscribed(c *Client, args [][]byte) {
	c.writeArray(2)
	c.writeBulkString("pong")
	if len(args) == 2 {
		c.writeBulk(args[1])
	} else {
		c.writeBulkString("")
	}
}

// subCounts are CLIENT LIST's sub, psub and ssub. Call it with s.mu held.
func (c *Client) subCounts() (sub, psub, ssub int) {
	if p := c.pubsub; p != nil {
		return len(p.channels), len(p.patterns), len(p.shard)
	}
	return 0, 0, 0
}

// clientType is the client's class for CLIENT LIST TYPE and CLIENT KILL
// TYPE (Redis's getClientType): pubsub while subscribed.
func (c *Client) clientType() string {
	if c.subscribed() {
		return "pubsub"
	}
	return "normal"
}

// clientFlags is CLIENT LIST's flags field, in Redis's order, for the
// states dpulab's clients have. Call it with s.mu held.
func (c *Client) clientFlags() string {
	var b []byte
	if c.subscribed() {
		b = append(b, 'P')
	}
	if c.multi != nil {
		b = append(b, 'x')
	}
	if c.blocked != nil {
		b = append(b, 'b')
	}
	b = c.trackingFlags(b)
	if c.dirtyCAS {
		b = append(b, 'd')
	}
	if c.closeASAP {
		b = append(b, 'A')
	}
	if len(b) == 0 {
		return "N"
	}
	return string(b)
}
