// Command lethe-ferretdb runs FerretDB (MongoDB wire protocol) on top of a
// PostgreSQL database for Lethe's local development stack.
//
// It embeds the FerretDB library package instead of installing FerretDB's own
// command, whose module lacks the build metadata that command needs at start.
// It runs in the foreground, logs to stderr and exits 0 after SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("lethe-ferretdb", flag.ContinueOnError)
	listenAddr := fs.String("listen-addr", "127.0.0.1:27017", "TCP address for the MongoDB wire protocol listener")
	pgURL := fs.String("postgresql-url", "postgres://postgres@127.0.0.1:5432/ferretdb", "PostgreSQL connection URL of the database FerretDB stores its data in")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")

	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}

		return 2
	}

	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "lethe-ferretdb: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(os.Stderr, "lethe-ferretdb: invalid --log-level %q: %v\n", *logLevel, err)
		return 2
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// New binds the listener, so a busy port is reported here.
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: *listenAddr},
		Logger:        logger,
		Handler:       "postgresql",
		PostgreSQLURL: *pgURL,
	})
	if err != nil {
		logger.Error("lethe-ferretdb: cannot start", slog.String("error", err.Error()))
		return 1
	}

	logger.Info("lethe-ferretdb: serving",
		slog.String("uri", f.MongoDBURI()),
		slog.Int("pid", os.Getpid()),
	)

	done := make(chan struct{})

	go func() {
		<-ctx.Done()
		stop() // a second signal now terminates the process with the default action

		// FerretDB gives connected clients a few seconds to disconnect;
		// do not hang forever if something does not close.
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			logger.Error("lethe-ferretdb: shutdown timed out, exiting")
			os.Exit(1)
		}
	}()

	if err := f.Run(ctx); err != nil {
		close(done)
		logger.Error("lethe-ferretdb: stopped with error", slog.String("error", err.Error()))
		return 1
	}

	close(done)
	logger.Info("lethe-ferretdb: stopped")

	return 0
}
