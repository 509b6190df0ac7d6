package steps

import "strings"

// SecretVar reports whether a variable holds a secret (its name says
// password, passphrase, secret or token). Secrets are never saved in
// progress or results, and reach commands only through stdin.
func SecretVar(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"password", "passphrase", "secret", "token"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// redactVars copies vars with secrets replaced by "(hidden)" (for
// results) or left out (drop, for saved progress).
func redactVars(vars map[string]string, drop bool) map[string]string {
	out := make(map[string]string, len(vars))
	for k, v := range vars {
		if SecretVar(k) && v != "" {
			if drop {
				continue
			}
			v = "(hidden)"
		}
		out[k] = v
	}
	return out
}

// SecretSetting reports whether a redis.conf directive holds a secret.
func SecretSetting(name string) bool {
	switch strings.ToLower(name) {
	case "requirepass", "masterauth":
		return true
	}
	return SecretVar(name)
}
