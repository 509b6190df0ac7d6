package steps

import (
	"fmt"
	"regexp"

	"github.com/dpulab/dpulab/labs"
	stepkind "github.com/dpulab/dpulab/steps/kind"
	"github.com/dpulab/dpulab/steps/kinds/deploy"
)

// RenderedFile is a file a step writes on a host, rendered as the step
// renders it: a template step's dest, a deploy step's redis.conf per
// instance. Content has the values of secret directives (requirepass,
// masterauth, a user's >password) replaced by HiddenSecret: a screen is no
// place for a password.
type RenderedFile = stepkind.RenderedFile

// HiddenSecret stands in for a password in RenderedFile.Content.
const HiddenSecret = "(hidden)"

// maxRenderedFiles bounds what Rendered returns: a deploy of hundreds of
// instances has as many configs, alike but for their port.
const maxRenderedFiles = deploy.MaxFiles

// renderer is a stepPlan that can say what the files it writes hold
// without writing them.
type renderer interface {
	rendered() ([]RenderedFile, error)
}

// Rendered returns the files step i writes, rendered with the lab's
// current variables, as RunStep would write them (nil for a step that
// writes none). more is how many further files it writes that were left
// out (a deploy of many instances).
func (e *Engine) Rendered(i int) (files []RenderedFile, more int, err error) {
	if i < 0 || i >= len(e.lab.Steps) {
		return nil, 0, fmt.Errorf("no step %d", i)
	}
	p, err := e.resolve(&e.lab.Steps[i], e.Vars())
	if err != nil {
		return nil, 0, err
	}
	switch r := p.(type) {
	case renderer:
		files, err = r.rendered()
	case kindPlan:
		kr, ok := r.Plan.(stepkind.Renderer)
		if !ok {
			return nil, 0, nil
		}
		files, err = kr.Rendered()
	default:
		return nil, 0, nil
	}
	if len(files) > maxRenderedFiles {
		more = len(files) - maxRenderedFiles
		files = files[:maxRenderedFiles]
	}
	for k := range files {
		files[k].Content = hideSecrets(files[k].Content)
	}
	return files, more, err
}

// secretLine matches a redis.conf line whose value is a password:
// requirepass and masterauth, quoted or not.
var secretLine = regexp.MustCompile(`(?im)^(\s*(?:requirepass|masterauth|masteruser-password)\s+).*$`)

// userPassword matches an ACL rule that sets a password (>secret) or its
// hash (#hex) on a "user" line.
var userPassword = regexp.MustCompile(`(?m)(^\s*user\s.*?\s)[>#]\S+`)

// hideSecrets replaces the passwords of a redis.conf with HiddenSecret.
func hideSecrets(s string) string {
	s = secretLine.ReplaceAllString(s, "${1}"+HiddenSecret)
	for {
		t := userPassword.ReplaceAllString(s, "${1}"+HiddenSecret)
		if t == s {
			return s
		}
		s = t
	}
}

// KindWritesFiles reports whether steps of the kind named kind write
// files that Rendered shows.
func KindWritesFiles(kind string) bool {
	k, _ := stepkind.Lookup(labs.Kind(kind))
	return k.WritesFiles
}
