// An HTTP/3 server that volley did not write: quic-go's http3, for the interop tests
// (tests/http3.rs). Built by .ci/run (`go build -o target/peers/quicgo-h3 ./tests/peers/quicgo`).
//
// Usage: quicgo-h3 CA_PEM_OUT
//
// Makes a self-signed certificate for 127.0.0.1 (written to CA_PEM_OUT for volley's --cacert),
// listens on 127.0.0.1 at a UDP port the kernel picks, prints the port alone, and serves
// `GET /delay?ms=N` (200 `ok` after N ms), `/status/CODE`, `POST /echo` (the body back) and
// anything else with 200 `ok`, each with `server: quic-go`. Stops on SIGTERM.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quic-go/quic-go/http3"
)

func certificate(caOut string) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(err)
	template := x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "quic-go peer"},
		NotBefore:             time.Now().Add(-5 * time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, &template, &key.PublicKey, key)
	check(err)
	check(os.WriteFile(caOut, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func handle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("server", "quic-go")
	switch {
	case r.URL.Path == "/delay":
		ms, _ := strconv.ParseFloat(r.URL.Query().Get("ms"), 64)
		time.Sleep(time.Duration(ms * float64(time.Millisecond)))
	case strings.HasPrefix(r.URL.Path, "/status/"):
		code, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		if err != nil {
			code = 400
		}
		w.WriteHeader(code)
		return
	case r.URL.Path == "/echo":
		body, _ := io.ReadAll(r.Body)
		w.Write(body)
		return
	}
	w.Write([]byte("ok"))
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: quicgo-h3 CA_PEM_OUT")
		os.Exit(2)
	}
	cert := certificate(os.Args[1])
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.0.0.1"), Port: 0})
	check(err)
	server := http3.Server{
		Handler:   http.HandlerFunc(handle),
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}),
	}
	fmt.Println(conn.LocalAddr().(*net.UDPAddr).Port)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; server.Close(); os.Exit(0) }()
	check(server.Serve(conn))
}
