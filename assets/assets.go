// Package assets holds files shipped inside dpulab that labs share: redis.conf
// templates and reference figures with their sources. Labs refer to them as
// "assets/NAME" (e.g. config: assets/redis.conf.tmpl).
package assets

import (
	"embed"
	"io/fs"
)

//go:embed *.tmpl
var files embed.FS

// FS returns the embedded assets, names relative to this directory.
func FS() fs.FS { return files }

// ReadFile reads one embedded asset by name (without the "assets/" prefix).
func ReadFile(name string) ([]byte, error) { return files.ReadFile(name) }
