package server

import (
	"strconv"
	"strings"
	"time"
)

// client-output-buffer-limit, as Redis 7.0's networking.c: what a client
// may have waiting to be written, per class. A subscriber that does not
// read while publishers write would otherwise grow without bound; past
// the class's hard limit, or past its soft limit for longer than the soft
// seconds, the client is closed. The check runs whenever output is
// delivered to a client from elsewhere (Server.deliver), as Redis checks
// when it adds a reply; a client's own replies are bounded by the event
// loop reading nothing from a client it cannot write to.

// OutputBufferLimit is one class's client-output-buffer-limit. Zero
// values disable that part.
type OutputBufferLimit struct {
	Hard, Soft  int64 // bytes
	SoftSeconds int64
}

// The client classes of client-output-buffer-limit, in Redis's order.
const (
	obufNormal = iota
	obufReplica
	obufPubSub
	obufClasses
)

var obufClassNames = [obufClasses]string{"normal", "slave", "pubsub"}

// defaultOutputBufferLimits are Redis's defaults.
var defaultOutputBufferLimits = [obufClasses]OutputBufferLimit{
	obufNormal:  {},
	obufReplica: {Hard: 256 << 20, Soft: 64 << 20, SoftSeconds: 60},
	obufPubSub:  {Hard: 32 << 20, Soft: 8 << 20, SoftSeconds: 60},
}

// obufError is one of Redis's messages for a bad
// client-output-buffer-limit, which CONFIG SET repeats verbatim (hence
// capitalised and with a full stop).
type obufError string

func (e obufError) Error() string { return string(e) }

const (
	errObufArgs  obufError = "Wrong number of arguments in buffer limit configuration."
	errObufClass obufError = "Invalid client class specified in buffer limit configuration."
	errObufValue obufError = "Error in hard, soft or soft_seconds setting in buffer limit configuration."
)

// parseOutputBufferLimits applies "class hard soft seconds ..." (classes
// normal, replica or slave, pubsub) to limits, all or nothing, with
// Redis's messages.
func parseOutputBufferLimits(limits *[obufClasses]OutputBufferLimit, args []string) error {
	if len(args) == 1 {
		args = strings.Fields(args[0])
	}
	if len(args) == 0 {
		return nil // Redis takes "" as nothing to change
	}
	if len(args)%4 != 0 {
		return errObufArgs
	}
	next := *limits
	for i := 0; i < len(args); i += 4 {
		class := -1
		switch strings.ToLower(args[i]) {
		case "normal":
			class = obufNormal
		case "slave", "replica":
			class = obufReplica
		case "pubsub":
			class = obufPubSub
		}
		if class < 0 {
			return errObufClass
		}
		hard, err1 := parseMemory(args[i+1])
		soft, err2 := parseMemory(args[i+2])
		secs, err3 := strconv.ParseInt(args[i+3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || secs < 0 {
			return errObufValue
		}
		next[class] = OutputBufferLimit{Hard: hard, Soft: soft, SoftSeconds: secs}
	}
	*limits = next
	return nil
}

// formatOutputBufferLimits is CONFIG GET's form.
func formatOutputBufferLimits(limits [obufClasses]OutputBufferLimit) string {
	var b strings.Builder
	for i, l := range limits {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(obufClassNames[i])
		for _, v := range []int64{l.Hard, l.Soft, l.SoftSeconds} {
			b.WriteByte(' ')
			b.WriteString(strconv.FormatInt(v, 10))
		}
	}
	return b.String()
}

// checkOutputLimit closes c when pending bytes of output pass its class's
// limit (Redis's checkClientOutputBufferLimits). Call it with s.mu held.
func (s *Server) checkOutputLimit(c *Client, pending int) {
	class := obufNormal
	if c.subscribed() {
		class = obufPubSub
	}
	l := s.cfg.OutputBufferLimits[class]
	n := int64(pending)
	hard := l.Hard > 0 && n >= l.Hard
	soft := false
	if l.Soft > 0 && n >= l.Soft {
		// In whole seconds, as Redis's server.unixtime: over the soft
		// limit for more than SoftSeconds seconds.
		now := time.Now().Unix()
		if c.softSince == 0 {
			c.softSince = now
		} else if now-c.softSince > l.SoftSeconds {
			soft = true
		}
	} else {
		c.softSince = 0
	}
	if !hard && !soft {
		return
	}
	c.closeASAP = true
	s.logf('#', "Client id=%d addr=%s scheduled to be closed ASAP for overcoming of output buffer limits.", c.id, c.addr)
	c.closeConn()
}
