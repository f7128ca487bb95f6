module github.com/gmtun/gmtun/kernels/_gen

go 1.26

require github.com/mmcloughlin/avo v0.6.0

require (
	golang.org/x/mod v0.14.0 // indirect
	golang.org/x/tools v0.16.1 // indirect
)
