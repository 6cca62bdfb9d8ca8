import Foundation
import Testing
@testable import PincheckCLI

/// `pincheck pins HOST[:PORT]`.
@Suite("pincheck pins HOST", .serialized)
struct CheckPinsHostTests {
    typealias F = CLIFixtures

    @Test("lists the served chain and the verified path's pins, leaf first")
    func host() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf", chain: ["rsa-intermediate"])
        defer { server.stop() }
        let pins = try PinsCommandTests.referencePins()
        let result = F.run(["pins", server.target, "--ca-file", F.path("rsa-root.pem"), "--at", "2030-06-01"])
        #expect(result.status == 0)
        #expect(result.output.contains("Served by \(server.target) (2 certificates, as sent):"))
        let pathLines = result.output.split(separator: "\n").drop { !$0.hasPrefix("Verified path") }.dropFirst()
        let printed = pathLines.map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(printed == ["rsa-leaf", "rsa-intermediate", "rsa-root"].map { pins[$0]! })
    }

    @Test("JSON has served and verifiedPath; an unreachable host exits 3")
    func jsonAndFailure() throws {
        let server = try CheckTLSServer(certificate: "rsa-leaf")
        defer { server.stop() }
        let result = F.run(["pins", server.target, "--json", "--ca-file", F.path("rsa-root.pem")])
        #expect(result.status == 0)
        let json = try F.json(result.output)
        #expect((json["served"] as? [Any])?.count == 1)
        #expect((json["verifiedPath"] as? [Any])?.count == 0)
        #expect(json["verifiedPathError"] as? String == "chain.unknown-issuer")
        let refused = try CheckRawServer(.refuse)
        defer { refused.stop() }
        #expect(F.run(["pins", refused.target, "--timeout", "1"]).status == 3)
        #expect(F.run(["pins", "no/such/file.pem"]).status == 2)
    }
}
