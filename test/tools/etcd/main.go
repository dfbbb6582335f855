// Command etcd is etcd's own entry point, rebuilt from go.etcd.io/etcd/server/v3
// so the test harness needs nothing but the Go module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
