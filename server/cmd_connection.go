package server

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

func init() { registerGroup(registerConnectionCommands) }

func registerConnectionCommands(t *commandTable) {
	const g = "connection"
	t.add(
		&command{Name: "ping", Fn: cmdPing, Arity: -1, Flags: flagFast, Group: g, Summary: "Returns the server's liveliness response.", Since: "1.0.0"},
		&command{Name: "echo", Fn: cmdEcho, Arity: 2, Flags: flagFast | flagLoading | flagStale, Group: g, Summary: "Returns the given string.", Since: "1.0.0"},
		&command{Name: "hello", Fn: cmdHello, Arity: -1, Flags: flagNoAuth | flagFast | flagLoading | flagStale | flagNoScript | flagAllowBusy, Group: g, Summary: "Handshakes with the Redis server.", Since: "6.0.0"},
		&command{Name: "auth", Fn: cmdAuth, Arity: -2, Flags: flagNoAuth | flagFast | flagLoading | flagStale | flagNoScript | flagAllowBusy, Group: g, Summary: "Authenticates the connection.", Since: "1.0.0"},
		&command{Name: "select", Fn: cmdSelect, Arity: 2, Flags: flagFast | flagLoading | flagStale, Group: g, Summary: "Changes the selected database.", Since: "1.0.0"},
		&command{Name: "quit", Fn: cmdQuit, Arity: -1, Flags: flagNoAuth | flagFast | flagLoading | flagStale | flagNoScript | flagAllowBusy, Group: g, Summary: "Closes the connection.", Since: "1.0.0"},
		&command{Name: "reset", Fn: cmdReset, Arity: 1, Flags: flagNoAuth | flagFast | flagLoading | flagStale | flagNoScript | flagAllowBusy, Group: g, Summary: "Resets the connection.", Since: "6.2.0"},
		&command{Name: "client", Arity: -2, Flags: 0, Group: g, Summary: "A container for client connection commands.", Since: "2.4.0",
			Subcommands: []*command{
				{Name: "client|id", Fn: cmdClientID, Arity: 2, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Returns the unique client ID of the connection.", Since: "5.0.0"},
				{Name: "client|setname", Fn: cmdClientSetName, Arity: 3, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Sets the connection name.", Since: "2.6.9"},
				{Name: "client|getname", Fn: cmdClientGetName, Arity: 2, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Returns the name of the connection.", Since: "2.6.9"},
				{Name: "client|setinfo", Fn: cmdClientSetInfo, Arity: 4, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Sets information specific to the client or connection.", Since: "7.2.0"},
				{Name: "client|list", Fn: cmdClientList, Arity: -2, Flags: flagAdmin | flagLoading | flagStale | flagNoScript, Group: g, Summary: "Lists open connections.", Since: "2.4.0"},
				{Name: "client|info", Fn: cmdClientInfo, Arity: 2, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Returns information about the connection.", Since: "6.2.0"},
				{Name: "client|kill", Fn: cmdClientKill, Arity: -3, Flags: flagAdmin | flagLoading | flagStale | flagNoScript, Group: g, Summary: "Terminates open connections.", Since: "2.4.0"},
				{Name: "client|pause", Fn: cmdClientPause, Arity: -3, Flags: flagAdmin | flagLoading | flagStale | flagNoScript, Group: g, Summary: "Suspends commands processing.", Since: "2.9.50"},
				{Name: "client|unpause", Fn: cmdClientUnpause, Arity: 2, Flags: flagAdmin | flagLoading | flagStale | flagNoScript, Group: g, Summary: "Resumes processing commands from paused clients.", Since: "6.2.0"},
				{Name: "client|trackinginfo", Fn: cmdClientTrackingInfo, Arity: 2, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Returns information about server-assisted client-side caching for the connection.", Since: "6.2.0"},
				{Name: "client|getredir", Fn: cmdClientGetRedir, Arity: 2, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Returns the client ID to which the connection's tracking notifications are redirected.", Since: "6.0.0"},
				{Name: "client|caching", Fn: cmdClientCaching, Arity: 3, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Instructs the server whether to track the keys in the next request.", Since: "6.0.0"},
				{Name: "client|reply", Fn: cmdClientReply, Arity: 3, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Instructs the server whether to reply to commands.", Since: "3.2.0"},
				{Name: "client|tracking", Fn: cmdClientTracking, Arity: -3, Flags: flagLoading | flagStale | flagNoScript, Group: g, Summary: "Controls server-assisted client-side caching for the connection.", Since: "6.0.0"},
				{Name: "client|no-evict", Fn: cmdClientNoEvict, Arity: 3, Flags: flagAdmin | flagLoading | flagStale | flagNoScript, Group: g, Summary: "Sets the client eviction mode of the connection.", Since: "7.0.0"},
				{Name: "client|unblock", Fn: cmdClientUnblock, Arity: -3, Flags: flagAdmin | flagLoading | flagStale | flagNoScript, Group: g, Summary: "Unblocks a client blocked by a blocking command from a different connection.", Since: "5.0.0"},
				{Name: "client|help", Fn: cmdClientHelp, Arity: 2, Flags: flagLoading | flagStale, Group: g, Summary: "Returns helpful text about the different subcommands.", Since: "5.0.0"},
			}},
	)
}

func cmdPing(c *Client, args [][]byte) {
	if len(args) <= 2 && c.resp == 2 && c.subscribed() {
		pingSubscribed(c, args)
		return
	}
	switch len(args) {
	case 1:
		c.writeSimple("PONG")
	case 2:
		c.writeBulk(args[1])
	default:
		c.writeArityError("ping")
	}
}

func cmdEcho(c *Client, args [][]byte) { c.writeBulk(args[1]) }

// checkPassword compares a password with requirepass in constant time, so
// the comparison's duration says nothing about the password.
func (c *Client) checkPassword(user, pass []byte) bool {
	want := c.srv.cfg.RequirePass
	if user != nil && string(user) != "default" {
		return false
	}
	if want == "" {
		return true
	}
	return constantTimeEqual(pass, []byte(want))
}

func constantTimeEqual(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	var v byte
	for i := range a {
		v |= a[i] ^ b[i]
	}
	return v == 0
}

const errWrongPass = "WRONGPASS invalid username-password pair or user is disabled."

func cmdAuth(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.writeError(errSyntax)
		return
	}
	if len(args) == 2 && c.srv.cfg.RequirePass == "" {
		c.writeError("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	var user []byte
	pass := args[1]
	if len(args) == 3 {
		user, pass = args[1], args[2]
	}
	if !c.checkPassword(user, pass) {
		c.srv.logf('-', "AUTH failed for client id=%d addr=%s", c.id, c.addr)
		c.writeError(errWrongPass)
		return
	}
	c.authed = true
	c.writeOK()
}

func cmdHello(c *Client, args [][]byte) {
	proto := c.resp
	i := 1
	if len(args) >= 2 {
		v, ok := parseInt(args[1])
		if !ok {
			c.writeError("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			c.writeError("NOPROTO unsupported protocol version")
			return
		}
		proto = int(v)
		i = 2
	}
	var setName []byte
	authed := c.authed
	for ; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case equalFold(args[i], "auth") && more >= 2:
			if !c.checkPassword(args[i+1], args[i+2]) {
				c.writeError(errWrongPass)
				return
			}
			authed = true
			i += 2
		case equalFold(args[i], "setname") && more >= 1:
			setName = args[i+1]
			if !validClientName(setName) {
				c.writeError("ERR Client names cannot contain spaces, newlines or special characters.")
				return
			}
			i++
		default:
			c.writeError("ERR Syntax error in HELLO option '" + truncate(args[i], 128) + "'")
			return
		}
	}
	if !authed {
		c.writeError("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	c.authed = true
	if setName != nil {
		c.name = string(setName)
	}
	c.resp = proto
	c.writeMap(7)
	c.writeBulkString("server")
	c.writeBulkString("redis")
	c.writeBulkString("version")
	c.writeBulkString(Version)
	c.writeBulkString("proto")
	c.writeInt(int64(proto))
	c.writeBulkString("id")
	c.writeInt(c.id)
	c.writeBulkString("mode")
	c.writeBulkString("standalone")
	c.writeBulkString("role")
	c.writeBulkString("master")
	c.writeBulkString("modules")
	c.writeArray(0)
}

func cmdSelect(c *Client, args [][]byte) {
	n, ok := parseInt(args[1])
	if !ok {
		c.writeError(errNotInt)
		return
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		// Redis reads the index as a C int (getIntFromObjectOrReply).
		c.writeError("ERR value is out of range, value must between -2147483648 and 2147483647")
		return
	}
	if n < 0 || n >= int64(len(c.srv.dbs)) {
		c.writeError(errInvalidDB)
		return
	}
	c.dbIndex = int(n)
	c.db = c.srv.dbs[n]
	c.writeOK()
}

func cmdQuit(c *Client, args [][]byte) {
	c.writeOK()
	c.closeAfter = true
}

func cmdReset(c *Client, args [][]byte) {
	c.multi = nil
	c.unwatchAll()
	c.resetPubSub()
	c.db, c.dbIndex = c.srv.dbs[0], 0
	c.resp = 2
	c.name = ""
	c.authed = c.srv.cfg.RequirePass == ""
	c.disableTracking()
	c.reply = replyOn
	c.writeSimple("RESET")
}

// validClientName is Redis's rule: printable ASCII without spaces.
func validClientName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

func cmdClientID(c *Client, args [][]byte) { c.writeInt(c.id) }

func cmdClientSetName(c *Client, args [][]byte) {
	if !validClientName(args[2]) {
		c.writeError("ERR Client names cannot contain spaces, newlines or special characters.")
		return
	}
	c.name = string(args[2])
	c.writeOK()
}

func cmdClientGetName(c *Client, args [][]byte) {
	if c.name == "" {
		c.writeNull()
		return
	}
	c.writeBulkString(c.name)
}

func cmdClientSetInfo(c *Client, args [][]byte) {
	val := args[3]
	for _, ch := range val {
		if ch < '!' || ch > '~' {
			c.writeError("ERR " + strings.ToUpper(string(args[2])) + " cannot contain spaces, newlines or special characters.")
			return
		}
	}
	switch {
	case equalFold(args[2], "lib-name"):
		c.libName = string(val)
	case equalFold(args[2], "lib-ver"):
		c.libVer = string(val)
	default:
		c.writeError("ERR Unrecognized option '" + truncate(args[2], 128) + "'")
		return
	}
	c.writeOK()
}

// infoLine is one CLIENT LIST / CLIENT INFO line, in Redis's field order,
// as caller sees it. Another client's buffer sizes are those published
// after its last batch; the caller's own are live and, as in Redis, its
// query buffer still holds the running command (argv-mem its arguments).
func (c *Client) infoLine(now time.Time, caller *Client) string {
	cmd := "NULL"
	if c.lastCmd != "" {
		cmd = c.lastCmd
	}
	age := int64(now.Sub(c.created).Seconds())
	idle := (now.UnixMilli() - c.lastInteraction.Load()) / 1000
	qbuf, qbufFree, omem, totMem, argvMem := c.qbuf.Load(), c.qbufFree.Load(), c.omem.Load(), c.totMem.Load(), 0
	if c == caller {
		qbuf, qbufFree = int64(c.wpos-c.rpos+c.cmdLen), int64(len(c.rbuf)-c.wpos)
		for _, a := range c.args {
			argvMem += len(a)
		}
		c.publish()
		omem, totMem = 0, c.totMem.Load()
	}
	sub, psub, ssub := c.subCounts()
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d multi=-1 qbuf=%d qbuf-free=%d argv-mem=%d multi-mem=0 rbs=%d rbp=0 obl=0 oll=0 omem=%d tot-mem=%d events=r cmd=%s user=default redir=%d resp=%d lib-name=%s lib-ver=%s",
		c.id, c.addr, c.laddr, c.fd, c.name, age, idle, c.clientFlags(), c.dbIndex, sub, psub, ssub, qbuf, qbufFree, argvMem, readBufSize, omem, totMem, cmd, c.trackingRedir(), c.resp, c.libName, c.libVer)
}

func (s *Server) clientList() []*Client {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	list := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		list = append(list, c)
	}
	sortClients(list)
	return list
}

func sortClients(l []*Client) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j].id < l[j-1].id; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

func cmdClientList(c *Client, args [][]byte) {
	var ids map[int64]bool
	typ := ""
	if len(args) > 2 {
		switch {
		case equalFold(args[2], "type") && len(args) == 4:
			t := strings.ToLower(string(args[3]))
			if t != "normal" && t != "master" && t != "replica" && t != "pubsub" {
				c.writeError("ERR Unknown client type '" + string(args[3]) + "'")
				return
			}
			if t == "replica" {
				t = "slave"
			}
			typ = t
		case equalFold(args[2], "id") && len(args) >= 4:
			ids = map[int64]bool{}
			for _, a := range args[3:] {
				id, ok := parseInt(a)
				if !ok || id <= 0 {
					c.writeError("ERR Invalid client ID")
					return
				}
				ids[id] = true
			}
		default:
			c.writeError(errSyntax)
			return
		}
	}
	now := time.Now()
	var b strings.Builder
	for _, o := range c.srv.clientList() {
		if ids != nil && !ids[o.id] || typ != "" && o.clientType() != typ {
			continue
		}
		b.WriteString(o.infoLine(now, c))
		b.WriteByte('\n')
	}
	c.writeVerbatim(b.String())
}

func cmdClientInfo(c *Client, args [][]byte) {
	c.writeVerbatim(c.infoLine(time.Now(), c) + "\n")
}

func cmdClientKill(c *Client, args [][]byte) {
	var victims []*Client
	list := c.srv.clientList()
	if len(args) == 3 {
		// Old form: CLIENT KILL addr:port.
		for _, o := range list {
			if o.addr == string(args[2]) {
				victims = append(victims, o)
			}
		}
		if len(victims) == 0 {
			c.writeError("ERR No such client")
			return
		}
		c.kill(victims)
		c.writeOK()
		return
	}
	if len(args)%2 != 0 {
		c.writeError(errSyntax)
		return
	}
	skipMe := true
	filters := map[string]string{}
	for i := 2; i < len(args); i += 2 {
		k := strings.ToLower(string(args[i]))
		v := string(args[i+1])
		switch k {
		case "id", "addr", "laddr", "user", "type":
			filters[k] = v
		case "skipme":
			switch strings.ToLower(v) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				c.writeError(errSyntax)
				return
			}
		default:
			c.writeError(errSyntax)
			return
		}
	}
	var want int64
	if v, ok := filters["id"]; ok {
		id, good := parseInt([]byte(v))
		if !good || id <= 0 {
			c.writeError("ERR client-id should be greater than 0")
			return
		}
		want = id
	}
	for _, o := range list {
		if want != 0 && o.id != want {
			continue
		}
		if v, ok := filters["addr"]; ok && o.addr != v {
			continue
		}
		if v, ok := filters["laddr"]; ok && o.laddr != v {
			continue
		}
		if v, ok := filters["user"]; ok && v != "default" {
			continue
		}
		if v, ok := filters["type"]; ok && strings.ToLower(v) != o.clientType() {
			continue
		}
		if skipMe && o == c {
			continue
		}
		victims = append(victims, o)
	}
	c.kill(victims)
	c.writeInt(int64(len(victims)))
}

// kill closes other clients' connections now, and this client's after its
// reply is written.
func (c *Client) kill(victims []*Client) {
	for _, o := range victims {
		if o == c {
			c.closeAfter = true
			continue
		}
		o.closeConn()
	}
}

func cmdClientNoEvict(c *Client, args [][]byte) {
	if !equalFold(args[2], "on") && !equalFold(args[2], "off") {
		c.writeError(errSyntax)
		return
	}
	c.writeOK()
}

var clientHelp = []string{
	"CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are: ID <client-id>, ADDR <ip:port>, LADDR <ip:port>, USER <username>, TYPE normal, SKIPME (YES|NO).",
	"LIST [options ...]",
	"    Return information about client connections. Options: TYPE (NORMAL|MASTER|REPLICA|PUBSUB), ID id [id ...].",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"SETINFO <LIB-NAME|LIB-VER> <value>",
	"    Set client library name or version.",
	"NO-EVICT (ON|OFF)",
	"    Accepted for compatibility; clients are never evicted.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"HELP",
	"    Print this help.",
}

func cmdClientHelp(c *Client, args [][]byte) { c.writeHelp(clientHelp) }

func (c *Client) writeHelp(lines []string) {
	c.writeArray(len(lines))
	for _, l := range lines {
		c.writeSimple(l)
	}
}

// itoa is strconv.Itoa for int64, for building INFO text.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
