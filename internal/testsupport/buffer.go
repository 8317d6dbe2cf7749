package testsupport

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a server or command goroutine and the test can share: a log
// sink or a command's output, written on one side and read on the other. The zero value is
// ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
