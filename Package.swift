// swift-tools-version:6.1
import PackageDescription

/// SwiftNIO with TLS: what every NIO-based target here needs.
let nio: [Target.Dependency] = [
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
    .product(name: "NIOPosix", package: "swift-nio"),
    .product(name: "NIOTLS", package: "swift-nio"),
    .product(name: "NIOSSL", package: "swift-nio-ssl"),
]
/// gRPC Swift 2 over NIO's HTTP/2 transport.
let grpc: [Target.Dependency] = [
    .product(name: "GRPCCore", package: "grpc-swift-2"),
    .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
]

let package = Package(
    name: "Pincheck",
    products: [
        // The engine and its file formats, as imported since 0.1 (re-exports the two below).
        .library(name: "TrustEvaluator", targets: ["TrustEvaluator"]),
        // Evaluation alone: policies, the one road, verdicts, per-host TrustManager, revocation.
        .library(name: "TrustEvaluatorCore", targets: ["TrustEvaluatorCore"]),
        .library(name: "ServerTrust", targets: ["ServerTrust"]),
        .library(name: "ServerTrustFoundation", targets: ["ServerTrustFoundation"]),
        .library(name: "TrustEvaluatorNIO", targets: ["TrustEvaluatorNIO"]),
        .library(name: "TrustEvaluatorGRPC", targets: ["TrustEvaluatorGRPC"]),
        .library(name: "PincheckAsyncHTTPClient", targets: ["PincheckAsyncHTTPClient"]),
        .library(name: "PincheckVapor", targets: ["PincheckVapor"]),
        .library(name: "PincheckHummingbird", targets: ["PincheckHummingbird"]),
        .executable(name: "pincheck", targets: ["pincheck"]),
        .executable(name: "pincheck-watch", targets: ["pincheck-watch"]),
    ],
    // Integrations with stacks the engine does not need are traits, off by default, so a package that
    // only pins with the engine never fetches them: `.package(url: …, from: …, traits: ["AsyncHTTPClient"])`.
    // This repository's scripts build with --enable-all-traits.
    traits: [
        .trait(
            name: "AsyncHTTPClient",
            description: "The PincheckAsyncHTTPClient product: AsyncHTTPClient (and what is built on it) pinned by Pincheck."),
        .trait(
            name: "Vapor",
            description: "The PincheckVapor product: client certificates on a Vapor server judged by Pincheck (mTLS), and Vapor's client pinned.",
            enabledTraits: ["AsyncHTTPClient"]),
        .trait(
            name: "Hummingbird",
            description: "The PincheckHummingbird product: client certificates on a Hummingbird server judged by Pincheck (mTLS)."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        // PincheckAsyncHTTPClient (the AsyncHTTPClient trait), and its examples.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // PincheckVapor (the Vapor trait).
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.0"),
        // PincheckHummingbird (the Hummingbird trait).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        // Vapor's Request.peerCertificateChain is swift-certificates' type (PincheckVapor reads its leaf).
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.14.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.0.0"),
        // Only for the OpenAPI client example (its generated code is committed: no generator plugin).
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        // Only for building the DocC catalogues (scripts/docs.sh): a plugin no product uses, so consumers never fetch it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
        // Only for the tests' HTTP/2 server (AsyncHTTPClient and gRPC already depend on it).
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    ],
    targets: [
        // The system OpenSSL (3.0 or newer). Only PincheckOpenSSL imports it (scripts/test.sh checks).
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        // Every call into OpenSSL: X509, stores and verification, OCSP, CRLs, PKCS #7, keys, libssl.
        // Its API is `package` and speaks its own value types; no OpenSSL pointer leaves it.
        .target(name: "PincheckOpenSSL", dependencies: ["COpenSSL"]),
        // The engine: evaluation alone (no file format but PEM and DER).
        .target(name: "TrustEvaluatorCore", dependencies: ["PincheckOpenSSL"]),
        // Pincheck's JSON configuration, other tools' pinning files (TrustKit, Android, OkHttp,
        // ATS), lint, and signed pin-set updates (UpdatableTrustManager), over the engine.
        .target(name: "TrustEvaluatorFormats", dependencies: ["TrustEvaluatorCore", "PincheckOpenSSL"]),
        // Re-exports both, so `import TrustEvaluator` means what it always did.
        .target(name: "TrustEvaluator", dependencies: ["TrustEvaluatorCore", "TrustEvaluatorFormats"]),
        // A libssl client that hands over the served chain (pincheck check, scan, pins HOST) and a
        // local TLS server (the demo): not part of the engine's API.
        .target(name: "PincheckTLS", dependencies: ["TrustEvaluator", "PincheckOpenSSL"]),
        // glibc's mallopt (malloc.h), which the Glibc module does not import: scan bounds its arenas.
        .systemLibrary(name: "CGlibcMalloc"),
        .target(
            name: "PincheckCLI",
            dependencies: [
                "TrustEvaluator",
                "ServerTrust",
                "PincheckTLS",
                "PincheckOpenSSL",
                "CGlibcMalloc",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The challenge layer, FoundationEssentials only (the command links it statically).
        .target(name: "ServerTrust", dependencies: ["TrustEvaluator", .product(name: "Logging", package: "swift-log")]),
        // URLSession's types and an HTTPS reporter over it: Foundation and FoundationNetworking (libcurl).
        .target(name: "ServerTrustFoundation", dependencies: ["ServerTrust", "TrustEvaluator"]),
        // NIOSSL custom verification callback that evaluates peer chains with Pincheck (issue 4).
        .target(
            name: "TrustEvaluatorNIO",
            dependencies: [
                "TrustEvaluator",
                "ServerTrust",
                // libssl, for the second connection that asks for the stapled OCSP response.
                "PincheckTLS",
                .product(name: "Logging", package: "swift-log"),
            ] + nio
        ),
        // gRPC Swift 2 clients pinned by Pincheck (HTTP2ClientTransport.Posix, .customSecure).
        .target(
            name: "TrustEvaluatorGRPC",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO",
                // The client certificate gRPC's server context carries (already part of gRPC's transport).
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ] + grpc + nio
        ),
        // AsyncHTTPClient pinned by Pincheck: trust roots and a leaf check in its connection initializers.
        .target(
            name: "PincheckAsyncHTTPClient",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
            ] + nio
        ),
        // Vapor with Pincheck: client certificates judged on the server, the client pinned.
        .target(
            name: "PincheckVapor",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO", "PincheckAsyncHTTPClient",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "X509", package: "swift-certificates", condition: .when(traits: ["Vapor"])),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: .when(traits: ["Vapor"])),
            ] + nio
        ),
        // Hummingbird with Pincheck: client certificates judged on the server.
        .target(
            name: "PincheckHummingbird",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Logging", package: "swift-log"),
            ] + nio
        ),
        .executableTarget(name: "pincheck", dependencies: ["PincheckCLI"]),
        // `pincheck watch` is this second program (pincheck execs it), so that `pincheck` does not
        // link an HTTP server, a metrics registry and a service group it needs only for watching.
        .executableTarget(
            name: "pincheck-watch",
            dependencies: [
                "PincheckCLI",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Examples, compiled with everything else so they cannot drift.
        .executableTarget(
            name: "nio-pinned-client",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO",
            ] + nio,
            path: "Examples/NIOPinnedClient"),
        .executableTarget(
            name: "grpc-pinned-client",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO", "TrustEvaluatorGRPC",
            ] + grpc,
            path: "Examples/GRPCPinnedClient"),
        .executableTarget(name: "urlsession-router", dependencies: ["TrustEvaluator", "ServerTrust", "ServerTrustFoundation"], path: "Examples/URLSessionRouter"),
        .executableTarget(name: "evaluate-chain", dependencies: ["TrustEvaluator"], path: "Examples/EvaluateChain"),
        .executableTarget(name: "afnetworking-port", dependencies: ["TrustEvaluator"], path: "Examples/AFNetworkingPort"),
        .executableTarget(
            name: "trust-manager-client",
            dependencies: ["TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO"] + nio,
            path: "Examples/TrustManagerClient"),
        .executableTarget(
            name: "ahc-pinned-client",
            dependencies: [
                "TrustEvaluator", "TrustEvaluatorNIO", "PincheckAsyncHTTPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
            ],
            path: "Examples/AsyncHTTPClientPinned"),
        .executableTarget(
            name: "vapor-mtls-server",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO", "PincheckVapor",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Examples/VaporMTLSServer"),
        .executableTarget(
            name: "vapor-pinned-client",
            dependencies: [
                "TrustEvaluator", "TrustEvaluatorNIO", "PincheckVapor",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
            ],
            path: "Examples/VaporPinnedClient"),
        .executableTarget(
            name: "hummingbird-mtls-server",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO", "PincheckHummingbird",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Examples/HummingbirdMTLSServer"),
        .executableTarget(
            name: "openapi-pinned-client",
            dependencies: [
                "TrustEvaluator", "TrustEvaluatorNIO", "PincheckAsyncHTTPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Examples/OpenAPIPinnedClient",
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"]),
        // Runs the x509-limbo conformance suite through the public evaluation API.
        .executableTarget(name: "limbo-harness", dependencies: ["TrustEvaluator"]),
        // The generator of Sources/TrustEvaluatorCore/Generated/BundledRootPrograms.swift
        // (scripts/generate-root-programs.sh): a maintainers' tool, not part of the command.
        .executableTarget(name: "pincheck-generate-root-programs", dependencies: ["TrustEvaluatorCore", "TrustEvaluatorFormats"]),
        // Fuzzing: the targets' logic (replayed by the tests) and one libFuzzer executable per target,
        // built by scripts/fuzz.sh with -DFUZZING -sanitize=fuzzer,address (empty executables otherwise).
        .target(name: "PincheckFuzzing", dependencies: ["TrustEvaluator", "TrustEvaluatorCore", "ServerTrust", "PincheckOpenSSL"]),
        .executableTarget(name: "FuzzCertificate", dependencies: ["PincheckFuzzing"]),
        .executableTarget(name: "FuzzChain", dependencies: ["PincheckFuzzing"]),
        .executableTarget(name: "FuzzConfiguration", dependencies: ["PincheckFuzzing"]),
        .executableTarget(name: "FuzzRevocation", dependencies: ["PincheckFuzzing"]),
        .executableTarget(name: "FuzzChallenge", dependencies: ["PincheckFuzzing"]),
        .executableTarget(name: "FuzzTransparency", dependencies: ["PincheckFuzzing"]),
        // 100,000 evaluations of every kind; resident memory must stay flat (scripts/test.sh).
        .executableTarget(name: "pincheck-soak", dependencies: ["PincheckFuzzing"]),
        // The benchmark (scripts/bench.sh, release): Pincheck against OpenSSL called directly from C.
        .target(name: "PincheckBenchBaseline", linkerSettings: [.linkedLibrary("crypto")]),
        .executableTarget(name: "pincheck-bench", dependencies: ["TrustEvaluator", "PincheckOpenSSL", "PincheckBenchBaseline"]),
        // Full TLS handshakes: NIOSSL's own verification against Pincheck's callback (scripts/bench.sh).
        .executableTarget(
            name: "pincheck-handshake-bench",
            dependencies: [
                "TrustEvaluator", "ServerTrust", "TrustEvaluatorNIO",
            ] + nio),
        // Pincheck inside the stacks against the same stacks without it: AsyncHTTPClient, mTLS (scripts/bench.sh).
        .executableTarget(
            name: "pincheck-stack-bench",
            dependencies: [
                "TrustEvaluator", "TrustEvaluatorNIO", "PincheckAsyncHTTPClient",
                // The SPIFFE client certificate of the trust-domain rows (made with the openssl command).
                "PincheckTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ] + nio),
        // The HTTPS client with a client certificate that the framework servers' mTLS tests share.
        .target(
            name: "PincheckMTLSTestSupport",
            dependencies: [
                "PincheckTestSupport", "ServerTrust", "TrustEvaluator", "TrustEvaluatorNIO",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Vapor", "Hummingbird"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/MTLSSupport"),
        // Loopback servers (openssl s_server, raw sockets), the committed test PKI (Fixtures, EmbeddedPKI) and helpers the test targets share.
        .target(
            name: "PincheckTestSupport",
            dependencies: ["TrustEvaluator", "TrustEvaluatorCore", "TrustEvaluatorFormats", "PincheckOpenSSL", "ServerTrust", .product(name: "Logging", package: "swift-log")],
            path: "Tests/Support"),
        // One test target per module it tests.
        .testTarget(
            name: "TrustEvaluatorCoreTests", dependencies: ["TrustEvaluatorCore", "TrustEvaluatorFormats", "TrustEvaluator", "PincheckOpenSSL", "ServerTrust", "PincheckTestSupport"],
            exclude: ["StrictWebPKIVectors.json"]),
        .testTarget(
            name: "TrustEvaluatorFormatsTests", dependencies: ["TrustEvaluatorFormats", "TrustEvaluatorCore", "PincheckOpenSSL", "PincheckTestSupport"],
            exclude: ["Importers"]),
        // The C room alone: OpenSSL's facts and errors as PincheckOpenSSL returns them, and its lock.
        .testTarget(name: "PincheckOpenSSLTests", dependencies: ["PincheckOpenSSL"]),
        .testTarget(name: "PincheckTLSTests", dependencies: ["PincheckTLS", "TrustEvaluatorCore", "TrustEvaluatorFormats", "PincheckTestSupport"]),
        .testTarget(name: "PincheckFuzzingTests", dependencies: ["PincheckFuzzing"]),
        .testTarget(
            name: "ServerTrustTests",
            dependencies: ["TrustEvaluatorCore", "TrustEvaluatorFormats", 
                "PincheckTestSupport",
                .product(name: "Logging", package: "swift-log"),
                "ServerTrust",
                "ServerTrustFoundation",
                "TrustEvaluator",
            ] + nio
        ),
        .testTarget(
            name: "TrustEvaluatorNIOTests",
            dependencies: ["TrustEvaluatorCore", "TrustEvaluatorFormats", 
                "PincheckTestSupport",
                "TrustEvaluatorNIO",
                "TrustEvaluator",
                "ServerTrust",
                "PincheckTLS",
            ] + nio
        ),
        .testTarget(
            name: "TrustEvaluatorGRPCTests",
            dependencies: [
                "TrustEvaluatorGRPC", "TrustEvaluatorNIO", "TrustEvaluator", "ServerTrust", "PincheckTestSupport", "PincheckTLS",
            ] + grpc + nio
        ),
        // Runs the example programs (built with the package) against loopback servers.
        .testTarget(name: "ExampleTests", dependencies: ["PincheckTestSupport", "TrustEvaluator"]),
        .testTarget(
            name: "PincheckAsyncHTTPClientTests",
            dependencies: [
                "PincheckAsyncHTTPClient", "TrustEvaluator", "TrustEvaluatorNIO", "PincheckTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ] + nio),
        .testTarget(
            name: "PincheckVaporTests",
            dependencies: [
                "PincheckMTLSTestSupport",
                "PincheckVapor", "PincheckAsyncHTTPClient", "TrustEvaluator", "TrustEvaluatorNIO", "ServerTrust", "PincheckTestSupport",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Vapor"])),
            ] + nio),
        .testTarget(
            name: "PincheckHummingbirdTests",
            dependencies: [
                "PincheckMTLSTestSupport",
                "PincheckHummingbird", "TrustEvaluator", "TrustEvaluatorNIO", "ServerTrust", "PincheckTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Hummingbird"])),
            ] + nio),
        // The Swift snippets of the README, docs/ and the DocC guides, compiled as written
        // (generated by scripts/snippets.py; the trait products' guides under their trait).
        .testTarget(
            name: "SnippetTests",
            dependencies: [
                "TrustEvaluator", "TrustEvaluatorNIO", "TrustEvaluatorGRPC", "ServerTrust", "ServerTrustFoundation",
                "PincheckAsyncHTTPClient", "PincheckVapor", "PincheckHummingbird",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
            ] + nio + grpc),
        .testTarget(name: "PincheckCLITests", dependencies: ["TrustEvaluatorCore", "TrustEvaluatorFormats", "PincheckCLI", "TrustEvaluator", "ServerTrust", "PincheckTLS", "PincheckOpenSSL", "pincheck", "pincheck-watch", "PincheckTestSupport"]),
    ]
)

// Runs of scripts/test.sh that repeat the suites build only the targets those runs need
// (PINCHECK_TARGET_SUBSET): =engine for AddressSanitizer and =nio for ThreadSanitizer (the
// examples, the benchmarks, gRPC and the command are not rebuilt twice more with instrumentation),
// =second-leg for the Debian 13 leg (everything but the stacks that reach OpenSSL only through
// NIOSSL and the NIO verifier that leg tests: gRPC, AsyncHTTPClient and what is built on it). Unset, the package is the whole package; users never set it.
let engineSubset: Set<String> = [
    "COpenSSL", "PincheckOpenSSL", "TrustEvaluatorCore", "TrustEvaluatorFormats", "TrustEvaluator", "PincheckTLS",
    "ServerTrust", "PincheckFuzzing", "PincheckTestSupport", "TrustEvaluatorCoreTests", "TrustEvaluatorFormatsTests", "PincheckTLSTests",
    "PincheckFuzzingTests", "PincheckOpenSSLTests",
]
let nioSubset = engineSubset.union([
    "ServerTrustFoundation", "ServerTrustTests", "TrustEvaluatorNIO", "TrustEvaluatorNIOTests",
])
let stackTargets: Set<String> = [
    "TrustEvaluatorGRPC", "TrustEvaluatorGRPCTests", "grpc-pinned-client",
    "PincheckAsyncHTTPClient", "PincheckAsyncHTTPClientTests", "ahc-pinned-client", "openapi-pinned-client",
    "PincheckVapor", "PincheckVaporTests", "vapor-mtls-server", "vapor-pinned-client",
    "PincheckHummingbird", "PincheckHummingbirdTests", "hummingbird-mtls-server",
    "PincheckMTLSTestSupport", "pincheck-stack-bench", "SnippetTests",
]
let secondLegSubset = Set(package.targets.map(\.name)).subtracting(stackTargets)
if let subset = Context.environment["PINCHECK_TARGET_SUBSET"].flatMap({ ["engine": engineSubset, "nio": nioSubset, "second-leg": secondLegSubset][$0] }) {
    package.targets = package.targets.filter { subset.contains($0.name) }
    package.products = package.products.filter { subset.contains($0.name) }
}
