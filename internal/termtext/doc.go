// Package termtext is the one sanitiser for text that reaches a terminal from
// outside the binary: lab files, remote command output, server replies,
// results being replayed. Anything that did not come from our own code goes
// through Plain (or SGR, where colours from remote output are worth keeping)
// before it is drawn, so that a lab file or a remote host can never write the
// operator's clipboard (OSC 52), clear the screen, move the cursor, retitle
// the window, or reorder text with bidi overrides.
//
// The scanner follows the shape of the DEC/ECMA-48 parser terminals use
// (vt100.net's state diagram): ESC, CSI, OSC and the DCS/SOS/PM/APC strings,
// with C1 controls in either encoding (U+0080..U+009F as UTF-8, or the raw
// 8-bit byte) meaning what their 7-bit ESC forms mean. Where it departs from
// a terminal it does so on the side of showing text: a C0 control (newline,
// tab, ...) inside an escape or control sequence ends the sequence and is then
// handled as text, so a malformed sequence hides at most the rest of its line.
// Strings (OSC, DCS, SOS, PM, APC) run, as in a terminal, to their terminator:
// ST (ESC \ or C1 ST), BEL for OSC, CAN or SUB, or any ESC.
//
// Whatever the input, the output of Plain holds no ESC, no C0 control but
// newline and tab, no DEL, no C1 control, no bidi override or isolate, and is
// valid UTF-8; the output of SGR holds ESC only as the first byte of a
// Select Graphic Rendition sequence whose parameters are in the safe subset
// (see SGR). The fuzz tests hold both functions to that.
//
// Plain and SGR return their argument, without allocating, when it is
// already clean; that is the common case and the reason every boundary can
// afford to call them.
package termtext
