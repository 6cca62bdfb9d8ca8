#if FUZZING
/// libFuzzer's entry point for a driver that owns `main` (SwiftPM links executables with
/// `--defsym main=<Target>_main`, so `LLVMFuzzerTestOneInput` alone does not link).
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: FuzzCallback) -> CInt

/// Runs libFuzzer with the process's arguments and one target. Only linked in fuzz builds.
public func runFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ callback: FuzzCallback) -> CInt {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, callback)
}
#endif
