package steps

// The step kinds that live in their own packages, each registered by its
// import here: adding a kind is its package and one line in this list.
import (
	_ "github.com/dpulab/dpulab/steps/kinds/cleanup"
	_ "github.com/dpulab/dpulab/steps/kinds/command"
	_ "github.com/dpulab/dpulab/steps/kinds/deploy"
	_ "github.com/dpulab/dpulab/steps/kinds/load"
	_ "github.com/dpulab/dpulab/steps/kinds/read"
	_ "github.com/dpulab/dpulab/steps/kinds/task"
	_ "github.com/dpulab/dpulab/steps/kinds/tco"
	_ "github.com/dpulab/dpulab/steps/kinds/template"
	_ "github.com/dpulab/dpulab/steps/kinds/vspherecheck"
)
