package vsphere

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/dpulab/dpulab/internal/termtext"
)

// Origin says where host figures came from: which vCenter (its url, its
// product and version as it reports them) and whether that vCenter is
// govmomi's simulator, whose figures are made up. Results carry it beside
// every figure read through this package.
type Origin struct {
	// URL is vCenter's SDK url, without credentials.
	URL string `json:"url"`
	// Product is vCenter's own name for itself (AboutInfo.fullName, e.g.
	// "VMware vCenter Server 8.0.2 build-22385739"). A simulator reports
	// a real product's name: Simulated says what it is.
	Product string `json:"product,omitempty"`
	Version string `json:"version,omitempty"`
	Build   string `json:"build,omitempty"`
	// API is "VirtualCenter" for vCenter, "HostAgent" for an ESXi host's
	// own SDK.
	API string `json:"api,omitempty"`
	// Simulated is set when the server is govmomi's vCenter simulator
	// (vcsim): every figure it gives is made up.
	Simulated bool `json:"simulated,omitempty"`
}

// SimulatorProduct names govmomi's simulator in an Origin's label.
const SimulatorProduct = "govmomi vCenter simulator (vcsim)"

// Label is the origin in one line, SIMULATED first when it is the
// simulator: "SIMULATED by govmomi vCenter simulator (vcsim) at URL
// (reporting itself as …)", or "VMware vCenter Server 8.0.2 build-… at URL".
func (o Origin) Label() string {
	product := o.Product
	if product == "" {
		product = "vCenter (product not reported)"
	}
	if o.Simulated {
		return fmt.Sprintf("SIMULATED by %s at %s (it reports itself as %s): made-up figures, not a measurement", SimulatorProduct, o.URL, product)
	}
	return fmt.Sprintf("%s at %s", product, o.URL)
}

// Origin is where this session's figures come from.
func (c *Client) Origin() Origin { return c.origin }

// readOrigin reads vCenter's AboutInfo and whether it is the simulator,
// which sets the option vcsim.server.url (a name no real vCenter has).
func (c *Client) readOrigin(ctx context.Context, u *url.URL) Origin {
	clean := *u
	clean.User = nil
	a := c.vim.ServiceContent.About
	o := Origin{URL: clean.String(), Product: termtext.Line(a.FullName), Version: termtext.Line(a.Version), Build: termtext.Line(a.Build), API: termtext.Line(a.ApiType)}
	if s := c.vim.ServiceContent.Setting; s != nil {
		res, err := methods.QueryOptions(ctx, c.vim, &types.QueryOptions{This: *s, Name: "vcsim."})
		if err == nil && res != nil {
			for _, v := range res.Returnval {
				if strings.HasPrefix(v.GetOptionValue().Key, "vcsim.") {
					o.Simulated = true
				}
			}
		}
	}
	return o
}
