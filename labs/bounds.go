package labs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// Lab files come from anyone (a --lab-dir, a shared repository), so reading
// and rendering them is bounded: a hostile or broken file gets a clear
// error, never the machine's memory or minutes of CPU.
const (
	// MaxLabFileSize is the largest lab.yaml read.
	MaxLabFileSize = 1 << 20
	// MaxDocFileSize is the largest markdown doc or template file read.
	MaxDocFileSize = 4 << 20
	// MaxTemplateOutput is the most one template render may produce.
	MaxTemplateOutput = 1 << 20
	// MaxTemplateWork is the most bytes the functions of one render may
	// build in all (print, printf, join, upper, ...), counted apart from
	// the output so a loop of discarded strings is bounded too.
	MaxTemplateWork = 4 * MaxTemplateOutput
	// MaxRangeIterations is the most iterations all {{range}} loops of one
	// render may make together (nested loops multiply).
	MaxRangeIterations = 10000
)

// errOutputCap is the error a render stops with at MaxTemplateOutput.
var errOutputCap = fmt.Errorf("the template renders more than %s (the MaxTemplateOutput cap); it stopped there: does a {{range}} run too often?", sizeName(MaxTemplateOutput))

func sizeName(n int64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// readCapped reads name from fsys, refusing a file over max bytes before
// reading it: by its size when the file system knows it, and by reading at
// most max+1 bytes when it does not (or lies).
func readCapped(fsys fs.FS, name string, max int64, what string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooBig := func(n string) error {
		return fmt.Errorf("file is %s, over the %s cap for %s; a lab file that big is a mistake (or hostile)", n, sizeName(max), what)
	}
	if fi, err := f.Stat(); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory, not a file", name)
		}
		if fi.Size() > max {
			return nil, tooBig(sizeName(fi.Size()))
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, tooBig("larger")
	}
	return b, nil
}

// execEnv is one template execution: its output, its shell lexer (shell
// context) and what it has spent of its bounds.
type execEnv struct {
	shell bool
	lx    *shLexer
	out   strings.Builder
	iters int
	work  int
	// cause is the error a function failed with, for a clearer message
	// than text/template's "error calling autoquote: ...".
	cause error
}

func newExecEnv(shell bool) *execEnv {
	return &execEnv{shell: shell, lx: newShLexer()}
}

// Write takes the template's literal text (and, in shell context, the
// empty strings autoquote returns: values go through autoquote).
func (e *execEnv) Write(p []byte) (int, error) {
	if e.shell {
		e.lx.writeText(string(p))
		if e.lx.fail != nil {
			e.cause = e.lx.fail
			return 0, e.lx.fail
		}
	}
	return e.emit(p)
}

func (e *execEnv) emit(p []byte) (int, error) {
	if e.out.Len()+len(p) > MaxTemplateOutput {
		return 0, errOutputCap
	}
	return e.out.Write(p)
}

func (e *execEnv) fail(err error) error {
	if e.cause == nil {
		e.cause = err
	}
	return err
}

// charge spends n bytes of the work budget.
func (e *execEnv) charge(n int) error {
	e.work += n
	if e.work > MaxTemplateWork {
		return e.fail(fmt.Errorf("the template's functions build more than %s of text (the MaxTemplateWork cap)", sizeName(MaxTemplateWork)))
	}
	return nil
}

// str formats a value for output, within the budget: strings (the usual
// case) are charged before they are copied.
func (e *execEnv) str(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, e.charge(len(s))
	}
	s := fmt.Sprint(v)
	return s, e.charge(len(s))
}

// autoquote writes the value quoted for the shell context the text so far
// left the command in, and returns "" for text/template to print.
func (e *execEnv) autoquote(v any) (string, error) {
	s, err := e.str(v)
	if err != nil {
		return "", err
	}
	q, err := e.lx.value(s)
	if err != nil {
		return "", e.fail(err)
	}
	if _, err := e.emit([]byte(q)); err != nil {
		return "", err
	}
	return "", nil
}

// rangeLimit passes a range's value through, counting its iterations.
func (e *execEnv) rangeLimit(v any) (any, error) {
	n, err := rangeLen(reflect.ValueOf(v))
	if err != nil {
		return nil, e.fail(err)
	}
	e.iters += n
	if e.iters > MaxRangeIterations {
		return nil, e.fail(fmt.Errorf("{{range}} loops would run more than %d times in all (the MaxRangeIterations cap)", MaxRangeIterations))
	}
	return v, nil
}

func rangeLen(v reflect.Value) (int, error) {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			return 0, nil
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return 0, nil
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := v.Int(); n > 0 {
			return int(min(n, MaxRangeIterations+1)), nil
		}
		return 0, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int(min(v.Uint(), MaxRangeIterations+1)), nil
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return v.Len(), nil
	}
	return 0, fmt.Errorf("{{range}} over a %s is not supported in lab templates", v.Kind())
}

func (e *execEnv) sprint(f func(...any) string, args []any) (string, error) {
	n := 1
	for _, a := range args {
		if s, ok := a.(string); ok {
			n += len(s) + 1
		}
	}
	if err := e.charge(n); err != nil {
		return "", err
	}
	s := f(args...)
	return s, e.charge(max(0, len(s)-n))
}

// printfWidthRE finds the widths and precisions of a format's verbs.
var printfWidthRE = regexp.MustCompile(`%[-+# 0]*(\[\d+\])?(\*|\d*)(?:\.(\[\d+\])?(\*|\d*))?`)

// maxPrintfWidth bounds a printf width or precision: %0999999999d would
// allocate a gigabyte before any cap could see it.
const maxPrintfWidth = 1000

func (e *execEnv) sprintf(format string, args ...any) (string, error) {
	n := len(format)
	for _, m := range printfWidthRE.FindAllStringSubmatch(format, -1) {
		for _, w := range []string{m[2], m[4]} {
			if w == "*" {
				return "", e.fail(errors.New("printf: * widths are not supported in lab templates; write the width in the format"))
			}
			if w == "" {
				continue
			}
			if x, err := strconv.Atoi(w); err != nil || x > maxPrintfWidth {
				return "", e.fail(fmt.Errorf("printf: width %s is over %d", w, maxPrintfWidth))
			}
			n += maxPrintfWidth
		}
	}
	for _, a := range args {
		if s, ok := a.(string); ok {
			n += len(s)
		}
	}
	if err := e.charge(n); err != nil {
		return "", err
	}
	s := fmt.Sprintf(format, args...)
	return s, e.charge(max(0, len(s)-n))
}

// execLineRE finds the line of a text/template execution error.
var execLineRE = regexp.MustCompile(`^template: [^:]*:(\d+):(\d+): `)

// explain turns an execution error into one that says where and why.
func (e *execEnv) explain(err error) error {
	if errors.Is(err, errOutputCap) {
		return err
	}
	if e.cause == nil {
		return err
	}
	if m := execLineRE.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("line %s: %w", m[1], e.cause)
	}
	return e.cause
}
