#if FUZZING
/// libFuzzer's entry point for a driver that owns `main` (SwiftPM links executables with
/// `--defsym main=<Target>_main`, so `LLVMFuzzerTestOneInput` alone does not link).
public typealias FuzzArguments = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target of this fuzz binary, set once by its `main` before libFuzzer starts.
nonisolated(unsafe) private var fuzzTarget: (([UInt8]) -> Void)?

/// libFuzzer's per-input entry (its runtime references the symbol): the binary's target, on one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzTarget?(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// Runs libFuzzer with the process's arguments over one target (a function of ``FuzzTargets``).
/// Only linked in fuzz builds; each Fuzz* executable's `main` is this one call.
public func runFuzzer(_ argc: CInt, _ argv: FuzzArguments, target: @escaping ([UInt8]) -> Void) -> CInt {
    fuzzTarget = target
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, fuzzOne)
}
#endif
