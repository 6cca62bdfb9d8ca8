import FoundationEssentials
import TrustEvaluatorCore

/// A host's pins: `mode` with `pins` / `pinnedCertificates`, Apple's positional `leafPins` and
/// `caPins`, and `enforce` / `expires`, which apply to every set the entry makes.
extension ConfigurationBuilder {
    func pinSets(_ host: RawHost, at path: String) throws(PincheckError) -> (sets: [PinSet], enforce: Bool, expires: Date?) {
        let positional = try positionalPins(host, at: path)
        let pinning = try pinning(host, hasPositionalPins: !positional.isEmpty, at: path)
        var expires: Date? = nil
        if let text = host.expires {
            guard let date = PinSet.expiryDate(text) else { throw fail("\(path).expires", "\"\(text)\" is not a yyyy-MM-dd date") }
            expires = date
        }
        let enforce = host.enforce ?? true
        let enforcement: PinSet.Enforcement = enforce ? .enforce : .reportOnly
        var sets: [PinSet] = []
        if let pins = PinSet.Pins(pinning) {
            sets.append(PinSet(pins, enforcement: enforcement, expires: expires))
        }
        for scoped in positional {
            sets.append(PinSet(.publicKeys(scoped), enforcement: enforcement, expires: expires))
        }
        // The engine's backup-pin rule, on what each set shows before any server is seen.
        for (index, set) in sets.enumerated() where backupPinsRequired {
            if let finding = set.backupPinFinding(onChain: nil) {
                throw fail(
                    "\(path).pins",
                    "an enforced pin set needs a backup pin (at least two pins, one not in the current chain; RFC 7469 §2.5): "
                        + finding.message(naming: "the pin set" + BackupPinFinding.setNumber(index, of: sets.count)))
            }
        }
        return (sets, enforce, expires)
    }

    /// `mode` with `pins` and `pinnedCertificates`: AFNetworking's three modes.
    private func pinning(_ host: RawHost, hasPositionalPins: Bool, at path: String) throws(PincheckError) -> TrustPolicy.Pinning {
        switch host.mode ?? "public-key" {
        case "public-key" where hasPositionalPins && host.pins == nil:
            return .none
        case "none":
            guard host.pins == nil, host.pinnedCertificates == nil else {
                throw fail("\(path).mode", "mode \"none\" takes no pins or pinnedCertificates")
            }
            return .none
        case "certificate":
            guard host.pins == nil else { throw fail("\(path).pins", "certificate mode pins whole certificates: use pinnedCertificates") }
            let certificates = try certificates(host.pinnedCertificates ?? [], at: "\(path).pinnedCertificates")
            do { return .certificates(try PinnedCertificates(certificates)) } catch {
                throw fail("\(path).pinnedCertificates", "certificate mode needs at least one pinned certificate (an empty pin list fails closed)")
            }
        case "public-key":
            let pins = try publicKeyPins(host.pins ?? [], at: "\(path).pins")
            let certificates = try certificates(host.pinnedCertificates ?? [], at: "\(path).pinnedCertificates")
            do { return .publicKeys(try PinnedPublicKeys(pins: pins, certificates: certificates)) } catch {
                throw fail("\(path).pins", "public-key mode needs at least one pin (an empty pin list fails closed)")
            }
        case let other:
            // The pins are read first, so a malformed pin is named even beside an unknown mode.
            _ = try publicKeyPins(host.pins ?? [], at: "\(path).pins")
            throw fail("\(path).mode", "\"\(other)\" is not none, certificate or public-key")
        }
    }

    /// Positional pins (Apple's NSPinnedDomains): one enforced set per list, all of which must
    /// match; an empty list is a set no chain matches, which blocks the host.
    private func positionalPins(_ host: RawHost, at path: String) throws(PincheckError) -> [PinnedPublicKeys] {
        var positional: [PinnedPublicKeys] = []
        for (list, scope, key) in [(host.leafPins, PinnedPublicKeys.Scope.leaf, "leafPins"), (host.caPins, .certificateAuthorities, "caPins")] {
            guard let list else { continue }
            guard host.mode == nil || host.mode == "public-key", host.pinnedCertificates == nil else {
                throw fail("\(path).\(key)", "leafPins and caPins are public-key pins: not with mode \"\(host.mode ?? "")\" or pinnedCertificates")
            }
            let scoped = try publicKeyPins(list, at: "\(path).\(key)")
            do {
                positional.append(scoped.isEmpty ? PinnedPublicKeys(blockingEverythingIn: scope) : try PinnedPublicKeys(pins: scoped, scope: scope))
            } catch { throw fail("\(path).\(key)", error.message) }
        }
        return positional
    }

    private func publicKeyPins(_ texts: [String], at path: String) throws(PincheckError) -> [PublicKeyPin] {
        var pins: [PublicKeyPin] = []
        pins.reserveCapacity(texts.count)
        for (index, text) in texts.enumerated() {
            do { pins.append(try PublicKeyPin(text)) } catch { throw fail("\(path)[\(index)]", error.message) }
        }
        return pins
    }
}
