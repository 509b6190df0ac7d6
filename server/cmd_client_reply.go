package server

// CLIENT REPLY ON|OFF|SKIP, as Redis: OFF drops the replies of every
// command after it (and its own), SKIP drops the next command's reply
// (and writes none itself). The dispatcher (runCommands) cuts what the
// command wrote from the client's output; a client's replies are on
// unless it asked, so the hot path pays one comparison per command.
// Output for the client produced by others (pub/sub messages, tracking
// invalidations) is not a reply and still arrives.

// replyMode is a client's CLIENT REPLY state.
type replyMode uint8

const (
	replyOn       replyMode = iota
	replyOff                // CLIENT REPLY OFF
	replySkipNext           // CLIENT REPLY SKIP ran: the next command is skipped
	replySkip               // this command's reply is dropped
)

func cmdClientReply(c *Client, args [][]byte) {
	switch {
	case equalFold(args[2], "on"):
		c.reply = replyOn
		c.writeOK()
	case equalFold(args[2], "off"):
		c.reply = replyOff
	case equalFold(args[2], "skip"):
		if c.reply != replyOff {
			c.reply = replySkipNext
		}
	default:
		c.writeError(errSyntax)
	}
}

// suppressReply runs after each command while c.reply is not replyOn:
// it drops what the command wrote from mark on, and moves SKIP along
// (Redis's resetClient).
func (c *Client) suppressReply(mark int) {
	switch c.reply {
	case replyOff:
		c.out = c.out[:min(mark, len(c.out))]
	case replySkip:
		c.out = c.out[:min(mark, len(c.out))]
		c.reply = replyOn
	case replySkipNext:
		c.reply = replySkip
	}
}
