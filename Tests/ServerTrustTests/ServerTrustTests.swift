// ServerTrust tests: being written (issue 4).
