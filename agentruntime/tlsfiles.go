package agentruntime

import "crypto/tls"

// LoadTLS is the Options.TLS of a runtime serving HTTPS (HTTP/1.1 and h2) with the PEM
// certificate (chain) in certFile and its private key in keyFile, TLS 1.2 or later.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
