package rest

import (
	"context"
	"encoding/json"
	"net/http"
)

// The pipeline has already encoded a capability's output once (pipeline.Result.JSON). Decoding
// it into ogen's response type only for ogen to encode it again cost REST a large share of a
// 69 KB read. So the runner hands the encoded output to the request's rawAnswer and returns
// nothing; the generated adapter then lets ogen "encode" an empty value, which rawWriter drops
// in favour of the pipeline's bytes. Status and headers are still ogen's, and error answers
// (no raw output) pass through untouched. The output's conformance to the OpenAPI schema is
// the pipeline's, proven by the output-schema tests.
type rawAnswer struct{ body json.RawMessage }

type rawKey struct{}

func withRawAnswer(ctx context.Context, a *rawAnswer) context.Context {
	return context.WithValue(ctx, rawKey{}, a)
}

func rawAnswerFrom(ctx context.Context) (*rawAnswer, bool) {
	a, ok := ctx.Value(rawKey{}).(*rawAnswer)
	return a, ok
}

// rawWriter writes the raw answer, once, instead of whatever body follows it.
type rawWriter struct {
	http.ResponseWriter
	answer *rawAnswer
	sent   bool
}

func (w *rawWriter) Write(b []byte) (int, error) {
	if w.answer.body == nil {
		return w.ResponseWriter.Write(b)
	}
	if !w.sent {
		w.sent = true
		if _, err := w.ResponseWriter.Write(w.answer.body); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *rawWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
