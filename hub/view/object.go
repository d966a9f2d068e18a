package view

// Object is one stored key as the view holds it: decoded once, shared by
// every reader, never changed after the view publishes it. A reader that
// needs to change what Value points to copies it first.
type Object struct {
	// Key is the store key.
	Key string
	// Revision is the etcd revision of the key's last change, and
	// CreateRevision the revision at which the key was created.
	Revision, CreateRevision int64
	// Size is the length of the stored bytes: what a reader that writes
	// the key back spaces its writes by, without keeping them.
	Size int
	// Value is what the prefix's Decoder made of the stored bytes. When the
	// last stored bytes did not decode it is the last value that did (nil
	// after a list: there was none), and Err says why.
	Value any
	// Err is the decode error of the last stored bytes; nil when Value is
	// what is stored.
	Err error
}

// Change is one key of a Batch: its object now, or nil when it was
// deleted.
type Change struct {
	Key    string
	Object *Object
}
