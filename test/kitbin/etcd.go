package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

// etcdMain is go.etcd.io/etcd/server/v3's main.
func etcdMain() { etcdmain.Main(os.Args) }
