// The Go half of scripts/link-beside.sh: a program importing cuzk's Go package
// (linked through pkg-config) beside another Rust staticlib. Built in a
// workspace with ../../../go-bindings that the script writes under target/.
module linkbeside

go 1.23.0
