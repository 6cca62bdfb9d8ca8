/// What every road checks before it evaluates, in one place: a certificate was served, and the
/// host, when one is to be checked, is a DNS name or an IP address (``HostName`` decides which, and
/// refuses control characters, empty labels and malformed literals).
enum EvaluationEntry {
    /// The served chain is not empty.
    /// - Throws: ``PincheckError`` (`chain.empty`) when nothing was served.
    static func requireServed(_ chain: some Collection) throws(PincheckError) {
        guard !chain.isEmpty else { throw PincheckError(.emptyChain, "no certificate was served") }
    }

    /// The peer to check the chain against: nil when no host is given.
    /// - Throws: ``PincheckError`` for an empty chain or a host that is neither a name nor an address.
    static func peer(of servedChain: [Certificate], host: String?) throws(PincheckError) -> PeerName? {
        try requireServed(servedChain)
        guard let host else { return nil }
        return try HostName.peerName(for: host)
    }

    /// The peer for a road that always checks a host.
    static func peer(of servedChain: [Certificate], host: String) throws(PincheckError) -> PeerName {
        try requireServed(servedChain)
        return try HostName.peerName(for: host)
    }
}
