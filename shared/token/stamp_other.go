//go:build !unix

package token

import "io/fs"

// inode is unknown off unix; mtime and size still catch a rotation.
func inode(fs.FileInfo) uint64 { return 0 }
