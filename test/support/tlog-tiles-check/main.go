// Command tlog-tiles-check reads Lethe's audit log as a tlog client would, through filippo.io/torchwood, an
// implementation of C2SP tlog-tiles written apart from Lethe's: it fetches the checkpoint under the log's prefix,
// opens it with the log's verifier key, then reads every entry from the tiles, each checked against the
// checkpoint's root by the client, and proves the records asked for from the hash tiles alone. It reads one JSON
// request on stdin and writes one JSON answer.
package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Base        string  `json:"base"`
	Token       string  `json:"token"`
	VerifierKey string  `json:"verifierKey"`
	Prove       []int64 `json:"prove"`
}

type answer struct {
	Size       int64    `json:"size"`
	Root       string   `json:"root"`
	Entries    []string `json:"entries"`
	EntriesErr string   `json:"entriesError"`
	Proved     int      `json:"proved"`
	ProveErr   string   `json:"proveError"`
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail("reading the request: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fetcher, err := torchwood.NewTileFetcher(req.Base,
		torchwood.WithHTTPClient(&http.Client{Transport: bearer{req.Token}}))
	if err != nil {
		fail("fetcher: %v", err)
	}
	signed, err := fetcher.ReadEndpoint(ctx, "checkpoint")
	if err != nil {
		fail("checkpoint: %v", err)
	}
	verifier, err := note.NewVerifier(req.VerifierKey)
	if err != nil {
		fail("verifier key: %v", err)
	}
	opened, err := note.Open(signed, note.VerifierList(verifier))
	if err != nil {
		fail("opening the checkpoint: %v", err)
	}
	checkpoint, err := torchwood.ParseCheckpoint(opened.Text)
	if err != nil {
		fail("parsing the checkpoint: %v", err)
	}
	out := answer{Size: checkpoint.N, Root: base64.StdEncoding.EncodeToString(checkpoint.Hash[:]), Entries: []string{}}

	client, err := torchwood.NewClient(fetcher)
	if err != nil {
		fail("client: %v", err)
	}
	entries := map[int64][]byte{}
	// The client leaves a trailing partial tile for a later call, as one following a growing log would: call again
	// from where it stopped until the checkpoint's size is read, or a call makes no progress.
	for start := int64(-1); start < int64(len(out.Entries)) && int64(len(out.Entries)) < checkpoint.N; {
		start = int64(len(out.Entries))
		for i, entry := range client.Entries(ctx, checkpoint.Tree, start) {
			entries[i] = entry
			out.Entries = append(out.Entries, hex.EncodeToString(entry))
		}
		if err := client.Err(); err != nil {
			out.EntriesErr = err.Error()
			break
		}
	}

	hashes := torchwood.TileHashReaderWithContext(ctx, checkpoint.Tree, fetcher)
	for _, index := range req.Prove {
		entry, ok := entries[index]
		if !ok {
			out.ProveErr = fmt.Sprintf("record %d: not among the entries read", index)
			break
		}
		proof, err := tlog.ProveRecord(checkpoint.N, index, hashes)
		if err == nil {
			err = tlog.CheckRecord(proof, checkpoint.N, checkpoint.Hash, index, tlog.RecordHash(entry))
		}
		if err != nil {
			out.ProveErr = fmt.Sprintf("record %d: %v", index, err)
			break
		}
		out.Proved++
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail("writing the answer: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
