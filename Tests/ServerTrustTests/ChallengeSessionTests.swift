import Foundation
import ServerTrust
import Testing

@Suite("Session lifecycle")
struct ChallengeSessionTests {
    /// A session whose task handler stores every completion to call later.
    static func makeSession(_ stored: Stored, misuse: Box<ServerTrustError>) -> ChallengeSession {
        ChallengeSession(router: ChallengeRouter(taskHandler: .completion { _, completion in stored.keep(completion) },
                                                 onMisuse: { misuse.append($0) }))
    }

    @Test("finishTasksAndInvalidate lets a stored completion finish, then fires once with no error")
    func finish() async throws {
        let stored = Stored(), misuse = Box<ServerTrustError>(), fired = Box<String>(), delivered = Box<ChallengeDecision>()
        let session = Self.makeSession(stored, misuse: misuse)
        session.onInvalidation { fired.append($0 == nil ? "nil" : "error") }
        try session.handle(PKI.http()) { delivered.append($0) }
        #expect(session.challengesInFlight == 1)

        session.finishTasksAndInvalidate()
        #expect(fired.all.isEmpty, "a challenge is still in flight")
        #expect(throws: ServerTrustError.self) { try session.handle(PKI.http()) { _ in } }
        do { _ = try await session.handle(PKI.http()); Issue.record("accepted after invalidation") } catch { #expect(error.code == .sessionInvalidated) }

        #expect(stored.take()?(.useCredential, Credential(user: "u", password: "p", persistence: .none)) == true)
        #expect(delivered.all.map(\.disposition) == [.useCredential])
        #expect(fired.all == ["nil"])
        session.finishTasksAndInvalidate()
        session.invalidateAndCancel()
        #expect(fired.all == ["nil"], "fires once")
        #expect(misuse.all.isEmpty)
    }

    @Test("invalidateAndCancel cancels a stored completion at once, then fires; the late call is rejected")
    func cancel() throws {
        let stored = Stored(), misuse = Box<ServerTrustError>(), fired = Box<String>(), delivered = Box<ChallengeDecision>()
        let session = Self.makeSession(stored, misuse: misuse)
        session.onInvalidation { fired.append($0 == nil ? "nil" : "error") }
        try session.handle(PKI.http()) { delivered.append($0) }
        let pending = try #require(stored.take())

        session.invalidateAndCancel()
        #expect(delivered.all.map(\.disposition) == [.cancelAuthenticationChallenge])
        #expect(delivered.all.first?.error?.code == .cancelledByInvalidation)
        #expect(fired.all == ["nil"])
        #expect(session.challengesInFlight == 0)

        #expect(pending(.useCredential, nil) == false, "the handler's late answer changes nothing")
        #expect(delivered.all.count == 1)
        #expect(misuse.all.map(\.code) == [.completionCalledTwice])
        #expect(throws: ServerTrustError.self) { try session.handle(PKI.serverTrust()) { _ in } }

        let late = Box<String>()
        session.onInvalidation { _ in late.append("late") }
        #expect(late.all == ["late"], "a late observer hears at once")
    }

    @Test("finishTasksAndInvalidate with nothing in flight fires at once")
    func finishIdle() {
        let fired = Box<Bool>()
        let session = ChallengeSession(router: ChallengeRouter())
        session.onInvalidation { fired.append($0 == nil) }
        session.finishTasksAndInvalidate()
        #expect(fired.all == [true])
    }
}

@Suite("Session lifecycle under concurrency")
struct ChallengeSessionRaceTests {
    @Test("challenges racing invalidateAndCancel are each either refused or answered exactly once")
    func race() async {
        let stored = Box<ChallengeCompletion>()
        let session = ChallengeSession(router: ChallengeRouter(taskHandler: .completion { _, completion in stored.append(completion) }))
        let outcomes = Box<String>()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    if i == 100 { session.invalidateAndCancel() }
                    do {
                        try session.handle(PKI.http()) { outcomes.append("\($0.disposition)") }
                    } catch {
                        outcomes.append("refused")
                    }
                }
            }
        }
        for completion in stored.all { completion(.useCredential, nil) }   // late answers: rejected or first
        let all = outcomes.all
        #expect(all.count == 200, "one outcome per challenge, never two")
        #expect(all.contains("cancelAuthenticationChallenge") || all.contains("refused"))
        #expect(session.challengesInFlight == 0)
    }
}
