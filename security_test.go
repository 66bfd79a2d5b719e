package kafkabpl

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/value"
	"github.com/twmb/franz-go/pkg/kfake"
)

// roundTrip sends one message through a fresh producer and consumer made
// from cfg and checks it arrives.
func roundTrip(t *testing.T, lib *Library, cfg map[string]any) {
	t.Helper()
	ccfg := map[string]any{"auto-offset-reset": "earliest", "topics": "secure"}
	for k, v := range cfg {
		ccfg[k] = v
	}
	ctx := testCtx(t)
	c := must[string](t)(lib.Create(ctx, Consumer, ccfg))
	p := must[string](t)(lib.Create(ctx, Producer, cfg))
	send(t, lib, p, []string{"secure"}, unkeyed("classified")...)
	if got := value.Format(pollUntil(t, lib, c, nil, 1)["secure"]); got != `("classified")` {
		t.Errorf("got %s", got)
	}
	must[bool](t)(lib.Destroy(ctx, p))
	must[bool](t)(lib.Destroy(ctx, c))
}

func TestSASL(t *testing.T) {
	t.Parallel()
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			servers := newCluster(t, embedded.Topics("secure"), embedded.KfakeOptions(kfake.EnableSASL(), kfake.Superuser(mech, "iot", "s3cret-pass"))).Servers()
			lib := newLib(t)
			roundTrip(t, lib, map[string]any{"servers": servers, "sasl": map[string]any{"mechanism": mech, "username": "iot", "password": "s3cret-pass"}})

			bad := map[string]any{"servers": servers, "send-timeout": 3000, "sasl": map[string]any{"mechanism": mech, "username": "iot", "password": "wrong-pass"}}
			p := must[string](t)(lib.Create(testCtx(t), Producer, bad))
			_, err := lib.Send(testCtx(t), p, []string{"secure"}, unkeyed("x"))
			if err == nil || strings.Contains(err.Error(), "wrong-pass") {
				t.Fatalf("send with a wrong password: %v", err)
			}
			// kfake closes the connection on a failed authentication (a
			// real broker answers SASL_AUTHENTICATION_FAILED first), so
			// all the client can say is that no broker would talk to it.
			if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), servers) {
				t.Errorf("wrong password: %v, want a Timeout naming the servers", err)
			}
		})
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, caKey := newCert(t, nil, nil, "test CA")
	serverCert, serverKey := newCert(t, ca, caKey, "kafka")
	clientCert, clientKey := newCert(t, ca, caKey, "client")
	caFile := writePEM(t, dir, "ca.pem", "CERTIFICATE", ca.Raw)
	certFile := writePEM(t, dir, "client.pem", "CERTIFICATE", clientCert.Raw)
	keyDER, err := x509.MarshalECPrivateKey(clientKey)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := writePEM(t, dir, "client-key.pem", "EC PRIVATE KEY", keyDER)

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	serverTLS := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{serverCert.Raw}, PrivateKey: serverKey}},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}
	servers := newCluster(t, embedded.Topics("secure"), embedded.KfakeOptions(kfake.TLS(serverTLS))).Servers()
	lib := newLib(t)
	roundTrip(t, lib, map[string]any{"servers": servers, "tls": map[string]any{"ca-file": caFile, "cert-file": certFile, "key-file": keyFile}})

	// Without the CA the server is not trusted: the send fails, in time,
	// naming the certificate. The timeout leaves a loaded machine room
	// for a first dial whose error that is (at 2 s it once had none).
	p := must[string](t)(lib.Create(testCtx(t), Producer, map[string]any{"servers": servers, "send-timeout": 10000, "tls": map[string]any{"cert-file": certFile, "key-file": keyFile}}))
	if _, err := lib.Send(testCtx(t), p, []string{"secure"}, unkeyed("x")); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("send to an untrusted server: %v", err)
	}
}

// newCert makes an ECDSA certificate for 127.0.0.1, signed by parent (self
// signed, as a CA, when parent is nil).
func newCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	} else {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writePEM(t *testing.T, dir, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
