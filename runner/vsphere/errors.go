package vsphere

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// Problem is what kind of failure an *Error reports: each has its own
// message and fix, so that a certificate refusal, an unreachable server
// or a refused login never reads as a missing DPU.
type Problem int

const (
	// Unreachable: no TCP connection to vCenter (refused, no route, no
	// answer, a name that does not resolve).
	Unreachable Problem = iota + 1
	// NotVSphere: something answered, but not vCenter's HTTPS SDK (no
	// TLS, or no SDK at the url's path).
	NotVSphere
	// LoginRefused: vCenter refused the user name or the password.
	LoginRefused
	// NoPassword: there was no password and no one to ask for it.
	NoPassword
	// NotFound: vCenter has no ESXi host or VM of the inventory's name.
	NotFound
)

// DefaultPasswordEnv is the environment variable the vCenter password is
// read from when the inventory's vcenter section names none.
const DefaultPasswordEnv = "DPULAB_VCENTER_PASSWORD"

// Error is a failure to use vCenter: what happened (Error) and what to do
// about it (Hint), apart, so that the engine shows this fix instead of the
// hint a check step wrote for what vCenter answers. It never holds the
// password.
type Error struct {
	Problem Problem
	// Address is vCenter's host:port.
	Address string
	Msg     string
	Fix     string
	// Err is the cause, kept for errors.Is and errors.As; its text (a Go
	// network error) is not shown.
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Hint says what to do.
func (e *Error) Hint() string { return e.Fix }

func (e *Error) Unwrap() error { return e.Err }

// IsProblem reports whether err is an *Error of kind p.
func IsProblem(err error, p Problem) bool {
	var e *Error
	return errors.As(err, &e) && e.Problem == p
}

// dialTimeout bounds one TCP connection to vCenter: a filtered port
// otherwise hangs until the run's context ends.
const dialTimeout = 20 * time.Second

// connErr turns a failure to talk to vCenter at all into what happened, in
// words, and what to check; our own certificate refusal is passed through
// as it is.
func connErr(u, addr string, err error) error {
	var te *ThumbprintError
	if errors.As(err, &te) {
		return te
	}
	host, port, _ := net.SplitHostPort(addr)
	tried := fmt.Sprintf("tried: a TCP connection to %s port %s, for %s", host, port, u)
	check := fmt.Sprintf("Check vcenter.url in the inventory (vCenter's SDK listens on port 443 unless it was changed), "+
		"that vCenter is up, and that this machine reaches it: nc -vz %s %s, or curl -k https://%s/sdk/vimServiceVersions.xml", host, port, addr)
	e := &Error{Problem: Unreachable, Address: addr, Err: err, Fix: check}
	var dns *net.DNSError
	var rh tls.RecordHeaderError
	var ne net.Error
	switch {
	case errors.As(err, &dns):
		e.Msg = fmt.Sprintf("vCenter %s cannot be reached: the name %s does not resolve (%s)", addr, host, tried)
		e.Fix = fmt.Sprintf("Check the host name in vcenter.url, or use vCenter's address; getent hosts %s shows what this machine resolves", host)
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Msg = fmt.Sprintf("vCenter %s cannot be reached: connection refused, nothing listens on port %s of %s (%s)", addr, port, host, tried)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		e.Msg = fmt.Sprintf("vCenter %s cannot be reached: no route to %s from this machine (%s)", addr, host, tried)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		e.Msg = fmt.Sprintf("vCenter %s cannot be reached: no answer within %v, a firewall may drop the packets (%s)", addr, dialTimeout, tried)
	case errors.Is(err, syscall.ECONNRESET), errors.As(err, &rh),
		// net/http's own words for a RecordHeaderError with an HTTP answer.
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		e.Problem = NotVSphere
		e.Msg = fmt.Sprintf("vCenter %s: port %s answers, but not with TLS: it is not vCenter's HTTPS port (%s)", addr, port, tried)
		e.Fix = "Put vCenter's HTTPS address in vcenter.url: https://HOST/sdk (port 443), the address of the vSphere Client without its path"
	case errors.Is(err, context.Canceled):
		e.Msg = fmt.Sprintf("vCenter %s: connecting was interrupted", addr)
		e.Fix = ""
	default:
		e.Problem = NotVSphere
		e.Msg = fmt.Sprintf("vCenter %s: the server at %s does not answer as vCenter's SDK (%s)", addr, u, tried)
		e.Fix = "Put the address of vCenter (or of an ESXi host's own SDK) in vcenter.url: https://HOST/sdk; " + check
	}
	return e
}
