import Foundation
import ServerTrust
import Testing

@Suite("Routing between session and task handlers")
struct ChallengeRouterTests {
    enum Handlers: String, Sendable, CaseIterable { case sessionOnly, taskOnly, both, neither }

    struct Row: Sendable, CustomTestStringConvertible {
        let method: AuthenticationMethod
        let handlers: Handlers
        var expected: ChallengeRouter.Destination {
            switch (method.isSessionWide, handlers) {
            case (true, .sessionOnly), (true, .both): .session
            case (_, .taskOnly), (false, .both): .task
            default: .defaultHandling
            }
        }
        var testDescription: String { "\(method) with \(handlers.rawValue) → \(expected.rawValue)" }
    }

    static let rows: [Row] = AuthenticationMethod.all.flatMap { method in Handlers.allCases.map { Row(method: method, handlers: $0) } }

    @Test("each method reaches the right handler", arguments: rows)
    func route(_ row: Row) async {
        let calls = Box<String>()
        // The session handler is async and the task handler completion-based, so both forms are routed.
        let session = ChallengeHandler.async { _ in calls.append("session"); return ChallengeDecision(.rejectProtectionSpace) }
        let task = ChallengeHandler.completion { _, completion in calls.append("task"); completion(.cancelAuthenticationChallenge, nil) }
        let router = ChallengeRouter(
            sessionHandler: row.handlers == .sessionOnly || row.handlers == .both ? session : nil,
            taskHandler: row.handlers == .taskOnly || row.handlers == .both ? task : nil)
        let challenge = Challenge(protectionSpace: ProtectionSpace(host: "h.example.test", port: 443, authenticationMethod: row.method))

        #expect(router.destination(for: row.method) == row.expected)
        let decision = await router.route(challenge)
        switch row.expected {
        case .session:
            #expect(calls.all == ["session"])
            #expect(decision.disposition == .rejectProtectionSpace)
        case .task:
            #expect(calls.all == ["task"])
            #expect(decision.disposition == .cancelAuthenticationChallenge)
        case .defaultHandling:
            #expect(calls.all.isEmpty)
            #expect(decision.disposition == .performDefaultHandling)
        }
    }
}

@Suite("Exactly-once completion")
struct ExactlyOnceTests {
    static let challenge = PKI.http()

    @Test("a second call is rejected, reported, and changes nothing", arguments: [false, true])
    func doubleCall(async: Bool) async {
        let misuse = Box<ServerTrustError>()
        let handler: ChallengeHandler = async
            ? .completion { _, completion in
                Task.detached {
                    completion(.useCredential, Credential(user: "u", password: "p", persistence: .none))
                    completion(.cancelAuthenticationChallenge, nil)
                }
            }
            : .completion { _, completion in
                #expect(completion(.useCredential, Credential(user: "u", password: "p", persistence: .none)))
                #expect(!completion(.cancelAuthenticationChallenge, nil))
            }
        let router = ChallengeRouter(taskHandler: handler, onMisuse: { misuse.append($0) })
        let decision = await router.route(Self.challenge)
        #expect(decision.disposition == .useCredential)
        try? await Task.sleep(for: .milliseconds(50))
        #expect(misuse.all.map(\.code) == [.completionCalledTwice])
        #expect(!misuse.all[0].description.contains("\"p\""))
    }

    @Test("a completion released uncalled cancels the challenge and says so")
    func neverCalled() async {
        let misuse = Box<ServerTrustError>()
        let router = ChallengeRouter(taskHandler: .completion { _, _ in }, onMisuse: { misuse.append($0) })
        let decision = await router.route(Self.challenge)
        #expect(decision.disposition == .cancelAuthenticationChallenge)
        #expect(decision.error?.code == .completionReleased)
        #expect(misuse.all.map(\.code) == [.completionReleased])
    }

    @Test("a completion stored and called later from another task decides")
    func calledFromAnotherTask() async {
        let stored = Stored()
        let router = ChallengeRouter(taskHandler: .completion { _, completion in stored.keep(completion) })
        async let decision = router.route(Self.challenge)
        let caller = Task.detached {
            while true {
                if let completion = stored.take() { return completion(.rejectProtectionSpace, nil) }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        #expect(await caller.value)
        #expect(await decision.disposition == .rejectProtectionSpace)
    }

    @Test("many concurrent calls: exactly one wins, the rest are reported")
    func race() async {
        let delivered = Box<Disposition>()
        let misuse = Box<ServerTrustError>()
        let completion = ChallengeCompletion(onMisuse: { misuse.append($0) }, deliver: { delivered.append($0.disposition) })
        let wins = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<64 {
                group.addTask { completion(i.isMultiple(of: 2) ? .useCredential : .cancelAuthenticationChallenge, nil) }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(wins == 1)
        #expect(delivered.all.count == 1)
        #expect(misuse.all.count == 63)
        #expect(completion.decision?.disposition == delivered.all.first)
    }
}
