/// RFC 7469 §2.5's backup-pin rule, the one every part of Pincheck applies: an enforced pin set
/// needs at least two pins, and at least one of them must be on no certificate of the current
/// chain, so that a key rotation (or a compromise) does not lock clients out.
///
/// The engine judges it on the path a set matched (``BackupPinCheck``); `lint` and the
/// configuration loader, which have no chain, judge the part a set shows by itself.
package enum BackupPinFinding: Sendable, Hashable {
    /// The set has fewer than two pins (one, or none: a set that blocks everything).
    case tooFewPins(Int)
    /// Every pin of the set is on the current chain.
    case everyPinOnChain

    /// Why the set has no backup pin, after "has no backup pin: ".
    package var detail: String {
        switch self {
        case .tooFewPins(let count): count == 1 ? "only one pin" : "no pins"
        case .everyPinOnChain: "every pin matches the current chain"
        }
    }

    /// " (set 2 of 3)" when a host has several pin sets; nothing for one.
    package static func setNumber(_ index: Int, of count: Int) -> String {
        count > 1 ? " (set \(index + 1) of \(count))" : ""
    }

    /// The sentence a warning or a lint finding says, naming the set.
    package func message(naming set: String) -> String {
        "\(set) has no backup pin: \(detail); a key rotation would lock clients out (RFC 7469 §2.5)"
    }
}

extension PinSet {
    /// The backup-pin finding of this set, if it has one: nil for a report-only set, which never
    /// locks anyone out.
    /// - Parameter chain: The path the set matched; nil when there is none to judge (a
    ///   configuration read without a server): only the set's own pin count is then judged.
    package func backupPinFinding(onChain chain: [Certificate]?) -> BackupPinFinding? {
        guard enforcement == .enforce else { return nil }
        if pinCount < 2 { return .tooFewPins(pinCount) }
        if let chain, matchesAll(of: chain) { return .everyPinOnChain }
        return nil
    }
}
