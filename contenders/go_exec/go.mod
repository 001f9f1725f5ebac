// go_exec: the contender of Go's os/exec (contenders/README.md). No dependency: built offline by
// contenders/workers.cmake with Debian's go.
module processkit/contenders/go_exec

go 1.19
