// The x509-limbo harness: being written (issue 6).
