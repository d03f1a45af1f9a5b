module github.com/cuzk/cuzk/go-bindings

go 1.19
