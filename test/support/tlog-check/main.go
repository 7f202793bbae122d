// Command tlog-check holds Lethe's audit-log Merkle tree and signed notes against golang.org/x/mod/sumdb, an
// implementation written apart from Lethe's: it rebuilds the tree from the same entries, compares every root and
// proof it is sent with its own, checks each with tlog.CheckRecord and tlog.CheckTree, opens a note Lethe signed,
// and signs one of its own for Lethe to open. It reads one JSON request on stdin and writes one JSON answer.
package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type request struct {
	Entries     int64        `json:"entries"`
	Roots       []rootClaim  `json:"roots"`
	Inclusion   []proofClaim `json:"inclusion"`
	Consistency []proofClaim `json:"consistency"`
	Note        string       `json:"note"`
	VerifierKey string       `json:"verifierKey"`
	Sign        string       `json:"sign"`
}

type rootClaim struct {
	Size int64  `json:"size"`
	Root string `json:"root"`
}

// For inclusion: A is the leaf index, B the tree size. For consistency: A is the earlier size, B the later one.
type proofClaim struct {
	A     int64    `json:"a"`
	B     int64    `json:"b"`
	Proof []string `json:"proof"`
}

type answer struct {
	Roots          int      `json:"roots"`
	RootsDiffer    []int64  `json:"rootsDiffer"`
	Inclusion      int      `json:"inclusion"`
	InclusionBad   []string `json:"inclusionBad"`
	Consistency    int      `json:"consistency"`
	ConsistencyBad []string `json:"consistencyBad"`
	NoteText       string   `json:"noteText"`
	NoteError      string   `json:"noteError"`
	SignedNote     string   `json:"signedNote"`
	SignerKey      string   `json:"signerKey"`
}

func entry(i int64) []byte { return []byte(fmt.Sprintf("entry %d", i)) }

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail("reading the request: %v", err)
	}
	var stored []tlog.Hash
	reader := tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			out[i] = stored[x]
		}
		return out, nil
	})
	for n := int64(0); n < req.Entries; n++ {
		hashes, err := tlog.StoredHashes(n, entry(n), reader)
		if err != nil {
			fail("storing entry %d: %v", n, err)
		}
		stored = append(stored, hashes...)
	}
	root := func(size int64) tlog.Hash {
		h, err := tlog.TreeHash(size, reader)
		if err != nil {
			fail("tree hash %d: %v", size, err)
		}
		return h
	}

	ans := answer{RootsDiffer: []int64{}, InclusionBad: []string{}, ConsistencyBad: []string{}}
	for _, c := range req.Roots {
		ans.Roots++
		if encode(root(c.Size)) != c.Root {
			ans.RootsDiffer = append(ans.RootsDiffer, c.Size)
		}
	}
	for _, c := range req.Inclusion {
		ans.Inclusion++
		proof := decodeAll(c.Proof)
		own, err := tlog.ProveRecord(c.B, c.A, reader)
		if err != nil {
			fail("proving %d in %d: %v", c.A, c.B, err)
		}
		if err := tlog.CheckRecord(tlog.RecordProof(proof), c.B, root(c.B), c.A, tlog.RecordHash(entry(c.A))); err != nil {
			ans.InclusionBad = append(ans.InclusionBad, fmt.Sprintf("%d in %d: rejected: %v", c.A, c.B, err))
		} else if !same(own, proof) {
			ans.InclusionBad = append(ans.InclusionBad, fmt.Sprintf("%d in %d: another proof than tlog's", c.A, c.B))
		}
	}
	for _, c := range req.Consistency {
		ans.Consistency++
		proof := decodeAll(c.Proof)
		own, err := tlog.ProveTree(c.B, c.A, reader)
		if err != nil {
			fail("proving %d → %d: %v", c.A, c.B, err)
		}
		if err := tlog.CheckTree(tlog.TreeProof(proof), c.B, root(c.B), c.A, root(c.A)); err != nil {
			ans.ConsistencyBad = append(ans.ConsistencyBad, fmt.Sprintf("%d → %d: rejected: %v", c.A, c.B, err))
		} else if !same(own, proof) {
			ans.ConsistencyBad = append(ans.ConsistencyBad, fmt.Sprintf("%d → %d: another proof than tlog's", c.A, c.B))
		}
	}
	if req.Note != "" {
		verifier, err := note.NewVerifier(req.VerifierKey)
		if err != nil {
			ans.NoteError = "verifier key: " + err.Error()
		} else if n, err := note.Open([]byte(req.Note), note.VerifierList(verifier)); err != nil {
			ans.NoteError = err.Error()
		} else {
			ans.NoteText = n.Text
		}
	}
	if req.Sign != "" {
		skey, vkey, err := note.GenerateKey(rand.Reader, "tlog-check.example")
		if err != nil {
			fail("generating a key: %v", err)
		}
		signer, err := note.NewSigner(skey)
		if err != nil {
			fail("signer: %v", err)
		}
		msg, err := note.Sign(&note.Note{Text: req.Sign}, signer)
		if err != nil {
			fail("signing: %v", err)
		}
		ans.SignedNote, ans.SignerKey = string(msg), vkey
	}
	if err := json.NewEncoder(os.Stdout).Encode(ans); err != nil {
		fail("writing the answer: %v", err)
	}
}

func encode(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

func decodeAll(encoded []string) []tlog.Hash {
	out := make([]tlog.Hash, len(encoded))
	for i, e := range encoded {
		b, err := base64.StdEncoding.DecodeString(e)
		if err != nil || len(b) != tlog.HashSize {
			fail("a proof hash is not 32 bytes of base64")
		}
		copy(out[i][:], b)
	}
	return out
}

func same(a, b []tlog.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tlog-check: "+format+"\n", args...)
	os.Exit(2)
}
