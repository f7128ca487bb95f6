module github.com/gmtun/gmtun/kernels/_gen

go 1.26.0

require (
	github.com/gmtun/gmtun v0.0.0
	github.com/mmcloughlin/avo v0.6.0
)

require (
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
)

// The generators read the standards' tables from internal/reftables of the
// module they generate for (Go's internal rule allows it: this module's
// path is below github.com/gmtun/gmtun).
replace github.com/gmtun/gmtun => ../..
