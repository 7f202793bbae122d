// Command lethe-kms serves local-kms (an emulator of the AWS KMS API) on one address only: local-kms's own main
// listens on every interface, and the local stack binds 127.0.0.1.
package main

import (
	"flag"
	"log"
	"net"
	"net/http"
	"path/filepath"

	lkms "github.com/nsmithuk/local-kms/src"
	"github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:4599", "host:port to serve the KMS API on")
	dataDir := flag.String("data-dir", "", "where the key material is kept (LevelDB)")
	region := flag.String("region", "eu-west-1", "the region in key ARNs")
	account := flag.String("account-id", "111122223333", "the account id in key ARNs")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("--data-dir is required")
	}
	abs, err := filepath.Abs(*dataDir)
	if err != nil {
		log.Fatal(err)
	}
	config.AWSRegion = *region
	config.AWSAccountId = *account
	config.DatabasePath = abs

	database := data.NewDatabase(abs)
	defer database.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("lethe-kms serving the KMS API on %s, keys in %s", ln.Addr(), abs)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { lkms.HandleRequest(w, r, database) })
	log.Fatal(http.Serve(ln, handler))
}
