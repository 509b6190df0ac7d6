package kind

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

// SecretSetting reports whether a redis.conf directive holds a secret.
func SecretSetting(name string) bool {
	switch strings.ToLower(name) {
	case "requirepass", "masterauth":
		return true
	}
	return SecretVar(name)
}
