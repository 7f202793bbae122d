// Command lethe-witness runs litewitness (filippo.io/torchwood, a C2SP tlog-witness) for the local stack.
//
// litewitness takes its Ed25519 key from an ssh-agent socket only. This launcher keeps the witness key in a file of
// the state directory (made once, on the first start), serves it to litewitness over an ssh-agent socket of its own
// (in-process, so no system ssh-agent is started or left behind), writes the witness's verifier key beside it for
// Lethe and the tests, then runs litewitness as its child and stops it with itself.
package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"filippo.io/torchwood"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:7380", "host:port litewitness serves c2sp.org/tlog-witness on")
	dir := flag.String("dir", "", "the witness's state: key, verifier key, agent socket and database")
	name := flag.String("name", "lethe.local/stack-witness", "the witness's name, in its cosignature lines")
	flag.Parse()
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		log.Fatal(err)
	}
	key, err := loadOrCreateKey(filepath.Join(*dir, "witness-key.pem"))
	if err != nil {
		log.Fatal(err)
	}
	cosigner, err := torchwood.NewCosignatureSigner(*name, key)
	if err != nil {
		log.Fatal(err)
	}
	vkey := cosigner.Verifier().String()
	if err := writeAtomically(filepath.Join(*dir, "witness.vkey"), []byte(vkey+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	socket := filepath.Join(*dir, "agent.sock")
	fingerprint, err := serveAgent(socket, key)
	if err != nil {
		log.Fatal(err)
	}

	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	child := exec.Command(filepath.Join(filepath.Dir(self), "litewitness"),
		"-name", *name,
		"-db", filepath.Join(*dir, "litewitness.db"),
		"-ssh-agent", socket,
		"-key", fingerprint,
		"-listen", *listen)
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	// litewitness dies with this process, whatever ends it.
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		log.Fatal(err)
	}
	log.Printf("lethe-witness: litewitness pid %d on %s, verifier key %s", child.Process.Pid, *listen, vkey)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		// litewitness shuts down cleanly on an interrupt.
		_ = child.Process.Signal(os.Interrupt)
	}()
	err = child.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		log.Fatal(err)
	}
}

// loadOrCreateKey reads the witness's Ed25519 key (PKCS #8 PEM), generating it the first time.
func loadOrCreateKey(file string) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		_, key, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, err
		}
		// O_EXCL: two launchers starting at once never overwrite each other's key.
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return loadOrCreateKey(file)
		}
		defer f.Close()
		if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
			return nil, err
		}
		return key, f.Sync()
	}
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New(file + ": not a PEM file")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	key, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New(file + ": not an Ed25519 key")
	}
	return key, nil
}

// serveAgent serves the key over the ssh-agent protocol on a Unix socket only this user may open; returns the
// key's SSH fingerprint, which litewitness is told to pick.
func serveAgent(socket string, key ed25519.PrivateKey) (string, error) {
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: key, Comment: "lethe stack witness"}); err != nil {
		return "", err
	}
	_ = os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(socket, 0o600); err != nil {
		return "", err
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				log.Fatal(err)
			}
			go func() {
				defer conn.Close()
				_ = agent.ServeAgent(keyring, conn)
			}()
		}
	}()
	public, err := ssh.NewPublicKey(key.Public())
	if err != nil {
		return "", err
	}
	return ssh.FingerprintSHA256(public), nil
}

func writeAtomically(file string, data []byte, mode os.FileMode) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
