package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pmkv test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeTLS: -tls-cert/-tls-key serve TLS, checked with go-redis and
// with redis-cli --tls (when Debian's redis-tools is installed).
func TestServeTLS(t *testing.T) {
	kvReady(t)
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)
	addr := startServe(t, filepath.Join(dir, "s"), "-tls-cert", cert, "-tls-key", key)
	ctx := context.Background()
	c := redis.NewClient(loadProof(&redis.Options{Addr: addr, Protocol: 2, TLSConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}))
	defer c.Close()
	require.NoError(t, c.Set(ctx, "k", "over tls", 0).Err())
	require.Equal(t, "over tls", c.Get(ctx, "k").Val())
	plain := newClient(t, addr, nil)
	require.Error(t, plain.Ping(ctx).Err(), "a plain-text client gets no answer")
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed (apt-get install redis-tools): the redis-cli --tls half is skipped")
	}
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(cli, "--tls", "--cacert", cert, "-h", host, "-p", port, "GET", "k").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "over tls", strings.TrimSpace(string(out)))
}
