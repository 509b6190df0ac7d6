package steps

import stepkind "github.com/dpulab/dpulab/steps/kind"

// SecretVar reports whether a variable holds a secret (its name says
// password, passphrase, secret or token). Secrets are never saved in
// progress or results, and reach commands only through stdin.
func SecretVar(name string) bool { return stepkind.SecretVar(name) }

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
func SecretSetting(name string) bool { return stepkind.SecretSetting(name) }
